/**
 * `search serve` inside a memory limit runs with glibc's allocator told to give memory back.
 *
 * With glibc's defaults, the write thread's native buffers (a batch's extraction tables, LMDB's
 * dirty pages) come from per-thread arenas and, after the first large free, from a heap whose
 * mmap threshold has risen to the largest block freed so far: memory freed after a batch stays
 * with the allocator. Inside a 512 MiB container that killed the 200k build (bench/README.md,
 * "Memory in a container"); with GLIBC_TUNABLES below it completes. glibc reads its tunables only
 * when a process starts, and node cannot replace its own process image, so the command runs
 * itself again as a child with the variable set and stands in for it: same arguments, same
 * standard streams, signals passed on, the child's exit code or signal as its own. The parent
 * does nothing else (some 7 MiB of anonymous memory).
 *
 * When: on Linux with glibc, under a memory limit below AMPLE_MEMORY (where the threads' heaps are
 * bounded too, see engine/thread-heaps.ts), and only when GLIBC_TUNABLES is unset (a deployment
 * that sets it chooses for itself). SEARCH_MALLOC_TUNING=off never re-runs, `on` always does
 * (a limit the process cannot see), `auto` (the default) follows the limit.
 *
 * The child leaves its own process group, so that a terminal's Ctrl-C reaches it once (through
 * the parent) rather than twice; and it ends at once when the parent dies (SIGKILL cannot be
 * passed on), as if it had been killed with it.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { MALLOC_TUNABLES, wantsAllocatorSettings } from '../engine/allocator-settings.js';

export { MALLOC_TUNABLES };

/** The signals a supervisor sends that the child must see. */
const PASSED_ON = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'] as const;

/** Set in the child: it ends when the parent does. */
const CHILD_MARK = 'SEARCH_MALLOC_TUNED_CHILD';

/**
 * Run this command again with the allocator settings when wanted (see above) and end this process
 * as the child ended; returns false (nothing done) when not wanted. In the child, ties its life
 * to the parent's.
 */
export async function runWithAllocatorSettings(): Promise<boolean> {
  if (process.env[CHILD_MARK] === '1') {
    delete process.env[CHILD_MARK];
    // the IPC channel closes when the parent dies, however it died
    process.channel?.unref();
    process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
    return false;
  }
  if (!wantsAllocatorSettings()) return false;
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, GLIBC_TUNABLES: MALLOC_TUNABLES, [CHILD_MARK]: '1' },
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
