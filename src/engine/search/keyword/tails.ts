/**
 * Tails of long posting lists.
 *
 * New documents get the highest docids, so a batch mostly appends to posting lists. Rewriting a
 * long list whole for each append made every batch copy the lists of frequent words, prefixes
 * and values (54 MiB at 200k documents, LMDB overflow pages), however few documents it added:
 * 1,000 documents added to a 200k index ran at about 1,000 docs/s. A list stored in `LONG_LIST`
 * bytes or more therefore takes a batch's additions into a separate tail, under the same key in
 * the database's tail twin (`kw-words-tail` for `kw-words`, ...). The tail is folded back into
 * the list once it reaches a quarter of the list's size, so each docid is rewritten a bounded
 * number of times, and at once when the batch removes documents from the key.
 *
 * Invariant: a key has a tail only while its list is long. Lists change only by (a) the short
 * path, taken when the list is short and so has no tail, (b) a fold, which removes the tail, and
 * (c) a removal, which folds. Readers therefore only look for a tail behind a long list.
 *
 * Word records (`kw-word-parts`) follow the same rule, record by record: the tail record holds the
 * tail of each part and the word's id.
 */
import type { Database } from 'lmdb';
import roaring from 'roaring';
import type { Bitmap } from '../../index/store.js';

const { RoaringBitmap32 } = roaring;

/** Lists at least this long in bytes get a tail; shorter ones fit an LMDB leaf page (4 KiB pages hold nodes up to about 2 KiB). */
export const LONG_LIST = 2048;

/** Fold the tail back once it is at least this fraction of the list. */
const FOLD_FRACTION = 0.25;

export const hasTail = (listBytes: number): boolean => listBytes >= LONG_LIST;
export const shouldFold = (tailBytes: number, listBytes: number): boolean => tailBytes >= listBytes * FOLD_FRACTION;

/** The bytes of an lmdb fast read (its `length` is the value's size, not its buffer's). */
export const valueBytes = (raw: Uint8Array): Uint8Array => raw.subarray(0, raw.length);

/** The docids stored under `key`: its list, with its tail when the list is long. */
export function readPostings(list: Database<Buffer, string>, tail: Database<Buffer, string>, key: string): Bitmap | undefined {
  const raw = list.getBinaryFast(key);
  if (!raw) return undefined;
  const bitmap = RoaringBitmap32.deserialize(valueBytes(raw), true);
  // Deserialized (copied) above: the next read reuses lmdb's buffer.
  if (hasTail(raw.length)) {
    const more = tail.getBinaryFast(key);
    if (more) bitmap.orInPlace(RoaringBitmap32.deserialize(valueBytes(more), true));
  }
  return bitmap;
}
