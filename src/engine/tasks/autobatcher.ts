/**
 * Choose the next batch from the enqueued tasks.
 *
 * Priorities, as in the reference: a database upgrade first, then task cancelations, task
 * deletions, exports, snapshots and dumps, then index work in uid order. Index work is batched per index:
 * starting at the oldest enqueued task, the following enqueued tasks of the same index join the
 * batch while they are of a compatible kind (document writes and deletions together; settings
 * together); the first incompatible task of that index closes the batch, so per-index order holds.
 */
import type { TaskRecord, TaskStore } from './store.js';
import type { TaskType } from '../types.js';
import type { SearchError } from '../errors.js';

export type BatchKind = 'upgrade' | 'cancelation' | 'deletion' | 'operation' | 'documents' | 'settings' | 'indexLifecycle';

export interface PlannedBatch {
  kind: BatchKind;
  tasks: TaskRecord[];
  reason: string;
  /** Fail the tasks with this error instead of processing them (see crash-guard.ts). */
  failWith?: SearchError;
}

const MAX_TASKS_PER_BATCH = 1000;

function batchKindOf(type: TaskType): BatchKind {
  switch (type) {
    case 'upgradeDatabase':
      return 'upgrade';
    case 'taskCancelation':
      return 'cancelation';
    case 'taskDeletion':
      return 'deletion';
    case 'dumpCreation':
    case 'snapshotCreation':
    case 'dsrUpdate':
    case 'dsrClear':
    case 'export':
      return 'operation';
    case 'documentAdditionOrUpdate':
    case 'documentDeletion':
    case 'documentEdition':
      return 'documents';
    case 'settingsUpdate':
      return 'settings';
    default:
      return 'indexLifecycle';
  }
}

/** Task types of each priority kind, in the order they are served. */
const PRIORITY_TYPES: ReadonlyArray<[BatchKind, TaskType[]]> = [
  ['upgrade', ['upgradeDatabase']],
  ['cancelation', ['taskCancelation']],
  ['deletion', ['taskDeletion']],
  ['operation', ['export', 'dumpCreation', 'snapshotCreation', 'dsrUpdate', 'dsrClear']],
];

/**
 * Reads only what the batch holds: the priority kinds and the oldest task's index come from the
 * status, type and index bitmaps, so the cost does not grow with the backlog.
 */
export function planNextBatch(store: TaskStore, maxPayloadBytes: number, sizeOf: (task: TaskRecord) => number): PlannedBatch | null {
  const enqueued = store.uidsWithStatus('enqueued');
  if (enqueued.isEmpty) return null;
  const priority = planPriority(store);
  if (priority) return priority;

  const first = store.get(enqueued.minimum())!;
  const kind = batchKindOf(first.type);
  // an edition by function runs alone, as in the reference: its filter sees every earlier write
  if (kind === 'indexLifecycle' || first.indexUid === null || first.type === 'documentEdition') return { kind, tasks: [first], reason: `${first.type} is processed alone` };

  const batch = [first];
  let bytes = sizeOf(first);
  for (const uid of store.enqueuedOnIndex(first.indexUid)) {
    if (uid <= first.uid) continue;
    const task = store.get(uid);
    if (!task) continue;
    if (batchKindOf(task.type) !== kind || task.type === 'documentEdition') break;
    if (batch.length >= MAX_TASKS_PER_BATCH) break;
    const size = sizeOf(task);
    if (bytes + size > maxPayloadBytes) break;
    batch.push(task);
    bytes += size;
  }
  const reason =
    batch.length === 1
      ? `a single ${first.type} task`
      : `batched ${batch.length} consecutive ${kind} tasks of index \`${first.indexUid}\``;
  return { kind, tasks: batch, reason };
}

/** An upgrade, cancelations, deletions or one dump or snapshot, before any index work. */
function planPriority(store: TaskStore): PlannedBatch | null {
  for (const [kind, types] of PRIORITY_TYPES) {
    const uids = store.enqueuedOfType(types);
    if (uids.isEmpty) continue;
    if (kind === 'cancelation' || kind === 'deletion') {
      const tasks = uids.toArray().flatMap((uid) => store.get(uid) ?? []);
      return { kind, tasks, reason: kind === 'cancelation' ? 'task cancelations are processed first' : 'task deletions are processed before index work' };
    }
    const task = store.get(uids.minimum())!;
    const reason = kind === 'upgrade' ? 'a database upgrade is processed before any other task' : `${task.type} is processed alone`;
    return { kind, tasks: [task], reason };
  }
  return null;
}
