/**
 * `search serve` runs with process settings that node and glibc read only when a process starts,
 * so the command runs itself again as a child with them and stands in for it: same arguments,
 * same standard streams, signals passed on, the child's exit code or signal as its own. The
 * parent does nothing else (some 7 MiB of anonymous memory).
 *
 * - **Inside a memory limit**, glibc's allocator told to give memory back (GLIBC_TUNABLES). With
 *   glibc's defaults, the write side's native buffers (a batch's extraction tables, LMDB's dirty
 *   pages) come from per-thread arenas and, after the first large free, from a heap whose mmap
 *   threshold has risen to the largest block freed so far: memory freed after a batch stays with
 *   the allocator. Inside a 512 MiB container that killed the 200k build (bench/README.md, "Memory
 *   in a container"); with the setting it completes. When: on Linux with glibc, under a memory
 *   limit below AMPLE_MEMORY, and only when GLIBC_TUNABLES is unset (a deployment that sets it
 *   chooses for itself). SEARCH_MALLOC_TUNING=off never sets it, `on` always does (a limit the
 *   process cannot see), `auto` (the default) follows the limit.
 * - **With ample memory**, V8 young generations that start at their full size
 *   (SERVING_HEAP_OPTIONS). V8 starts every isolate with 1 MiB semi-spaces and grows them only
 *   while objects survive. The serving thread holds each request's objects for the few
 *   milliseconds a search thread takes, so with small semi-spaces they outlived scavenges, were
 *   promoted, and the old generation was marked and compacted several times a second under
 *   load: at 32 connections on `star wars`, 60 full collections in 20 s against none with the
 *   option, and V8's helper threads spent 65 µs per request against 25 (bench/README.md, "The
 *   serving thread's young generation"). The search threads scavenge a third as often. The price
 *   is up to 32 MiB per isolate of young generation, so only at AMPLE_MEMORY and above; a
 *   deployment's own semi-space option (in the command line or NODE_OPTIONS) wins, and
 *   SEARCH_HEAP_TUNING=off never sets it (`on`: whatever the memory).
 *
 * The child leaves its own process group, so that a terminal's Ctrl-C reaches it once (through
 * the parent) rather than twice; and it ends at once when the parent dies (SIGKILL cannot be
 * passed on), as if it had been killed with it.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { MALLOC_TUNABLES, wantsAllocatorSettings } from '../engine/allocator-settings.js';
import { availableMemory } from '../engine/tasks/batch-budget.js';
import { AMPLE_MEMORY } from '../engine/thread-heaps.js';

export { MALLOC_TUNABLES };

/** The signals a supervisor sends that the child must see. */
const PASSED_ON = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'] as const;

/** Set in the child: it ends when the parent does. */
const CHILD_MARK = 'SEARCH_SERVING_CHILD';

/** Semi-spaces of 16 MiB from the start, in every isolate of the serving process. */
export const SERVING_HEAP_OPTIONS = ['--min-semi-space-size=16'];

/** The node options the serving process should start with that it did not (see above). */
export function wantedHeapOptions(execArgv = process.execArgv, env: NodeJS.ProcessEnv = process.env, memory = availableMemory()): string[] {
  const mode = env.SEARCH_HEAP_TUNING ?? 'auto';
  if (mode === 'off' || (mode !== 'on' && memory < AMPLE_MEMORY)) return [];
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (given.some((option) => /^--(min|max)[-_]semi[-_]space[-_]size/.test(option))) return [];
  return SERVING_HEAP_OPTIONS;
}

/**
 * Run this command again with the settings it wants (see above) and end this process as the
 * child ended; returns false (nothing done) when it wants none. In the child, ties its life to
 * the parent's.
 */
export async function runWithProcessSettings(): Promise<boolean> {
  if (process.env[CHILD_MARK] === '1') {
    delete process.env[CHILD_MARK];
    // the IPC channel closes when the parent dies, however it died
    process.channel?.unref();
    process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
    return false;
  }
  const allocator = wantsAllocatorSettings() ? { GLIBC_TUNABLES: MALLOC_TUNABLES } : {};
  const heap = wantedHeapOptions();
  if (!allocator.GLIBC_TUNABLES && heap.length === 0) return false;
  const child = spawn(process.execPath, [...process.execArgv, ...heap, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...allocator, [CHILD_MARK]: '1' },
    detached: true,
  });
  for (const signal of PASSED_ON) process.on(signal, () => child.kill(signal));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c, s) => resolve([c, s]));
  });
  if (signal) {
    // end the way the child ended, so that whoever waits for this process sees the signal
    for (const passed of PASSED_ON) process.removeAllListeners(passed);
    process.kill(process.pid, signal);
    // a signal this process does not die of (ignored by its parent): the shell's convention
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.exit(128 + (constants.signals[signal] ?? 0));
  }
  process.exit(code ?? 1);
}
