/**
 * The facet databases of one index environment, and their read paths.
 *
 *   facet-strings    [field, normalized] -> docids      string facet values
 *   facet-originals  [field, normalized] -> string      first original spelling, for display
 *   facet-numbers    [field, number]     -> docids      number facet values
 *   facet-flags      [kind, field]       -> docids      kind: e(xists), n(ull), m (empty)
 *   facet-docs       u32 docid           -> {field: (number | string)[]}   a document's values, for
 *                                                       sort, distinct and small facet counts
 *   facet-counts     field               -> number      distinct values of the field, to choose
 *                                                       between walking values and reading documents
 *
 * Keys use lmdb's ordered-binary encoding, so one field's values are contiguous and sorted
 * (numbers numerically, strings by code point) and every range filter is a range scan.
 *
 * Docid sets are stored compactly: most facet values (titles, names) belong to a handful of
 * documents, so sets of up to SMALL_SET docids are plain little-endian u32 arrays (tag 0); larger
 * ones are portable roaring bitmaps (tag 1). Reading a small set needs no roaring decoding.
 */
import type { Database } from 'lmdb';
import { RoaringBitmap32, type Bitmap, type IndexStore } from '../../index/store.js';

export interface FacetDbs {
  strings: Database<Buffer, [string, string]>;
  originals: Database<string, [string, string]>;
  numbers: Database<Buffer, [string, number]>;
  flags: Database<Buffer, [string, string]>;
  docs: Database<Record<string, Array<number | string>>, number>;
  counts: Database<number, string>;
}

export type FlagKind = 'exists' | 'null' | 'empty';
export const FLAG_KEYS: Record<FlagKind, string> = { exists: 'e', null: 'n', empty: 'm' };

const SMALL_SET = 16;

const opened = new WeakMap<IndexStore, FacetDbs>();

export function facetDbs(store: IndexStore): FacetDbs {
  let dbs = opened.get(store);
  if (!dbs) {
    dbs = {
      strings: store.openDB('facet-strings', { keyEncoding: 'ordered-binary', encoding: 'binary' }) as any,
      originals: store.openDB('facet-originals', { keyEncoding: 'ordered-binary', encoding: 'string' }) as any,
      numbers: store.openDB('facet-numbers', { keyEncoding: 'ordered-binary', encoding: 'binary' }) as any,
      flags: store.openDB('facet-flags', { keyEncoding: 'ordered-binary', encoding: 'binary' }) as any,
      docs: store.openDB('facet-docs', { keyEncoding: 'uint32', encoding: 'msgpack' }) as any,
      counts: store.openDB('facet-counts', { encoding: 'msgpack' }) as any,
    };
    opened.set(store, dbs);
  }
  return dbs;
}

// --- docid sets ------------------------------------------------------------------------------

export function encodeDocids(bitmap: Bitmap): Buffer {
  if (bitmap.size <= SMALL_SET) {
    const out = Buffer.allocUnsafe(1 + 4 * bitmap.size);
    out[0] = 0;
    let at = 1;
    for (const docid of bitmap) {
      out.writeUInt32LE(docid, at);
      at += 4;
    }
    return out;
  }
  const roaringBytes = bitmap.serialize(true);
  const out = Buffer.allocUnsafe(1 + roaringBytes.length);
  out[0] = 1;
  out.set(roaringBytes, 1);
  return out;
}

function smallDocids(buffer: Uint8Array): Uint32Array {
  const n = (buffer.length - 1) >> 2;
  const out = new Uint32Array(n);
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  for (let i = 0; i < n; i++) out[i] = view.getUint32(1 + 4 * i, true);
  return out;
}

export function readBitmap(buffer: Uint8Array | undefined | null): Bitmap {
  if (!buffer || buffer.length === 0) return new RoaringBitmap32();
  if (buffer[0] === 0) return new RoaringBitmap32(smallDocids(buffer));
  return RoaringBitmap32.deserialize(buffer.subarray(1), true);
}

/** `out |= docids(buffer)` without building a bitmap for small sets. */
export function orDocids(out: Bitmap, buffer: Uint8Array | undefined | null): void {
  if (!buffer || buffer.length === 0) return;
  if (buffer[0] === 0) out.addMany(smallDocids(buffer));
  else out.orInPlace(RoaringBitmap32.deserialize(buffer.subarray(1), true));
}

/** `|docids(buffer) ∩ candidates|`. */
export function countDocids(buffer: Uint8Array | undefined | null, candidates: Bitmap): number {
  if (!buffer || buffer.length === 0) return 0;
  if (buffer[0] === 0) {
    let n = 0;
    for (const docid of smallDocids(buffer)) if (candidates.has(docid)) n++;
    return n;
  }
  return RoaringBitmap32.deserialize(buffer.subarray(1), true).andCardinality(candidates);
}

// --- point reads -----------------------------------------------------------------------------

export function stringDocids(store: IndexStore, field: string, normalized: string): Bitmap {
  return readBitmap(facetDbs(store).strings.get([field, normalized]));
}

export function stringOriginal(store: IndexStore, field: string, normalized: string): string | undefined {
  return facetDbs(store).originals.get([field, normalized]);
}

export function numberDocids(store: IndexStore, field: string, value: number): Bitmap {
  return readBitmap(facetDbs(store).numbers.get([field, value]));
}

export function flagDocids(store: IndexStore, kind: FlagKind, field: string): Bitmap {
  return readBitmap(facetDbs(store).flags.get([FLAG_KEYS[kind], field]));
}

/** The facet values of one document for `field` (numbers, then normalized strings). */
export function docFacetValues(store: IndexStore, field: string, docid: number): Array<number | string> | undefined {
  return facetDbs(store).docs.get(docid)?.[field];
}

/** How many distinct values (numbers and strings) `field` has. */
export function valueCount(store: IndexStore, field: string): number {
  return facetDbs(store).counts.get(field) ?? 0;
}

// --- scans -----------------------------------------------------------------------------------

export interface RawEntry<V> {
  value: V;
  /** The encoded docid set: decode with `readBitmap`, or use `orDocids` / `countDocids`. */
  raw: Buffer;
}

/**
 * String facet values of `field` in code point order (or reversed), optionally only those
 * starting with `prefix` or from a lower bound `from`.
 */
export function* stringRange(
  store: IndexStore,
  field: string,
  options: { prefix?: string; from?: string; reverse?: boolean } = {},
): Generator<RawEntry<string>> {
  const { strings } = facetDbs(store);
  const prefix = options.prefix ?? '';
  if (options.reverse) {
    const top: [string, string] = [field, prefix + '\u{10FFFF}\u{10FFFF}'];
    for (const { key, value } of strings.getRange({ start: top, end: [field, prefix], reverse: true })) {
      if (key[0] === field && key[1].startsWith(prefix)) yield { value: key[1], raw: value };
    }
    // `end` is exclusive: the bare prefix itself closes a reverse scan.
    const own = strings.get([field, prefix]);
    if (own) yield { value: prefix, raw: own };
    return;
  }
  const start = options.from !== undefined && options.from > prefix ? options.from : prefix;
  for (const { key, value } of strings.getRange({ start: [field, start] })) {
    if (key[0] !== field || !key[1].startsWith(prefix)) break;
    yield { value: key[1], raw: value };
  }
}

/** Only the string values of `field`, in order, without reading their docids. */
export function* stringValues(store: IndexStore, field: string): Generator<string> {
  const { strings } = facetDbs(store);
  for (const key of strings.getKeys({ start: [field, ''] })) {
    if (key[0] !== field) break;
    yield key[1];
  }
}

/** Number facet values of `field` within [min, max] (bounds optional, each inclusive or not). */
export function* numberRange(
  store: IndexStore,
  field: string,
  options: { min?: number; max?: number; minExclusive?: boolean; maxExclusive?: boolean; reverse?: boolean } = {},
): Generator<RawEntry<number>> {
  const { numbers } = facetDbs(store);
  const min = options.min ?? -Infinity;
  const max = options.max ?? Infinity;
  if (min > max) return;
  const inRange = (v: number): boolean =>
    (options.minExclusive ? v > min : v >= min) && (options.maxExclusive ? v < max : v <= max);
  const range = options.reverse
    ? numbers.getRange({ start: [field, max], end: [field, -Infinity], reverse: true })
    : numbers.getRange({ start: [field, min], end: [field, Infinity] });
  for (const { key, value } of range) {
    if (key[0] !== field) break;
    const v = key[1];
    if (!inRange(v)) {
      if (options.reverse ? v < min : v > max) break;
      continue;
    }
    yield { value: v, raw: value };
  }
}

/** Decoded entries, for callers that need bitmaps (sort, distinct). */
export function* decoded<V>(entries: Iterable<RawEntry<V>>): Generator<{ value: V; docids: Bitmap }> {
  for (const { value, raw } of entries) yield { value, docids: readBitmap(raw) };
}

/** Every field that has facet data (it exists in at least one document). */
export function facetedFields(store: IndexStore): string[] {
  const { flags } = facetDbs(store);
  const out: string[] = [];
  for (const key of flags.getKeys({ start: [FLAG_KEYS.exists, ''] })) {
    if (key[0] !== FLAG_KEYS.exists) break;
    out.push(key[1]);
  }
  return out;
}
