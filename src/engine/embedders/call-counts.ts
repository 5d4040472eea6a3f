/**
 * Calls to embedders (`embed`, one per batch of texts) and their failures, counted per source
 * for `/metrics`. Embedding happens on the write side (documents; a thread or a process) and on search threads
 * (queries), while metrics are read on the serving thread: each worker thread keeps what it has
 * not reported yet and ships it to the serving thread, which adds it to its own totals.
 */
import { isMainThread } from 'node:worker_threads';

export type EmbedderCallCounts = Record<string, { calls: number; failures: number }>;

const totals: EmbedderCallCounts = {};
let unreported: EmbedderCallCounts = {};
/** Whether this thread ships its counts to a serving thread: worker threads do, and so does a write process. */
let reports = !isMainThread;

/** In the write side's process (tasks/write-host.ts): keep counts for the serving process, as a worker thread does. */
export function reportEmbedderCallsToParent(): void {
  reports = true;
}

function add(into: EmbedderCallCounts, source: string, calls: number, failures: number): void {
  const entry = (into[source] ??= { calls: 0, failures: 0 });
  entry.calls += calls;
  entry.failures += failures;
}

export function countEmbedderCall(source: string, failed: boolean): void {
  add(totals, source, 1, failed ? 1 : 0);
  if (reports) add(unreported, source, 1, failed ? 1 : 0);
}

/** In a worker thread: the counts since the last call, to post to the serving thread (null: none). */
export function takeUnreportedEmbedderCalls(): EmbedderCallCounts | null {
  if (Object.keys(unreported).length === 0) return null;
  const taken = unreported;
  unreported = {};
  return taken;
}

/** On the serving thread: counts reported by a worker thread. */
export function addEmbedderCalls(counts: EmbedderCallCounts): void {
  for (const [source, { calls, failures }] of Object.entries(counts)) add(totals, source, calls, failures);
}

/** Every call counted in this thread or reported to it, per source. */
export function embedderCallTotals(): Readonly<EmbedderCallCounts> {
  return totals;
}
