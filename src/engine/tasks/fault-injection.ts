/**
 * Test hooks that hold the write side at a precise point, so that a test can kill the process
 * there. Inert unless their environment variables are set (only the crash tests set them).
 *
 *   SEARCH_TEST_HOLD_WRITE_MS           hold each document batch's write transaction open this long,
 *   SEARCH_TEST_HOLD_WRITE_MARKER       after creating this file (the test waits for it, then kills).
 *   SEARCH_TEST_HOLD_COMPACTION_MS      hold an index compaction this long once its copy is
 *   SEARCH_TEST_HOLD_COMPACTION_MARKER  partly written, after creating this file.
 */
import { writeFileSync } from 'node:fs';

export function holdInsideWriteTransaction(): void {
  hold('SEARCH_TEST_HOLD_WRITE');
}

export function holdInsideCompaction(): void {
  hold('SEARCH_TEST_HOLD_COMPACTION');
}

function hold(prefix: string): void {
  const ms = Number(process.env[`${prefix}_MS`] ?? 0);
  if (!(ms > 0)) return;
  const marker = process.env[`${prefix}_MARKER`];
  if (marker) writeFileSync(marker, String(Date.now()));
  // a synchronous wait: the transaction (or the copy) stays where it is, as a long one would
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
