/**
 * Compaction of the task queue's own environment (`POST /tasks/compact`, behind the
 * `taskQueueCompactionRoute` experimental feature).
 *
 * The reference answers synchronously with the sizes before and after, and asks for a restart:
 * the environment cannot be swapped under the threads that have it mapped. We do the same, with
 * two differences that keep every write safe:
 *
 * - The compacted copy is written beside the database (`tasks-compacted/`), from one read
 *   snapshot of the live queue, in a worker thread (the thread answering HTTP only waits). Writes
 *   go on meanwhile; nothing is blocked.
 * - The copy records the transaction id of the snapshot it was made from. At the next start,
 *   before anything opens the queue, the copy replaces `tasks/data.mdb` (one rename) only if the
 *   queue's last transaction is still that one: a queue written to after the compaction keeps its
 *   own file and the stale copy is dropped, so no task is ever lost to a compaction.
 *
 * Crash safety: the copy is written into `tasks-compacting/` and renamed to
 * `tasks-compacted/` once complete and on disk; a leftover `.tmp` is an interrupted copy and is
 * removed at start. A crash between the swap's rename and the removal of the directory leaves a
 * directory without `data.mdb`, also removed at start.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { fromWireError, SearchError, type WireError } from '../errors.js';
import { startWorker, workerScriptUrl } from '../worker-script.js';
import { copyDatabase, databaseNames } from '../index/compaction.js';
import { holdInsideCompaction } from './fault-injection.js';

/** How every task-queue environment is opened (TaskStore's options: threads must agree). */
export const TASK_ENV_OPTIONS = { maxDbs: 24, compression: false } as const;

/**
 * Key order of each database of the task queue environment (tasks/store.ts and the stores that
 * share its environment): LMDB sorts `uint32` keys as integers, every other key as bytes.
 */
const INTEGER_KEYED = new Set(['tasks', 'batches', 'by-canceled-by', 'batch-tasks', 'webhook-outbox']);
const BYTE_KEYED = new Set([
  'meta',
  'by-status',
  'by-type',
  'by-index',
  'enqueued-at',
  'started-at',
  'finished-at',
  'batch-index',
  'index-mapping',
  'experimental-features',
  'dynamic-search-rules',
  'webhook-cursors',
]);

const PENDING_DIR = 'tasks-compacted';
const STAGING_DIR = 'tasks-compacting';
const SOURCE_FILE = 'source.json';

export interface TaskQueueCompaction {
  /** Bytes of `tasks/data.mdb` when the copy was made. */
  preSize: number;
  /** Bytes of the compacted copy, what `tasks/data.mdb` becomes at the next start. */
  postSize: number;
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function lastTxnId(env: RootDatabase): number {
  return (env.getStats() as { lastTxnId: number }).lastTxnId;
}

/**
 * Write the compacted copy of the task queue at `root` (the database directory) and leave it for
 * the next start. Runs where blocking is harmless (queue-compaction.worker.ts).
 */
export async function writeTaskQueueCopy(root: string): Promise<TaskQueueCompaction> {
  const tasksDir = join(root, 'tasks');
  const staging = join(root, STAGING_DIR);
  const pending = join(root, PENDING_DIR);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  const env = open({ path: tasksDir, ...TASK_ENV_OPTIONS });
  const out = open({ path: staging, ...TASK_ENV_OPTIONS });
  let sourceTxnId: number;
  try {
    // one snapshot: the transaction id read on both sides of taking it is the one it shows
    // (-1 when writes kept landing in between: the copy is then never applied, only measured)
    let txn = env.useReadTransaction();
    sourceTxnId = -1;
    for (let attempt = 0; attempt < 20; attempt++) {
      txn.done();
      env.resetReadTxn();
      const before = lastTxnId(env);
      txn = env.useReadTransaction();
      if (lastTxnId(env) === before) {
        sourceTxnId = before;
        break;
      }
    }
    try {
      for (const name of databaseNames(env)) {
        const integer = INTEGER_KEYED.has(name);
        if (!integer && !BYTE_KEYED.has(name))
          throw new SearchError('internal', `The task queue cannot be compacted: its database \`${name}\` is unknown to this version.`);
        const raw = { name, keyEncoding: integer ? ('uint32' as const) : ('binary' as const), encoding: 'binary' as const };
        const source = env.openDB(raw) as unknown as Database<Buffer, Buffer | number>;
        const copy = out.openDB(raw) as unknown as Database<Buffer, Buffer | number>;
        copyDatabase(source, copy, out, false, 10_000, 16 * 1024 * 1024, txn);
        const expected = (source.getStats() as { entryCount: number }).entryCount;
        const written = (copy.getStats() as { entryCount: number }).entryCount;
        // the source's count is read outside the snapshot: a write since may differ, making the copy stale anyway
        if (expected !== written && sourceTxnId === lastTxnId(env))
          throw new SearchError('internal', `Compaction copied ${written} of the ${expected} entries of \`${name}\`; the task queue is left as it was.`);
        holdInsideCompaction();
      }
    } finally {
      txn.done();
    }
  } finally {
    await out.close();
    await env.close();
  }
  writeFileSync(join(staging, SOURCE_FILE), JSON.stringify({ sourceTxnId }));
  for (const file of ['data.mdb', SOURCE_FILE]) fsyncPath(join(staging, file));
  rmSync(join(staging, 'lock.mdb'), { force: true });
  rmSync(pending, { recursive: true, force: true });
  renameSync(staging, pending);
  fsyncPath(root);
  return { preSize: fileBytes(join(tasksDir, 'data.mdb')), postSize: fileBytes(join(pending, 'data.mdb')) };
}

const SCRIPT = workerScriptUrl(import.meta.url, './queue-compaction.worker.js');

/** One compaction at a time: a second request waits for the first's copy rather than racing it. */
let running: Promise<TaskQueueCompaction> | null = null;

/** Write the compacted copy in a worker thread (the caller's thread answers requests meanwhile). */
export function compactTaskQueue(root: string): Promise<TaskQueueCompaction> {
  const previous = running ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => runInWorker(root));
  running = next;
  void next.finally(() => {
    if (running === next) running = null;
  }).catch(() => undefined);
  return next;
}

function runInWorker(root: string): Promise<TaskQueueCompaction> {
  return new Promise((resolve, reject) => {
    const worker = startWorker(SCRIPT, { workerData: { root } });
    let settled = false;
    worker.once('message', (reply: { result: TaskQueueCompaction } | { error: WireError }) => {
      settled = true;
      if ('error' in reply) reject(fromWireError(reply.error));
      else resolve(reply.result);
    });
    worker.once('error', (error) => {
      if (!settled) reject(new SearchError('internal', `The task queue compaction failed: ${error.message}`));
      settled = true;
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new SearchError('internal', `The task queue compaction thread exited (code ${code}).`));
      settled = true;
    });
  });
}

export type CompactionOutcome = 'none' | 'applied' | 'stale' | 'interrupted';

/**
 * At start, before the task queue is opened (the database lock held): put a compacted copy in
 * place if the queue has not changed since it was made, and clear what a crash left.
 */
export function applyPendingTaskQueueCompaction(root: string): CompactionOutcome {
  const staging = join(root, STAGING_DIR);
  const pending = join(root, PENDING_DIR);
  let outcome: CompactionOutcome = 'none';
  if (existsSync(staging)) {
    rmSync(staging, { recursive: true, force: true });
    outcome = 'interrupted';
  }
  if (!existsSync(pending)) return outcome;
  const copy = join(pending, 'data.mdb');
  const target = join(root, 'tasks', 'data.mdb');
  let recorded: number | null = null;
  try {
    recorded = (JSON.parse(readFileSync(join(pending, SOURCE_FILE), 'utf8')) as { sourceTxnId: number }).sourceTxnId;
  } catch {
    recorded = null;
  }
  outcome = 'stale';
  if (recorded !== null && recorded >= 0 && existsSync(copy) && existsSync(target) && currentTxnId(join(root, 'tasks')) === recorded) {
    renameSync(copy, target);
    fsyncPath(join(root, 'tasks'));
    outcome = 'applied';
  }
  rmSync(pending, { recursive: true, force: true });
  return outcome;
}

/** The last committed transaction of the environment in `dir` (opened and closed again: nothing else has it open yet). */
function currentTxnId(dir: string): number {
  const env = open({ path: dir, ...TASK_ENV_OPTIONS, readOnly: true });
  try {
    return lastTxnId(env);
  } finally {
    // no write was made: the close is immediate
    void env.close();
  }
}
