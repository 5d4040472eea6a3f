/**
 * glibc's allocator settings for processes that run inside a memory limit (bench/README.md,
 * "Memory in a container"): with its defaults, native memory freed after a batch stays with the
 * allocator, and a 200k build in 512 MiB was killed. glibc reads GLIBC_TUNABLES only when a
 * process starts, so they reach the processes this code starts: `search serve` runs itself again
 * with them (cli/process-settings.ts), and the write side's process gets them in its environment
 * (tasks/write-host.ts), which covers programs that use the `Engine` API.
 *
 * When: on Linux with glibc, under a memory limit below AMPLE_MEMORY, and only when GLIBC_TUNABLES
 * is unset (a deployment that sets it chooses for itself). SEARCH_MALLOC_TUNING=off never sets
 * them, `on` always does (a limit the process cannot see), `auto` (the default) follows the limit.
 */
import { availableMemory } from './tasks/batch-budget.js';
import { AMPLE_MEMORY } from './thread-heaps.js';

/** Blocks of 128 KiB and more mapped on their own (unmapped when freed); two arenas for all threads. */
export const MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2';

let glibc: boolean | undefined;

/** Whether node runs on glibc (asked once: a diagnostic report takes some milliseconds). */
function usesGlibc(): boolean {
  if (glibc === undefined) {
    const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
    glibc = typeof header?.glibcVersionRuntime === 'string';
  }
  return glibc;
}

/** Whether a process started from here should get MALLOC_TUNABLES. */
export function wantsAllocatorSettings(env: NodeJS.ProcessEnv = process.env, memory = availableMemory()): boolean {
  const mode = env.SEARCH_MALLOC_TUNING ?? 'auto';
  if (mode === 'off' || env.GLIBC_TUNABLES !== undefined || process.platform !== 'linux') return false;
  if (mode !== 'on' && memory >= AMPLE_MEMORY) return false;
  return usesGlibc();
}
