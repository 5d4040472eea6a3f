/**
 * Whether index environments write through a writable memory map (LMDB's MDB_WRITEMAP), and the
 * disk space that makes it safe.
 *
 * Without it a write transaction keeps a private, malloc'd copy of every page it changes until it
 * commits: anonymous memory the size of a batch's changes (at 200k documents a batch of 20,000
 * changes 200-440 MiB of pages). Inside a container that memory is what the limit is made of: the
 * 200k build in 512 MiB spent its time reading back index pages the dirty copies had pushed out
 * of the page cache, or was killed. With the writable map the changed pages are the file's own
 * pages in the page cache, which the kernel writes back and reclaims under pressure.
 *
 * The danger: LMDB sizes a writable map's data file to the map (a sparse file), and the first
 * write into a hole of it on a full filesystem raises SIGBUS, which kills the process in the
 * middle of the batch (store.ts). Two guards make that a failed task rather than a crash loop:
 *  - only a write side that is a child process of its own uses the map (tasks/write-host.ts: the
 *    process under a memory limit, which is where the map pays), so a fault ends that process,
 *    never the server, and the crash guard (tasks/crash-guard.ts) handles the batch;
 *  - before each write transaction the space the batch may take past the data's end is allocated
 *    on disk (fallocate, no data written): a full disk is then found before the transaction,
 *    with `no_space_left_on_device`, and another process filling the disk during the batch cannot
 *    take the blocks the batch writes into. Pages LMDB reuses from its free list are allocated
 *    already.
 * The map is used only where that allocation works (the `fallocate` tool of util-linux, on a
 * filesystem that supports it); elsewhere the write process writes with pwrite as threads do.
 * `SEARCH_WRITABLE_MAP=off` turns it off.
 */
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { noSpaceLeft } from '../store/disk-space.js';

export const WRITABLE_MAP_ENV = 'SEARCH_WRITABLE_MAP';

const MIB = 1024 * 1024;
/** Allocated past the data at least, for the transactions that are not batches of documents (settings, deletions, bookkeeping). */
export const MIN_RESERVE_BYTES = 4 * MIB;

let enabled = false;
let expected = MIN_RESERVE_BYTES;

/** Whether environments opened from now on in this process use the writable map. */
export function writableMap(): boolean {
  return enabled;
}

/**
 * Use the writable map in this process (a write process, see above) if the setting allows it and
 * space can be allocated ahead under `dir`. Returns whether it is on. Call before opening indexes.
 */
export function enableWritableMap(dir: string, setting = process.env[WRITABLE_MAP_ENV]): boolean {
  if (setting?.trim().toLowerCase() === 'off') return (enabled = false);
  enabled = canAllocate(dir);
  return enabled;
}

/** Back to pwrite for environments opened from now on (tests). */
export function disableWritableMap(): void {
  enabled = false;
}

function canAllocate(dir: string): boolean {
  const probe = join(dir, `.fallocate-probe-${process.pid}`);
  try {
    writeFileSync(probe, '');
    allocate(probe, 0, 4096);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { force: true });
  }
}

/** Allocate `[offset, offset + length)` of `file` on disk, keeping its size (FALLOC_FL_KEEP_SIZE). */
function allocate(file: string, offset: number, length: number): void {
  execFileSync('fallocate', ['--keep-size', '--offset', String(offset), '--length', String(length), file], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** The scheduler, before a batch: how many bytes past the data's end its transactions may write. */
export function expectWrites(bytes: number): void {
  expected = Math.max(MIN_RESERVE_BYTES, Math.ceil(bytes));
}

/** After the batch: back to the allowance of small transactions. */
export function expectSmallWrites(): void {
  expected = MIN_RESERVE_BYTES;
}

/**
 * Space reserved ahead of one environment's data: `reservedTo` is the file offset up to which
 * blocks are known to be allocated (by this process), so a transaction that stays inside it
 * costs no system call beyond reading the environment's last page.
 */
export class SpaceReservation {
  private reservedTo = 0;

  constructor(private readonly file: string) {}

  /** Make sure the `expected` bytes after `dataEnd` (the end of the used pages) are on disk. */
  ensure(dataEnd: number): void {
    const want = dataEnd + expected;
    if (want <= this.reservedTo) return;
    const from = Math.max(dataEnd, this.reservedTo);
    try {
      allocate(this.file, from, want - from);
    } catch (error) {
      const detail = String((error as { stderr?: Buffer }).stderr ?? (error as Error).message).trim();
      if (/No space left/i.test(detail)) throw noSpaceLeft(`could not set aside ${mib(want - from)} on disk for this batch's writes.`, error);
      throw error;
    }
    this.reservedTo = want;
  }
}

function mib(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}
