/**
 * The points where keyword search hands over to the filter, facet, sort and distinct modules.
 * Kept in one place so the search flow reads the same whichever implementation sits behind.
 */
import roaring from 'roaring';
import type { Index } from '../index/index.js';
import type { Bitmap } from '../index/store.js';
import type { Settings } from '../settings/types.js';
import { getPath } from '../index/documents.js';
import { SearchError } from '../errors.js';
import { parseSortCriteria, type SortCriterion } from './ranking/sort.js';
import { sortRule, type RankingRule } from './ranking/rules.js';

const { RoaringBitmap32 } = roaring;

export function filterDocids(index: Index, filter: unknown): Bitmap {
  return index.filterDocids(filter, 'invalid_search_filter');
}

export function parseSortParam(sort: string[] | null, settings: Settings): SortCriterion[] | null {
  if (!sort || sort.length === 0) return null;
  if (!settings.rankingRules.includes('sort')) {
    throw new SearchError('invalid_search_sort', 'You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.');
  }
  return parseSortCriteria(sort, settings);
}

/** A `field:asc|desc` ranking rule, or null when the rule is not of that form. */
export function customRankingRule(rule: string): RankingRule | null {
  const m = /^(.+):(asc|desc)$/.exec(rule);
  return m ? sortRule({ field: m[1]!, order: m[2] as 'asc' | 'desc' }) : null;
}

export function sortRules(criteria: readonly SortCriterion[]): RankingRule[] {
  return criteria.map((c) => sortRule(c));
}

export interface FacetResult {
  facetDistribution: Record<string, Record<string, number>>;
  facetStats: Record<string, { min: number; max: number }>;
}

/** Facet counts over the candidates, from the documents' values. */
export function computeFacets(index: Index, candidates: Bitmap, facets: readonly string[], settings: Settings): FacetResult {
  const facetDistribution: FacetResult['facetDistribution'] = {};
  const facetStats: FacetResult['facetStats'] = {};
  for (const field of facets) facetDistribution[field] = {};
  for (const docid of candidates) {
    const doc = index.store.getDocument(docid);
    if (!doc) continue;
    for (const field of facets) {
      const raw = getPath(doc, field);
      const values = Array.isArray(raw) ? raw : [raw];
      const seen = new Set<string>();
      for (const v of values) {
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
        const key = String(v);
        if (seen.has(key)) continue;
        seen.add(key);
        facetDistribution[field]![key] = (facetDistribution[field]![key] ?? 0) + 1;
        if (typeof v === 'number') {
          const s = (facetStats[field] ??= { min: v, max: v });
          s.min = Math.min(s.min, v);
          s.max = Math.max(s.max, v);
        }
      }
    }
  }
  const max = settings.faceting.maxValuesPerFacet;
  for (const field of facets) {
    const entries = Object.entries(facetDistribution[field]!).sort((a, b) => (a[0] < b[0] ? -1 : 1)).slice(0, max);
    facetDistribution[field] = Object.fromEntries(entries);
  }
  return { facetDistribution, facetStats };
}

/** A predicate keeping the first document of each value of the distinct field, in ranking order. */
export function distinctFilter(index: Index, field: string): (docid: number) => boolean {
  const seen = new Set<string>();
  return (docid) => {
    const doc = index.store.getDocument(docid);
    const raw = doc ? getPath(doc, field) : undefined;
    const values = (Array.isArray(raw) ? raw : [raw]).filter((v) => v !== null && v !== undefined).map((v) => JSON.stringify(v));
    if (values.length === 0) return true;
    if (values.some((v) => seen.has(v))) return false;
    for (const v of values) seen.add(v);
    return true;
  };
}

export function checkDistinct(settings: Settings, field: string): void {
  const filterable = settings.filterableAttributes.some((a) => (typeof a === 'string' ? a === field : a.attributePatterns.includes(field)));
  if (field !== settings.distinctAttribute && !filterable) {
    throw new SearchError('invalid_search_distinct', `Attribute \`${field}\` is not filterable and thus, cannot be used as distinct attribute.`);
  }
}

export const EMPTY_BITMAP = new RoaringBitmap32();
