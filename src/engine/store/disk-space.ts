/**
 * Running out of disk is an error, never a crash. The serving process's index environments write
 * through `pwrite` (no writable memory map: a write into a sparse mapped page of a full filesystem
 * raises SIGBUS and kills the process), so a full disk fails the commit, which aborts whole; a
 * write side in a process of its own uses the writable map with the space its batch writes into
 * allocated first (index/writable-map.ts). On top of that the engine checks free space before it
 * writes: a batch or an upload that would eat into RESERVE_BYTES is refused with
 * `no_space_left_on_device` before anything is written, which keeps the reserve for the task
 * queue itself (marking the refused tasks failed, registering deletions that free space).
 */
import { statfsSync } from 'node:fs';
import { SearchError } from '../errors.js';

/** Free space kept for the task queue's own writes. */
export const RESERVE_BYTES = 16 * 1024 * 1024;

/** Disk space an index may take per byte of document payload while a batch indexes it (measured about 2-3x; kept generous). */
export const INDEX_BYTES_PER_PAYLOAD_BYTE = 4;

/** Bytes an unprivileged writer may still use on the filesystem of `path`; Infinity when unknown. */
export function freeBytes(path: string): number {
  try {
    const stats = statfsSync(path);
    return stats.bavail * stats.bsize;
  } catch {
    return Infinity;
  }
}

export function noSpaceLeft(detail: string, cause?: unknown): SearchError {
  return new SearchError('no_space_left_on_device', `No space left on device: ${detail}`, cause === undefined ? undefined : { cause });
}

/** Refuse (`no_space_left_on_device`) unless `bytes` can be written under `path` and the reserve stays free. */
export function ensureSpaceFor(path: string, bytes: number, what: string): void {
  const free = freeBytes(path);
  if (free - bytes < RESERVE_BYTES) {
    throw noSpaceLeft(`${what} needs about ${mib(bytes)} and ${mib(free)} are free, of which ${mib(RESERVE_BYTES)} are kept for the task queue.`);
  }
}

/**
 * A write failure seen while the filesystem is (nearly) full is the full disk's doing, whatever
 * the driver called it (LMDB reports a failed page write as `Input/output error`).
 */
export function asSpaceError(error: unknown, path: string): unknown {
  if (error instanceof SearchError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = String((error as Error | undefined)?.message ?? error);
  const writeFailure = code === 'ENOSPC' || code === 'EIO' || /No space left|Input\/output error|MDB_/.test(message);
  if (writeFailure && freeBytes(path) < RESERVE_BYTES) return noSpaceLeft(`a write failed (${message}) with ${mib(freeBytes(path))} free.`, error);
  return error;
}

function mib(bytes: number): string {
  return `${(Math.max(0, bytes) / (1024 * 1024)).toFixed(1)} MiB`;
}
