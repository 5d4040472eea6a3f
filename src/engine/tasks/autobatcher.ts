/**
 * Choose the next batch from the enqueued tasks.
 *
 * Priorities, as in the reference: a database upgrade first, then task cancelations, task
 * deletions, snapshots and dumps, then index work in uid order. Index work is batched per index:
 * starting at the oldest enqueued task, the following enqueued tasks of the same index join the
 * batch while they are of a compatible kind (document writes and deletions together; settings
 * together); the first incompatible task of that index closes the batch, so per-index order holds.
 */
import type { TaskRecord, TaskStore } from './store.js';
import type { TaskType } from '../types.js';

export type BatchKind = 'upgrade' | 'cancelation' | 'deletion' | 'operation' | 'documents' | 'settings' | 'indexLifecycle';

export interface PlannedBatch {
  kind: BatchKind;
  tasks: TaskRecord[];
  reason: string;
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

export function planNextBatch(store: TaskStore, maxPayloadBytes: number, sizeOf: (task: TaskRecord) => number): PlannedBatch | null {
  const enqueued = store.uidsWithStatus('enqueued');
  if (enqueued.isEmpty) return null;
  const tasks: TaskRecord[] = [];
  for (const uid of enqueued) {
    const task = store.get(uid);
    if (task) tasks.push(task);
  }
  const byKind = (kind: BatchKind) => tasks.filter((t) => batchKindOf(t.type) === kind);

  const upgrade = byKind('upgrade');
  if (upgrade.length > 0) return { kind: 'upgrade', tasks: [upgrade[0]!], reason: 'a database upgrade is processed before any other task' };
  const cancelations = byKind('cancelation');
  if (cancelations.length > 0) return { kind: 'cancelation', tasks: cancelations, reason: 'task cancelations are processed first' };
  const deletions = byKind('deletion');
  if (deletions.length > 0) return { kind: 'deletion', tasks: deletions, reason: 'task deletions are processed before index work' };
  const operations = byKind('operation');
  if (operations.length > 0) return { kind: 'operation', tasks: [operations[0]!], reason: `${operations[0]!.type} is processed alone` };

  const first = tasks[0]!;
  const kind = batchKindOf(first.type);
  // an edition by function runs alone, as in the reference: its filter sees every earlier write
  if (kind === 'indexLifecycle' || first.type === 'documentEdition') return { kind, tasks: [first], reason: `${first.type} is processed alone` };

  const batch = [first];
  let bytes = sizeOf(first);
  for (const task of tasks.slice(1)) {
    if (task.indexUid !== first.indexUid) continue;
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
