/**
 * Sort as a bucket iterator: the candidates split into consecutive bitmaps of equal rank, in
 * order. As in the reference, number values come before string values in both directions, a
 * multi-valued document ranks by its first value met in that order, and documents without the
 * field come last (one final bucket).
 *
 * Two strategies, picked by size: walk the field's sorted facet keys intersecting each bitmap
 * with what is left (few distinct values or many candidates), or read each candidate's values and
 * sort them in memory (few candidates).
 */
import { RoaringBitmap32, type Bitmap, type IndexStore } from '../../index/store.js';
import { decoded, docFacetValues, numberRange, stringRange, valueCount } from '../facets/databases.js';
import { geoSortBuckets } from '../geo/query.js';
import type { SortCriterion, SortOrder } from './parse.js';

const IN_MEMORY_MAX = 2000;

function* walkFacetKeys(store: IndexStore, candidates: Bitmap, field: string, order: SortOrder): Generator<Bitmap> {
  const remaining = candidates.clone();
  const reverse = order === 'desc';
  const sources: Array<Iterable<{ docids: Bitmap }>> = [
    decoded(numberRange(store, field, { reverse })),
    decoded(stringRange(store, field, { reverse })),
  ];
  for (const source of sources) {
    for (const { docids } of source) {
      if (remaining.isEmpty) return;
      const bucket = RoaringBitmap32.and(docids, remaining);
      if (bucket.isEmpty) continue;
      remaining.andNotInPlace(bucket);
      yield bucket;
    }
  }
  if (!remaining.isEmpty) yield remaining;
}

type RankKey = [group: 0 | 1, value: number | string];

function rankOf(values: Array<number | string> | undefined, order: SortOrder): RankKey | null {
  if (!values || values.length === 0) return null;
  let best: number | null = null;
  let bestString: string | null = null;
  for (const v of values) {
    if (typeof v === 'number') {
      if (best === null || (order === 'asc' ? v < best : v > best)) best = v;
    } else if (bestString === null || (order === 'asc' ? v < bestString : v > bestString)) bestString = v;
  }
  if (best !== null) return [0, best];
  return [1, bestString!];
}

function* sortInMemory(store: IndexStore, candidates: Bitmap, field: string, order: SortOrder): Generator<Bitmap> {
  const ranked: Array<{ docid: number; key: RankKey }> = [];
  const missing = new RoaringBitmap32();
  for (const docid of candidates) {
    const key = rankOf(docFacetValues(store, field, docid), order);
    if (key) ranked.push({ docid, key });
    else missing.add(docid);
  }
  const sign = order === 'asc' ? 1 : -1;
  ranked.sort((a, b) => {
    if (a.key[0] !== b.key[0]) return a.key[0] - b.key[0];
    const x = a.key[1];
    const y = b.key[1];
    return (x < y ? -1 : x > y ? 1 : 0) * sign || a.docid - b.docid;
  });
  let i = 0;
  while (i < ranked.length) {
    const bucket = new RoaringBitmap32();
    const [group, value] = ranked[i]!.key;
    while (i < ranked.length && ranked[i]!.key[0] === group && ranked[i]!.key[1] === value) bucket.add(ranked[i++]!.docid);
    yield bucket;
  }
  if (!missing.isEmpty) yield missing;
}

/** The candidates in buckets of equal rank for one sort criterion (field or `_geoPoint`). */
export function sortBuckets(store: IndexStore, candidates: Bitmap, criterion: SortCriterion): Iterable<Bitmap> {
  if (candidates.isEmpty) return [];
  if (criterion.kind === 'geo') return geoSortBuckets(store, candidates, criterion.point, criterion.order);
  // Few candidates over many values: read them. Otherwise walk the keys, lazily, so that a caller
  // that only needs the first page stops early.
  const inMemory = candidates.size <= IN_MEMORY_MAX && valueCount(store, criterion.field) > candidates.size;
  return inMemory
    ? sortInMemory(store, candidates, criterion.field, criterion.order)
    : walkFacetKeys(store, candidates, criterion.field, criterion.order);
}

/** The candidates fully ordered by several criteria (ties broken by docid): a convenience for tests and documents listing. */
export function sortDocids(store: IndexStore, candidates: Bitmap, criteria: readonly SortCriterion[]): number[] {
  const out: number[] = [];
  const refine = (bucket: Bitmap, depth: number): void => {
    if (depth === criteria.length || bucket.size <= 1) {
      for (const docid of bucket) out.push(docid);
      return;
    }
    for (const sub of sortBuckets(store, bucket, criteria[depth]!)) refine(sub, depth + 1);
  };
  refine(candidates, 0);
  return out;
}
