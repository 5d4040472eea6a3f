/**
 * How large the V8 heaps of the engine's worker threads may grow, from the memory the process may
 * use (`availableMemory`: the machine's, or the container's limit when lower).
 *
 * Every worker thread is an isolate of its own, and V8 sizes each from the machine, not from the
 * cgroup: on a 24 GiB machine every isolate may keep young generations of 32-48 MiB and grows its
 * old generation freely before it collects. Inside a 512 MiB container the intake, write and
 * search threads' heaps alone then filled the limit during a 200k build, and the process was
 * killed (bench/README.md, "Memory in a container"). Memory V8 took stays resident after it is
 * collected, so each thread's peak becomes the process's lasting footprint.
 *
 * Under a limit below AMPLE_MEMORY, worker threads get `resourceLimits`: a small young generation
 * (more, cheaper scavenges instead of tens of MiB of slack per thread) and an old generation
 * bounded by a share of the memory, which also makes V8 grow the heap less eagerly. Above it
 * nothing changes: V8's defaults are the fastest and the machine has room for them. The main
 * thread's heap is sized by node before this code runs (only `NODE_OPTIONS` could change it).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ResourceLimits } from 'node:worker_threads';
import { availableMemory } from './tasks/batch-budget.js';

const MIB = 1024 * 1024;

/** From this much memory up, V8's own sizing is kept. */
export const AMPLE_MEMORY = 4096 * MIB;

export type ThreadRole = 'write' | 'intake' | 'search' | 'extract' | 'other';

/**
 * The share of the memory a thread's old generation may reach. The write thread holds a batch
 * (its documents and deltas, and a slice of merged values at a time: 100-200 MiB at 20,000
 * documents); the others hold a payload being parsed or a search's working set. The shares add
 * up to more than the whole: they are ceilings that keep a thread from growing without need, not
 * a partition.
 */
const OLD_GENERATION_SHARE: Record<ThreadRole, number> = { write: 0.5, intake: 0.25, search: 0.25, extract: 0.25, other: 0.25 };

/** Young generation: 1/32 of the memory, between 8 and 32 MiB (16 MiB at 512 MiB). */
const YOUNG_GENERATION_DIVISOR = 32;
const MIN_YOUNG_MB = 8;
const MAX_YOUNG_MB = 32;
/** An old generation never below this: the code and the engine's own state need it. */
const MIN_OLD_MB = 96;

/** `resourceLimits` for a worker thread of `role`, or undefined when the memory is ample (V8's defaults). */
export function workerHeapLimits(role: ThreadRole, memory = availableMemory()): ResourceLimits | undefined {
  if (memory >= AMPLE_MEMORY) return undefined;
  const mib = memory / MIB;
  return {
    maxYoungGenerationSizeMb: Math.min(MAX_YOUNG_MB, Math.max(MIN_YOUNG_MB, Math.round(mib / YOUNG_GENERATION_DIVISOR))),
    maxOldGenerationSizeMb: Math.max(MIN_OLD_MB, Math.floor(mib * OLD_GENERATION_SHARE[role])),
  };
}

let fullCollection: (() => void) | undefined;

/**
 * A full garbage collection now, under a limit below AMPLE_MEMORY (returns whether it ran). For
 * threads that just finished a unit of work (a batch, a payload): what it left is garbage, and
 * V8 would collect it only once the next unit has allocated on top of it (buffers count little
 * towards V8's collection triggers), so the thread's peak would be two units' worth. A collection
 * with little alive costs 10-60 ms, against seconds for a batch.
 */
export function collectAfterWork(memory = availableMemory()): boolean {
  if (memory >= AMPLE_MEMORY) return false;
  if (!fullCollection) {
    // `gc` is exposed to contexts created after the flag is set
    setFlagsFromString('--expose-gc');
    fullCollection = runInNewContext('gc') as () => void;
  }
  fullCollection();
  return true;
}
