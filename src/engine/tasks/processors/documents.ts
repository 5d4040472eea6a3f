/**
 * Document writes and deletions of one index, in one write transaction per segment.
 *
 * A segment is a run of tasks applied together; a deletion by filter starts a new segment so
 * that its filter sees the documents written by the tasks before it. When a batch fails on a
 * per-document rule that only extensions check (geo, vectors), each task is retried alone so
 * that one bad task does not fail its neighbours.
 */
import { preciseNow } from '../../wire/timestamp.js';
import { isDeepStrictEqual } from 'node:util';
import { compileEditFunction, editDocument } from '../../edit-function/edition.js';
import { SearchError, toSearchError } from '../../errors.js';
import { emptyDocumentFilter, parseFilter } from '../../search/filter/parser.js';
import type { Index } from '../../index/index.js';
import { ChangeSet, prepareExtensions, RoaringBitmap32 } from '../../index/pipeline.js';
import { readUpdateFile } from '../../index/payload.js';
import type { Document } from '../../types.js';
import { holdInsideWriteTransaction } from '../fault-injection.js';
import { BatchAborted, throwIfAborted, type BatchContext, type Processor, type TaskOutcome } from '../processing.js';
import type { TaskPayload } from '../payload.js';
import type { TaskRecord } from '../store.js';

interface StoredOutcomes {
  maxUid: number;
  outcomes: Array<{ uid: number; status: TaskOutcome['status']; details: Record<string, unknown> | null; error?: ReturnType<SearchError['toJSON']> }>;
}

export const processDocuments: Processor = async (ctx) => {
  const { index, refused, tasks } = openOrCreateIndex(ctx);
  const notFound = new SearchError('index_not_found', `Index \`${ctx.tasks[0]!.indexUid}\` not found.`);
  const outcomes: TaskOutcome[] = refused.map((task) => failed(task, notFound));
  for (const segment of segments(tasks)) outcomes.push(...(await processSegmentWithFallback(ctx, index, segment)));
  return outcomes;
};

/**
 * Document additions create their missing index on first use, when their key could create
 * indexes (`allowIndexCreation`). The tasks before the first such addition (deletions, additions
 * by a key without `indexes.create`) find no index and fail; the others run on the new index.
 */
function openOrCreateIndex(ctx: BatchContext): { index: Index | null; refused: TaskRecord[]; tasks: TaskRecord[] } {
  const uid = ctx.tasks[0]!.indexUid!;
  if (ctx.registry.exists(uid)) return { index: ctx.registry.get(uid), refused: [], tasks: ctx.tasks };
  const creator = ctx.tasks.findIndex((t) => t.payload.kind === 'documents' && t.payload.allowIndexCreation !== false);
  if (creator < 0) return { index: null, refused: [], tasks: ctx.tasks };
  const index = ctx.registry.create(uid, null, ctx.startedAt.toISOString());
  return { index, refused: ctx.tasks.slice(0, creator), tasks: ctx.tasks.slice(creator) };
}

function segments(tasks: TaskRecord[]): TaskRecord[][] {
  const out: TaskRecord[][] = [];
  let current: TaskRecord[] = [];
  for (const task of tasks) {
    if ((task.payload.kind === 'deleteFilter' || task.payload.kind === 'editDocuments') && current.length > 0) {
      out.push(current);
      current = [];
    }
    current.push(task);
  }
  if (current.length > 0) out.push(current);
  return out;
}

async function processSegmentWithFallback(ctx: BatchContext, index: Index | null, tasks: TaskRecord[]): Promise<TaskOutcome[]> {
  try {
    return await processSegment(ctx, index, tasks);
  } catch (error) {
    if (error instanceof BatchAborted) throw error;
    const searchError = toSearchError(error);
    if (tasks.length > 1 && searchError.type === 'invalid_request') {
      const outcomes: TaskOutcome[] = [];
      for (const task of tasks) outcomes.push(...(await processSegmentWithFallback(ctx, index, [task])));
      return outcomes;
    }
    return tasks.map((task) => failed(task, searchError));
  }
}

async function processSegment(ctx: BatchContext, index: Index | null, tasks: TaskRecord[]): Promise<TaskOutcome[]> {
  if (!index) {
    const error = new SearchError('index_not_found', `Index \`${tasks[0]!.indexUid}\` not found.`);
    return tasks.map((task) => failed(task, error));
  }
  const store = index.store;
  const maxUid = Math.max(...tasks.map((t) => t.uid));
  const replayed = replayedOutcomes(index, maxUid);
  if (replayed) return replayed;

  return writeSegment(ctx, index, tasks, maxUid);
}

async function writeSegment(ctx: BatchContext, index: Index, tasks: TaskRecord[], maxUid: number): Promise<TaskOutcome[]> {
  const store = index.store;
  const changes = new ChangeSet(store);
  const outcomes: TaskOutcome[] = [];
  for (const task of tasks) {
    throwIfAborted(ctx.signal);
    try {
      outcomes.push(await applyTask(index, changes, task, ctx));
    } catch (error) {
      outcomes.push(failed(task, toSearchError(error)));
    }
  }
  ctx.progress('extracting');
  const settings = index.settings;
  const changeList = changes.list();
  const prepared = await prepareExtensions(index.extensions, changeList, settings, store);
  throwIfAborted(ctx.signal);
  ctx.progress('writing');
  store.write(() => {
    changes.commit(index.extensions, settings, prepared);
    store.touch(preciseNow());
    store.setLastTaskUid(maxUid);
    const stored: StoredOutcomes = {
      maxUid,
      outcomes: outcomes.map((o) => ({ uid: o.uid, status: o.status, details: o.details, error: o.error?.toJSON() })),
    };
    store.main.putSync('lastOutcomes', stored);
    holdInsideWriteTransaction();
  });
  return outcomes;
}

/** After a crash between the index commit and the task commit, reuse what was recorded. */
function replayedOutcomes(index: Index, maxUid: number): TaskOutcome[] | null {
  if (index.store.lastTaskUid < maxUid) return null;
  const stored = index.store.main.get('lastOutcomes') as StoredOutcomes | undefined;
  if (!stored || stored.maxUid !== maxUid) return null;
  return stored.outcomes.map((o) => ({
    uid: o.uid,
    status: o.status,
    details: o.details,
    error: o.error ? new SearchError(o.error.code, o.error.message) : undefined,
  }));
}

async function applyTask(index: Index, changes: ChangeSet, task: TaskRecord, ctx: BatchContext): Promise<TaskOutcome> {
  const payload = task.payload;
  switch (payload.kind) {
    case 'documents': {
      const documents: Document[] = [];
      for await (const doc of readUpdateFile(ctx.updateFilePath(payload.updateFile))) documents.push(doc);
      const indexed = changes.addDocuments(documents, payload.method, payload.primaryKey, { skipCreation: payload.skipCreation ?? false });
      return { uid: task.uid, status: 'succeeded', details: { receivedDocuments: payload.count, indexedDocuments: indexed } };
    }
    case 'deleteIds': {
      const deleted = changes.deleteExternalIds(payload.ids);
      return { uid: task.uid, status: 'succeeded', details: { providedIds: payload.ids.length, deletedDocuments: deleted } };
    }
    case 'deleteFilter': {
      // an empty filter is refused when enqueued; one from elsewhere (an old queue, a dump) must
      // never read as "delete everything"
      if (parseFilter(payload.filter, 'invalid_document_filter') === null) throw emptyDocumentFilter();
      const docids = index.filterDocids(payload.filter, 'invalid_document_filter');
      const deleted = changes.deleteDocids(docids.toArray());
      return { uid: task.uid, status: 'succeeded', details: { providedIds: 0, originalFilter: JSON.stringify(payload.filter), deletedDocuments: deleted } };
    }
    case 'editDocuments':
      return editDocuments(index, changes, task, payload, ctx);
    case 'clearDocuments': {
      const deleted = changes.deleteDocids(changes.liveDocids().toArray());
      return { uid: task.uid, status: 'succeeded', details: { deletedDocuments: deleted } };
    }
    default:
      throw new SearchError('invalid_state', `Task ${task.uid} of type ${task.type} reached the documents processor.`);
  }
}

/** Run the task's function on every live document (or those its filter matches); a failure fails the task. */
function editDocuments(
  index: Index,
  changes: ChangeSet,
  task: TaskRecord,
  payload: Extract<TaskPayload, { kind: 'editDocuments' }>,
  ctx: BatchContext,
): TaskOutcome {
  const program = compileEditFunction(payload.function);
  const live = changes.liveDocids();
  const docids = payload.filter === null ? live : RoaringBitmap32.and(live, index.filterDocids(payload.filter, 'invalid_document_filter'));
  // every document is edited before any change is recorded: a function failing on one fails the task whole
  const edits: Array<[number, Document | undefined]> = [];
  let seen = 0;
  for (const docid of docids) {
    if (++seen % 256 === 0) throwIfAborted(ctx.signal);
    const before = changes.document(docid);
    if (!before) continue;
    const after = editDocument(program, before, payload.context, changes.primaryKey);
    if (after === null) edits.push([docid, undefined]);
    else if (!isDeepStrictEqual(after, before)) edits.push([docid, after]);
  }
  for (const [docid, after] of edits) changes.replaceDocument(docid, after);
  const deleted = edits.filter(([, after]) => after === undefined).length;
  const edited = edits.length - deleted;
  return { uid: task.uid, status: 'succeeded', details: { ...task.details, editedDocuments: edited, deletedDocuments: deleted } };
}

function failed(task: TaskRecord, error: SearchError): TaskOutcome {
  return { uid: task.uid, status: 'failed', details: failedDetails(task), error };
}

/** Details of a failed task keep what was received and report nothing applied. */
export function failedDetails(task: TaskRecord): Record<string, unknown> | null {
  const details = { ...(task.details ?? {}) };
  for (const key of ['indexedDocuments', 'editedDocuments', 'deletedDocuments', 'deletedTasks', 'canceledTasks']) if (key in details) details[key] = 0;
  return details;
}
