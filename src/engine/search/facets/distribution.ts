/**
 * `facets` at search time: `facetDistribution` (value -> count among the candidates) and
 * `facetStats` (min/max of the number values among the candidates), honouring
 * `faceting.maxValuesPerFacet` and `faceting.sortFacetValuesBy`.
 *
 * Two ways to count, picked per field: walk the field's facet values and intersect each bitmap
 * with the candidates (cheap when the field has few values), or read each candidate's values
 * (cheap when the candidates are few).
 */
import { SearchError } from '../../errors.js';
import type { Bitmap, IndexStore } from '../../index/store.js';
import type { Settings } from '../../settings/types.js';
import { filterablePatterns, filterFeatures, matchesPattern } from './attributes.js';
import { countDocids, docFacetValues, facetedFields, numberRange, stringOriginal, stringRange, valueCount } from './databases.js';

export interface FacetStats {
  min: number;
  max: number;
}

export interface FacetResult {
  facetDistribution: Record<string, Record<string, number>>;
  facetStats: Record<string, FacetStats>;
}

interface Counted {
  /** Number facets first (numeric order), then strings (code point order of the normalized value). */
  numbers: Array<[number, number]>;
  strings: Array<[normalized: string, count: number]>;
  stats: FacetStats | null;
}

/** Display form of a number facet, as the reference prints an f64 (`1999`, `3.5`). */
export function numberLabel(n: number): string {
  return String(n);
}

function isFacetable(settings: Settings, field: string): boolean {
  return filterFeatures(settings, field) !== null;
}

/** Resolve `facets` (names, `*` and patterns) to concrete fields; refuse non-filterable names. */
export function resolveFacetNames(store: IndexStore, settings: Settings, facets: readonly string[]): string[] {
  const patterns = filterablePatterns(settings, () => true);
  if (facets.length > 0 && patterns.length === 0) {
    throw new SearchError('invalid_search_facets', 'Invalid facet distribution, this index does not have configured filterable attributes.');
  }
  const invalid = facets.filter((f) => !f.includes('*') && !isFacetable(settings, f));
  if (invalid.length) {
    const names = invalid.join(', ');
    const subject = invalid.length === 1 ? `attribute \`${names}\` is` : `attributes \`${names}\` are`;
    const available = patterns.length === 1 ? `The available filterable attribute is \`${patterns[0]}\`.` : `The available filterable attributes are \`${patterns.join(', ')}\`.`;
    throw new SearchError('invalid_search_facets', `Invalid facet distribution, ${subject} not filterable. ${available}`);
  }
  const out: string[] = [];
  const seen = new Set<string>();
  const push = (f: string) => {
    if (!seen.has(f)) {
      seen.add(f);
      out.push(f);
    }
  };
  let known: string[] | null = null;
  for (const facet of facets) {
    if (!facet.includes('*')) {
      push(facet);
      continue;
    }
    known ??= facetedFields(store).sort();
    for (const field of known) if (matchesPattern(facet, field) && isFacetable(settings, field)) push(field);
  }
  return out;
}

/** Min and max number values among the candidates, by scanning from each end. */
function numberStats(store: IndexStore, field: string, candidates: Bitmap): FacetStats | null {
  let min: number | null = null;
  for (const { value, raw } of numberRange(store, field)) {
    if (countDocids(raw, candidates) > 0) {
      min = value;
      break;
    }
  }
  if (min === null) return null;
  for (const { value, raw } of numberRange(store, field, { reverse: true })) {
    if (countDocids(raw, candidates) > 0) return { min, max: value };
  }
  return { min, max: min };
}

/** Walk the field's values in order; with `stopAfter`, stop once that many values were counted. */
function countByValues(store: IndexStore, field: string, candidates: Bitmap, stopAfter: number): Counted {
  const numbers: Counted['numbers'] = [];
  const strings: Counted['strings'] = [];
  let found = 0;
  for (const { value, raw } of numberRange(store, field)) {
    if (found >= stopAfter) break;
    const n = countDocids(raw, candidates);
    if (n > 0) {
      numbers.push([value, n]);
      found++;
    }
  }
  for (const { value, raw } of stringRange(store, field)) {
    if (found >= stopAfter) break;
    const n = countDocids(raw, candidates);
    if (n > 0) {
      strings.push([value, n]);
      found++;
    }
  }
  return { numbers, strings, stats: numberStats(store, field, candidates) };
}

function countByDocuments(store: IndexStore, field: string, candidates: Bitmap): Counted {
  const numbers = new Map<number, number>();
  const strings = new Map<string, number>();
  for (const docid of candidates) {
    for (const v of docFacetValues(store, field, docid) ?? []) {
      if (typeof v === 'number') numbers.set(v, (numbers.get(v) ?? 0) + 1);
      else strings.set(v, (strings.get(v) ?? 0) + 1);
    }
  }
  const sortedNumbers = [...numbers].sort((a, b) => a[0] - b[0]);
  return {
    numbers: sortedNumbers,
    strings: [...strings].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
    stats: sortedNumbers.length ? { min: sortedNumbers[0]![0], max: sortedNumbers[sortedNumbers.length - 1]![0] } : null,
  };
}

/**
 * Count one field, choosing the cheaper path: walking values costs about one small read per value
 * visited (in alpha order only until `max` values were found, about max × documents / candidates
 * values), reading documents costs a few reads per candidate.
 */
function count(store: IndexStore, field: string, candidates: Bitmap, order: 'alpha' | 'count', max: number): Counted {
  if (candidates.isEmpty) return { numbers: [], strings: [], stats: null };
  const values = valueCount(store, field);
  const total = Math.max(1, store.documentCount);
  const walked = order === 'alpha' ? Math.min(values, (max * total) / candidates.size) : values;
  if (candidates.size * 3 < walked) return countByDocuments(store, field, candidates);
  return countByValues(store, field, candidates, order === 'alpha' ? max : Infinity);
}

export function sortOrderFor(settings: Settings, field: string): 'alpha' | 'count' {
  const by = settings.faceting?.sortFacetValuesBy ?? {};
  return by[field] ?? by['*'] ?? 'alpha';
}

function distribution(store: IndexStore, field: string, counted: Counted, order: 'alpha' | 'count', max: number): Record<string, number> {
  type Entry = { label: () => string; n: number };
  let entries: Entry[] = [
    ...counted.numbers.map(([v, n]): Entry => ({ label: () => numberLabel(v), n })),
    ...counted.strings.map(([v, n]): Entry => ({ label: () => stringOriginal(store, field, v) ?? v, n })),
  ];
  // Alpha is the order of the facet databases already: numbers, then strings. The sort is stable.
  if (order === 'count') entries = [...entries].sort((a, b) => b.n - a.n);
  // Built from entries so that any value, even `__proto__`, becomes an own property.
  const out = new Map<string, number>();
  for (const { label, n } of entries.slice(0, max)) {
    const text = label();
    out.set(text, (out.get(text) ?? 0) + n);
  }
  return Object.fromEntries(out);
}

/** `facetDistribution` and `facetStats` of `facets` among `candidates`. */
export function computeFacets(store: IndexStore, candidates: Bitmap, facets: readonly string[], settings: Settings): FacetResult {
  const result: FacetResult = { facetDistribution: {}, facetStats: {} };
  const max = settings.faceting?.maxValuesPerFacet ?? 100;
  for (const field of resolveFacetNames(store, settings, facets)) {
    const order = sortOrderFor(settings, field);
    const counted = count(store, field, candidates, order, max);
    result.facetDistribution[field] = distribution(store, field, counted, order, max);
    if (counted.stats) result.facetStats[field] = counted.stats;
  }
  return result;
}
