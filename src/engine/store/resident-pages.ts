/**
 * Keeping the resident set of the process small (native part: `native/resident_pages.c`).
 *
 * Two kinds of memory stayed resident after a batch of documents, and added up at the next one:
 *
 * - Pages of the LMDB data file. A batch reads and rewrites pages across the whole keyword
 *   dictionary, a search reads entries all over the file, and every page touched stayed in the
 *   process's page tables, so counted in RSS, until the environment closed: at 200k documents,
 *   741 MB of a 1,054 MiB peak. Each open index's data file is watched by a native thread, which
 *   drops the process's mappings of its pages (MADV_DONTNEED on the shared map) once the process
 *   maps more than MAPPED_BUDGET_BYTES of file pages. The data stays in the kernel's page cache,
 *   dirty pages included, and is mapped again on the next access; nothing is written or lost.
 * - glibc's heap. Its mmap threshold rises each time a large block is freed, after which the
 *   batch's typed arrays and native buffers were carved from the heap and fragmented it: 100-190
 *   MB of heap stayed resident between batches. A fixed threshold keeps large blocks in their own
 *   mappings, and the heap is trimmed after each batch.
 *
 * Elsewhere than on Linux with glibc, or when the addon was not built, these are no-ops.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

interface NativeResidentPages {
  releaseFilePages(path: string): number;
  watchFilePages(path: string): object;
  stopWatching(handle: object): void;
  setMappedLimit(bytes: number): void;
  releaseCount(): number;
  mappedFileBytes(): number;
  trimHeap(): boolean;
  setMmapThreshold(bytes: number): boolean;
}

/**
 * File-backed pages the process may map beyond those mapped when the addon loads (the program
 * and its libraries) before the watched data files are released. A search on a 200k-document
 * index maps 10-70 MB of its data file, a batch hundreds; the native thread looks every
 * millisecond while the mapped pages grow. At 200k documents, 64 MiB gave a peak of 482 MiB,
 * 32 MiB 416-475 MiB over four runs, 16 MiB 430 MiB, with the same search latencies.
 */
export const MAPPED_BUDGET_BYTES = 16 * 1024 * 1024;

/** Blocks of at least this size get their own mapping (glibc's initial threshold, kept fixed). */
const MMAP_THRESHOLD_BYTES = 128 * 1024;

/** Built by `npm install` (node-gyp) into `native/build`, one level above `src/` and two above `dist/src/`. */
const ADDON_PATHS = ['../../../native/build/Release/resident_pages.node', '../../../../native/build/Release/resident_pages.node'];

function loadNative(): NativeResidentPages | null {
  // The addon's watcher threads belong to the process's main thread: loaded in a worker (the
  // write thread), they crash the process when the worker ends.
  if (process.platform !== 'linux' || process.env.SEARCH_RESIDENT_PAGES === 'off' || !isMainThread) return null;
  const require = createRequire(import.meta.url);
  for (const candidate of ADDON_PATHS) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (!existsSync(path)) continue;
    try {
      return require(path) as NativeResidentPages;
    } catch {
      return null;
    }
  }
  return null;
}

let native: NativeResidentPages | null | undefined;

function addon(): NativeResidentPages | null {
  if (native === undefined) {
    native = loadNative();
    native?.setMmapThreshold(MMAP_THRESHOLD_BYTES);
    native?.setMappedLimit(native.mappedFileBytes() + MAPPED_BUDGET_BYTES);
  }
  return native;
}

/** Whether this process can release pages (the addon is built and loaded). */
export function residentPagesSupported(): boolean {
  return addon() !== null;
}

/** Drops this process's mappings of `file`'s pages now; returns the bytes of mappings advised (0 without the addon). */
export function releaseFilePages(file: string): number {
  return addon()?.releaseFilePages(file) ?? 0;
}

/** Gives the free memory of the native heap back to the system. */
export function trimNativeHeap(): void {
  addon()?.trimHeap();
}

/**
 * Releases the pages of `file` (an absolute, symlink-free path, as the kernel names the mapping)
 * whenever the process maps more file pages than its budget, until the returned function is called.
 */
export function watchFilePages(file: string): () => void {
  const pages = addon();
  if (!pages) return () => {};
  const handle = pages.watchFilePages(file);
  return () => pages.stopWatching(handle);
}

/** How many times the watched files were released so far (0 without the addon). */
export function releaseCount(): number {
  return addon()?.releaseCount() ?? 0;
}

/** Runs a batch's work, then gives back what it left mapped and the free memory of the native heap. */
export async function withResidentPagesReleased<T>(file: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    addon()?.releaseFilePages(file);
    addon()?.trimHeap();
  }
}
