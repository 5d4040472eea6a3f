/**
 * Batches that took the write side down with them.
 *
 * When the write side dies in the middle of a batch (the kernel's OOM killer inside a container,
 * V8's heap limit, a native fault), the next one puts the batch's tasks back in the queue and
 * would plan the same batch again, and die again: a crash loop that keeps every later task
 * waiting. So the serving side counts, per task, the write sides that died while it was being
 * processed (write-thread.ts), and hands the counts to each new write side, whose scheduler
 * plans around them here: a task that was in such a batch is processed alone (the batch may have
 * died of its size: autobatching had joined several payloads), and a task that has taken
 * MAX_CRASHES write sides down is failed without being processed again, with an error that says
 * what happened and what to do, so that the queue goes on.
 *
 * The counts live in the serving process's memory only: a restart of the whole server starts
 * them afresh, which is one more try for the task.
 */
import { SearchError } from '../errors.js';
import type { PlannedBatch } from './autobatcher.js';

/** After this many write sides died processing a task, the task is failed. */
export const MAX_CRASHES = 3;

/** Task uid -> how many write sides died while it was being processed. */
export type CrashCounts = ReadonlyMap<number, number>;

/** The batch to run given the crash counts: shortened to run a crashed task alone, or failed. */
export function guardBatch(planned: PlannedBatch, crashes: CrashCounts): PlannedBatch {
  if (crashes.size === 0) return planned;
  const index = planned.tasks.findIndex((task) => (crashes.get(task.uid) ?? 0) > 0);
  if (index < 0) return planned;
  // the tasks before it run as they were batched; it runs next, alone
  if (index > 0) return { ...planned, tasks: planned.tasks.slice(0, index) };
  const task = planned.tasks[0]!;
  const count = crashes.get(task.uid)!;
  if (count >= MAX_CRASHES) return { ...planned, tasks: [task], reason: `task ${task.uid} ended the write side ${count} times`, failWith: crashedTooOften(count) };
  if (planned.tasks.length === 1) return planned;
  return { ...planned, tasks: [task], reason: `task ${task.uid} was in a batch that ended the write side; processed alone` };
}

function crashedTooOften(count: number): SearchError {
  return new SearchError(
    'internal',
    `The indexer (the server's write thread or process) ended ${count} times while processing this task (most often ` +
      "at the container's memory limit: the kernel kills a process that exceeds it), so it is failed rather than tried again. " +
      'Send the documents in smaller payloads, lower `--max-indexing-memory`, or give the server more memory.',
  );
}
