/**
 * The facet databases of one index environment, and their read paths.
 *
 *   facet-strings   [field, normalized]  -> [original, roaring]   string facet values
 *   facet-numbers   [field, number]      -> roaring               number facet values
 *   facet-flags     [kind, field]        -> roaring               kind: e(xists), n(ull), m (empty)
 *   facet-docs      [field, docid]       -> (number | string)[]   a document's values, for sort,
 *                                                                  distinct and small facet counts
 *
 * Keys use lmdb's ordered-binary encoding, so one field's values are contiguous and sorted
 * (numbers numerically, strings by code point) and every range filter is a range scan.
 */
import type { Database } from 'lmdb';
import { RoaringBitmap32, type Bitmap, type IndexStore } from '../../index/store.js';

export interface FacetDbs {
  strings: Database<[string, Buffer], [string, string]>;
  numbers: Database<Buffer, [string, number]>;
  flags: Database<Buffer, [string, string]>;
  docs: Database<Array<number | string>, [string, number]>;
}

export type FlagKind = 'exists' | 'null' | 'empty';
export const FLAG_KEYS: Record<FlagKind, string> = { exists: 'e', null: 'n', empty: 'm' };

const opened = new WeakMap<IndexStore, FacetDbs>();

export function facetDbs(store: IndexStore): FacetDbs {
  let dbs = opened.get(store);
  if (!dbs) {
    dbs = {
      strings: store.openDB('facet-strings', { keyEncoding: 'ordered-binary', encoding: 'msgpack' }) as any,
      numbers: store.openDB('facet-numbers', { keyEncoding: 'ordered-binary', encoding: 'binary' }) as any,
      flags: store.openDB('facet-flags', { keyEncoding: 'ordered-binary', encoding: 'binary' }) as any,
      docs: store.openDB('facet-docs', { keyEncoding: 'ordered-binary', encoding: 'msgpack' }) as any,
    };
    opened.set(store, dbs);
  }
  return dbs;
}

export function readBitmap(buffer: Uint8Array | undefined | null): Bitmap {
  return buffer ? RoaringBitmap32.deserialize(buffer, true) : new RoaringBitmap32();
}

export function stringDocids(store: IndexStore, field: string, normalized: string): Bitmap {
  return readBitmap(facetDbs(store).strings.get([field, normalized])?.[1]);
}

export function stringOriginal(store: IndexStore, field: string, normalized: string): string | undefined {
  return facetDbs(store).strings.get([field, normalized])?.[0];
}

export function numberDocids(store: IndexStore, field: string, value: number): Bitmap {
  return readBitmap(facetDbs(store).numbers.get([field, value]));
}

export function flagDocids(store: IndexStore, kind: FlagKind, field: string): Bitmap {
  return readBitmap(facetDbs(store).flags.get([FLAG_KEYS[kind], field]));
}

export interface StringEntry {
  value: string;
  original: string;
  docids: Bitmap;
}

/**
 * String facet values of `field` in key order (or reversed), optionally from a lower bound or
 * restricted to a prefix. Bitmaps are decoded lazily by the caller's iteration.
 */
export function* stringEntries(
  store: IndexStore,
  field: string,
  options: { prefix?: string; reverse?: boolean } = {},
): Generator<StringEntry> {
  const { strings } = facetDbs(store);
  const prefix = options.prefix ?? '';
  const range = options.reverse
    ? strings.getRange({ start: [field, prefix + '\u{10FFFF}\u{10FFFF}'], end: [field, prefix], reverse: true })
    : strings.getRange({ start: [field, prefix] });
  for (const { key, value } of range) {
    if (key[0] !== field) {
      if (options.reverse) continue;
      break;
    }
    if (!key[1].startsWith(prefix)) {
      if (options.reverse) continue;
      break;
    }
    yield { value: key[1], original: value[0], docids: readBitmap(value[1]) };
  }
  // `end` is exclusive: the bare prefix itself closes a reverse scan.
  if (options.reverse && prefix !== '') {
    const own = strings.get([field, prefix]);
    if (own) yield { value: prefix, original: own[0], docids: readBitmap(own[1]) };
  }
}

/** Raw string keys and values of `field` without decoding bitmaps (for CONTAINS and counts). */
export function* stringKeys(store: IndexStore, field: string): Generator<{ value: string; original: string; raw: Buffer }> {
  const { strings } = facetDbs(store);
  for (const { key, value } of strings.getRange({ start: [field, ''] })) {
    if (key[0] !== field) break;
    yield { value: key[1], original: value[0], raw: value[1] };
  }
}

export interface NumberEntry {
  value: number;
  docids: Bitmap;
}

/** Number facet values of `field` within [min, max] (bounds optional, each inclusive or not). */
export function* numberEntries(
  store: IndexStore,
  field: string,
  options: { min?: number; max?: number; minExclusive?: boolean; maxExclusive?: boolean; reverse?: boolean } = {},
): Generator<NumberEntry> {
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
    yield { value: v, docids: readBitmap(value) };
  }
  // A range scan's `end` is exclusive: pick up an infinite bound's own key is impossible (not
  // stored), but a reverse scan from `max` includes `max` itself, so nothing else is missing.
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

/** The facet values of one document for `field` (numbers, then normalized strings). */
export function docFacetValues(store: IndexStore, field: string, docid: number): Array<number | string> | undefined {
  return facetDbs(store).docs.get([field, docid]);
}

/** How many distinct values `field` has (strings + numbers), counted by key scan. */
export function distinctValueCount(store: IndexStore, field: string, limit = Infinity): number {
  const { strings, numbers } = facetDbs(store);
  let n = 0;
  for (const key of numbers.getKeys({ start: [field, -Infinity] })) {
    if (key[0] !== field || ++n >= limit) break;
  }
  for (const key of strings.getKeys({ start: [field, ''] })) {
    if (key[0] !== field || ++n >= limit) break;
  }
  return n;
}
