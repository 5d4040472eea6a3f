/**
 * `POST /indexes/:uid/facet-search`: the values of one facet that match `facetQuery` (prefix,
 * typo tolerant like the keyword search), counted among the candidates the caller computed from
 * `q` and `filter`.
 */
import { SearchError } from '../../errors.js';
import type { Bitmap, IndexStore } from '../../index/store.js';
import type { Settings } from '../../settings/types.js';
import { filterablePatterns, isFacetSearchable } from './attributes.js';
import { countDocids, numberRange, stringOriginal, stringRange } from './databases.js';
import { numberLabel, sortOrderFor } from './distribution.js';

export interface FacetSearchRequest {
  facetName?: unknown;
  facetQuery?: unknown;
  exhaustiveFacetCount?: unknown;
  [key: string]: unknown;
}

export interface FacetHit {
  value: string;
  count: number;
}

export interface FacetSearchResult {
  facetHits: FacetHit[];
  facetQuery: string | null;
  processingTimeMs: number;
}

/** Case-folded, accent-free form used to compare a query with facet values. */
export function foldForMatch(text: string): string {
  // ASCII needs no decomposition: skip the costly normalize for the common case
  if (!/[^\x00-\x7f]/.test(text)) return text.toLowerCase().trim();
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().trim();
}

/** Smallest edit distance (with transpositions) between `query` and any prefix of `text`. */
export function prefixDistance(query: string, text: string, bound: number): number {
  const q = [...query];
  const t = [...text];
  if (q.length === 0) return 0;
  let prev2: number[] | null = null;
  let prev = Array.from({ length: t.length + 1 }, () => 0).map((_, j) => j);
  let best = Number.POSITIVE_INFINITY;
  // rows are query characters, columns text characters; the answer is the min of the last row
  for (let i = 1; i <= q.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= t.length; j++) {
      const cost = q[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (prev2 && i > 1 && j > 1 && q[i - 1] === t[j - 2] && q[i - 2] === t[j - 1]) v = Math.min(v, prev2[j - 2]! + 1);
      row.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > bound) return bound + 1;
    prev2 = prev;
    prev = row;
  }
  for (const v of prev) best = Math.min(best, v);
  return best;
}

function allowedTypos(query: string, settings: Settings): number {
  const typo = settings.typoTolerance;
  if (!typo?.enabled) return 0;
  const n = [...query].length;
  if (n >= typo.minWordSizeForTypos.twoTypos) return 2;
  if (n >= typo.minWordSizeForTypos.oneTypo) return 1;
  return 0;
}

/** Whether a facet value answers the query: the value, or one of its words, starts with it. */
function matches(value: string, query: string, typos: number): boolean {
  if (query === '') return true;
  const folded = foldForMatch(value);
  if (folded.startsWith(query)) return true;
  const words = folded.split(/[\s\-_/,.;:()]+/).filter(Boolean);
  if (words.some((w) => w.startsWith(query))) return true;
  if (typos === 0) return false;
  // a typo on the first letter costs two, as in the keyword search
  const candidates = [folded, ...words];
  return candidates.some((w) => {
    const d = prefixDistance(query, w, typos);
    const firstLetter = w[0] !== query[0] ? 1 : 0;
    return d + firstLetter <= typos;
  });
}

function validateFacetName(settings: Settings, facetName: unknown): string {
  if (facetName === undefined) {
    throw new SearchError('missing_facet_search_facet_name', 'Missing field `facetName`');
  }
  if (typeof facetName !== 'string') {
    throw new SearchError(
      'invalid_facet_search_facet_name',
      `Invalid value type at \`.facetName\`: expected a string, but found ${describe(facetName)}: \`${JSON.stringify(facetName)}\``,
    );
  }
  if (settings.facetSearch === false) {
    throw new SearchError('facet_search_disabled', 'The facet search is disabled for this index');
  }
  if (!isFacetSearchable(settings, facetName)) {
    const patterns = filterablePatterns(settings, (f) => f.facetSearch);
    const available = patterns.length
      ? `Available facet-searchable attributes patterns are: \`${patterns.join(', ')}\`.`
      : 'This index does not have configured facet-searchable attributes.';
    throw new SearchError(
      'invalid_facet_search_facet_name',
      `Attribute \`${facetName}\` is not facet-searchable. ${available} To make it facet-searchable add it to the \`filterableAttributes\` index settings.`,
    );
  }
  return facetName;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? (value >= 0 ? 'a positive integer' : 'a negative integer') : 'a number';
  return `a ${typeof value}`;
}

/** Check `facetName` and `facetQuery`; returns the facet field and the query (null when absent). */
export function validateFacetSearch(settings: Settings, request: FacetSearchRequest): { field: string; facetQuery: string | null } {
  const field = validateFacetName(settings, request.facetName);
  if (request.facetQuery !== undefined && request.facetQuery !== null && typeof request.facetQuery !== 'string') {
    throw new SearchError(
      'invalid_facet_search_facet_query',
      `Invalid value type at \`.facetQuery\`: expected a string, but found ${describe(request.facetQuery)}: \`${JSON.stringify(request.facetQuery)}\``,
    );
  }
  return { field, facetQuery: (request.facetQuery as string | null | undefined) ?? null };
}

/** Answer a facet search; `candidates` are the documents matching the request's `q` and `filter`. */
export function facetSearch(store: IndexStore, settings: Settings, request: FacetSearchRequest, candidates: Bitmap): FacetSearchResult {
  const started = performance.now();
  const { field, facetQuery } = validateFacetSearch(settings, request);
  const query = foldForMatch(facetQuery ?? '');
  const typos = allowedTypos(query, settings);
  const max = settings.faceting?.maxValuesPerFacet ?? 100;

  const hits: FacetHit[] = [];
  // In alpha order the first `max` hits are the answer; in count order every value must be seen.
  const enough = () => sortOrderFor(settings, field) === 'alpha' && hits.length >= max;
  if (!candidates.isEmpty) {
    for (const { value, raw } of numberRange(store, field)) {
      if (enough()) break;
      const label = numberLabel(value);
      if (!matches(label, query, 0)) continue;
      const n = countDocids(raw, candidates);
      if (n > 0) hits.push({ value: label, count: n });
    }
    // Values are matched on their normalized form (case-folded already), shown in their original one.
    for (const { value, raw } of stringRange(store, field)) {
      if (enough()) break;
      if (!matches(value, query, typos)) continue;
      const n = countDocids(raw, candidates);
      if (n > 0) hits.push({ value: stringOriginal(store, field, value) ?? value, count: n });
    }
  }
  if (sortOrderFor(settings, field) === 'count') hits.sort((a, b) => b.count - a.count);
  return {
    facetHits: hits.slice(0, max),
    facetQuery,
    processingTimeMs: Math.round(performance.now() - started),
  };
}
