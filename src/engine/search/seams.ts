/**
 * The points where keyword search hands over to the filter, facet, sort, geo and distinct
 * modules, kept in one place so the search flow reads the same whichever implementation sits
 * behind.
 */
import type { Index } from '../index/index.js';
import type { Bitmap } from '../index/store.js';
import type { Settings } from '../settings/types.js';
import { computeFacets as facetCounts, type FacetResult } from './facets/distribution.js';
import { docFacetValues } from './facets/databases.js';
import { parseSort, parseRankingRuleSort, type SortCriterion } from './sort/parse.js';
import { sortBuckets } from './sort/buckets.js';
import { checkDistinctField } from './distinct.js';
import { geoDistance } from './geo/query.js';
import { toBitmap, type RankingRule } from './ranking/rules.js';

export type { FacetResult, SortCriterion };

export function filterDocids(index: Index, filter: unknown): Bitmap {
  return index.filterDocids(filter, 'invalid_search_filter');
}

export function parseSortParam(sort: string[] | null, settings: Settings): SortCriterion[] | null {
  return parseSort(sort, settings);
}

function criterionKey(c: SortCriterion): string {
  return c.kind === 'geo' ? `_geoPoint(${c.point[0]}, ${c.point[1]}):${c.order}` : `${c.field}:${c.order}`;
}

/** One sort criterion as a ranking rule: the sort module's buckets, with the bucket's value as detail. */
export function sortRule(criterion: SortCriterion): RankingRule {
  const key = criterionKey(criterion);
  return {
    key,
    needsTerms: false,
    *split(docids, active, ctx) {
      for (const bucket of sortBuckets(ctx.store, toBitmap(docids), criterion)) {
        const first = bucket.minimum();
        let extra: Record<string, unknown>;
        if (criterion.kind === 'geo') extra = { value: criterion.point, distance: geoDistance(ctx.store, first, criterion.point) ?? null };
        else {
          const values = docFacetValues(ctx.store, criterion.field, first);
          extra = { value: values && values.length > 0 ? (criterion.order === 'asc' ? values[0] : values[values.length - 1]) : null };
        }
        yield { docids: bucket, active, detail: { key, extra } };
      }
    },
  };
}

/** A `field:asc|desc` ranking rule, or null when the rule is not of that form. */
export function customRankingRule(rule: string): RankingRule | null {
  const c = parseRankingRuleSort(rule);
  return c ? sortRule(c) : null;
}

export function sortRules(criteria: readonly SortCriterion[]): RankingRule[] {
  return criteria.map((c) => sortRule(c));
}

export function computeFacets(index: Index, candidates: Bitmap, facets: readonly string[], settings: Settings): FacetResult {
  return facetCounts(index.store, candidates, facets, settings);
}

/** A predicate keeping the first document of each value of the distinct field, in ranking order. */
export function distinctFilter(index: Index, field: string): (docid: number) => boolean {
  const seen = new Set<number | string>();
  return (docid) => {
    const values = docFacetValues(index.store, field, docid);
    if (!values || values.length === 0) return true;
    if (values.some((v) => seen.has(v))) return false;
    for (const v of values) seen.add(v);
    return true;
  };
}

export function checkDistinct(settings: Settings, field: string): void {
  checkDistinctField(settings, field);
}
