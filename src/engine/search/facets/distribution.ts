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
import {
  distinctValueCount,
  docFacetValues,
  facetedFields,
  numberEntries,
  readBitmap,
  stringKeys,
  stringOriginal,
} from './databases.js';

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
  strings: Array<[normalized: string, original: string, count: number]>;
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

function countByValues(store: IndexStore, field: string, candidates: Bitmap): Counted {
  const numbers: Array<[number, number]> = [];
  for (const { value, docids } of numberEntries(store, field)) {
    const n = docids.andCardinality(candidates);
    if (n > 0) numbers.push([value, n]);
  }
  const strings: Counted['strings'] = [];
  for (const { value, original, raw } of stringKeys(store, field)) {
    const n = readBitmap(raw).andCardinality(candidates);
    if (n > 0) strings.push([value, original, n]);
  }
  return { numbers, strings };
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
  return {
    numbers: [...numbers].sort((a, b) => a[0] - b[0]),
    strings: [...strings]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([v, n]) => [v, stringOriginal(store, field, v) ?? v, n]),
  };
}

function count(store: IndexStore, field: string, candidates: Bitmap): Counted {
  if (candidates.isEmpty) return { numbers: [], strings: [] };
  // Walking the values costs one bitmap per value; reading documents costs one read per candidate.
  const values = distinctValueCount(store, field, candidates.size + 1);
  return values > candidates.size ? countByDocuments(store, field, candidates) : countByValues(store, field, candidates);
}

export function sortOrderFor(settings: Settings, field: string): 'alpha' | 'count' {
  const by = settings.faceting?.sortFacetValuesBy ?? {};
  return by[field] ?? by['*'] ?? 'alpha';
}

function distribution(counted: Counted, order: 'alpha' | 'count', max: number): Record<string, number> {
  let entries: Array<[string, number]> = [
    ...counted.numbers.map(([v, n]): [string, number] => [numberLabel(v), n]),
    ...counted.strings.map(([, original, n]): [string, number] => [original, n]),
  ];
  // Alpha is the order of the facet databases already: numbers, then strings.
  if (order === 'count') entries = entries.map((e, i) => [e, i] as const).sort((a, b) => b[0][1] - a[0][1] || a[1] - b[1]).map(([e]) => e);
  const out: Record<string, number> = {};
  for (const [label, n] of entries.slice(0, max)) out[label] = (out[label] ?? 0) + n;
  return out;
}

function stats(counted: Counted): FacetStats | null {
  if (counted.numbers.length === 0) return null;
  return { min: counted.numbers[0]![0], max: counted.numbers[counted.numbers.length - 1]![0] };
}

/** `facetDistribution` and `facetStats` of `facets` among `candidates`. */
export function computeFacets(store: IndexStore, candidates: Bitmap, facets: readonly string[], settings: Settings): FacetResult {
  const result: FacetResult = { facetDistribution: {}, facetStats: {} };
  const max = settings.faceting?.maxValuesPerFacet ?? 100;
  for (const field of resolveFacetNames(store, settings, facets)) {
    const counted = count(store, field, candidates);
    result.facetDistribution[field] = distribution(counted, sortOrderFor(settings, field), max);
    const s = stats(counted);
    if (s) result.facetStats[field] = s;
  }
  return result;
}
