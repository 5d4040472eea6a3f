/**
 * Distinct attribute: keep one document per value of a field.
 *
 * `distinctStream` filters an ordered docid stream (the ranked hits): a document is dropped when it
 * shares any value with a document already kept. Documents without the field are all kept, as in
 * the reference. `distinctBitmap` reduces a candidate set the same way for counts and facets.
 */
import { SearchError } from '../errors.js';
import { RoaringBitmap32, type Bitmap, type IndexStore } from '../index/store.js';
import type { Settings } from '../settings/types.js';
import { filterablePatterns, isFilterable } from './facets/attributes.js';
import { decoded, docFacetValues, numberRange, stringRange } from './facets/databases.js';

/** Validate a search-time `distinct` field: it must be filterable. */
export function checkDistinctField(settings: Settings, field: string, code = 'invalid_search_distinct'): void {
  if (field === settings.distinctAttribute || isFilterable(settings, field)) return;
  const patterns = filterablePatterns(settings);
  const available = patterns.length
    ? `Available filterable attributes patterns are: \`${patterns.join(', ')}\`.`
    : 'This index does not have configured filterable attributes.';
  throw new SearchError(code, `Attribute \`${field}\` is not filterable and thus, cannot be used as distinct attribute. ${available}`);
}

/** The documents of `docids` (in order) that survive distinct on `field`. */
export function* distinctStream(store: IndexStore, docids: Iterable<number>, field: string): Generator<number> {
  const seen = new Set<number | string>();
  for (const docid of docids) {
    const values = docFacetValues(store, field, docid);
    if (!values || values.length === 0) {
      yield docid;
      continue;
    }
    if (values.some((v) => seen.has(v))) continue;
    for (const v of values) seen.add(v);
    yield docid;
  }
}

/** One document per value among `candidates` (the smallest docid of each group), plus those without the field. */
export function distinctBitmap(store: IndexStore, candidates: Bitmap, field: string): Bitmap {
  if (candidates.size <= 2000) return new RoaringBitmap32(distinctStream(store, candidates, field));
  const remaining = candidates.clone();
  const kept = new RoaringBitmap32();
  const sources: Array<Iterable<{ docids: Bitmap }>> = [decoded(numberRange(store, field)), decoded(stringRange(store, field))];
  for (const source of sources) {
    for (const { docids } of source) {
      const group = RoaringBitmap32.and(docids, remaining);
      if (group.isEmpty) continue;
      kept.add(group.minimum());
      remaining.andNotInPlace(group);
      if (remaining.isEmpty) return kept;
    }
  }
  // what is left never met a value: documents without the field
  kept.orInPlace(remaining);
  return kept;
}
