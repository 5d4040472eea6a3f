/**
 * Indexing yields the CPU to searches: the threads that write (the write thread or process, the
 * intake thread that parses payloads, the task queue's compaction) run at a lower scheduling
 * priority than the threads that answer.
 *
 * Why: on a machine with as many busy threads as cores, the kernel shares the cores evenly, so a
 * search waited behind payload parsing and batch extraction for its slice. Served A (a search
 * every 10 ms on one index while the movies were added to another, 2 cores, 3 runs each): p99
 * 33-48 ms and max 85-122 ms at equal priority, p99 27-30 ms and max 49-54 ms with the write
 * side 10 steps lower, at the same indexing rate. Under a search load that keeps every core busy
 * (C while indexing), indexing went from 0.63x to 0.43x of its idle rate while searches kept
 * 0.96x of theirs instead of 0.73x (bench/README.md, "Indexing yields to searches").
 *
 * Linux keeps a nice value per thread, which a thread inherits from the one that starts it: the
 * write thread's extraction and graph-building helpers follow it. Elsewhere `setpriority` on the
 * calling thread would lower the whole process, searches included, so nothing changes there.
 *
 * `SEARCH_INDEXING_NICE`: how many steps lower (0-19; 0 leaves every thread equal; default 10).
 * The steps are added to the priority the server was started with, never subtracted (lowering
 * needs no privilege; raising back would).
 */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

export const INDEXING_NICE_ENV = 'SEARCH_INDEXING_NICE';
export const DEFAULT_INDEXING_NICE = 10;
/** The lowest priority Linux has. */
const LOWEST = 19;

/** The steps from `SEARCH_INDEXING_NICE` (see above); a value that is not an integer from 0 to 19 is refused. */
export function indexingNice(setting = process.env[INDEXING_NICE_ENV]): number {
  const text = setting?.trim();
  if (text === undefined || text === '') return DEFAULT_INDEXING_NICE;
  const steps = Number(text);
  if (!Number.isInteger(steps) || steps < 0 || steps > LOWEST)
    throw new Error(`\`${INDEXING_NICE_ENV}\` must be an integer from 0 to ${LOWEST}, not \`${setting}\`.`);
  return steps;
}

/** Whether this platform keeps priorities per thread (see above). */
const perThread = process.platform === 'linux';

/** Lower the calling thread (and the threads it starts after this) by the indexing steps. */
export function lowerThisThread(): void {
  if (perThread) lower(0);
}

/**
 * Lower every thread of this process: a write process whose V8 and libuv threads started before
 * its code ran, and which answers no search.
 */
export function lowerThisProcess(): void {
  if (!perThread) return;
  let tids: number[];
  try {
    tids = readdirSync('/proc/self/task').map(Number);
  } catch {
    tids = [0];
  }
  for (const tid of tids) lower(tid);
}

function lower(tid: number): void {
  let steps: number;
  try {
    steps = indexingNice();
  } catch {
    // refused at the engine's start (Engine.open); a thread started anyway keeps the default
    steps = DEFAULT_INDEXING_NICE;
  }
  if (steps === 0) return;
  try {
    const current = getPriority(tid);
    setPriority(tid, Math.min(LOWEST, current + steps));
  } catch {
    // a thread that ended meanwhile, or a sandbox that forbids it: indexing then runs as before
  }
}
