/**
 * `POST /indexes/:uid/fields`: every field the index has seen, with what the settings make of it
 * (displayed, searchable, sortable, distinct, custom ranking rule, filterable features, locales),
 * filtered on those properties and paginated, in the reference's shape.
 */
import { filterFeatures, isSortable, matchesPattern } from '../search/facets/attributes.js';
import type { Settings } from './types.js';

export interface FieldMetadata {
  name: string;
  displayed: { enabled: boolean };
  searchable: { enabled: boolean };
  sortable: { enabled: boolean };
  distinct: { enabled: boolean };
  rankingRule: { enabled: boolean; order: 'asc' | 'desc' | null };
  filterable: { enabled: boolean; sortBy: 'alpha' | 'count'; facetSearch: boolean; equality: boolean; comparison: boolean };
  localized: { locales: string[] };
}

/** Each criterion given must hold (they are ANDed); absent ones do not filter. */
export interface FieldsFilter {
  attributePatterns?: string[];
  displayed?: boolean;
  searchable?: boolean;
  sortable?: boolean;
  distinct?: boolean;
  rankingRule?: boolean;
  filterable?: boolean;
}

export interface FieldsQuery {
  offset?: number;
  limit?: number;
  filter?: FieldsFilter | null;
}

const covered = (patterns: readonly string[], field: string): boolean => patterns.some((p) => matchesPattern(p, field));

export function fieldMetadata(settings: Settings, name: string): FieldMetadata {
  const features = filterFeatures(settings, name);
  const order = customRankingOrder(settings, name);
  const sortBy = settings.faceting?.sortFacetValuesBy ?? {};
  return {
    name,
    displayed: { enabled: covered(settings.displayedAttributes ?? ['*'], name) },
    searchable: { enabled: covered(settings.searchableAttributes ?? ['*'], name) },
    sortable: { enabled: isSortable(settings, name) },
    distinct: { enabled: settings.distinctAttribute === name },
    rankingRule: { enabled: order !== null, order },
    filterable: {
      enabled: !!features && (features.equality || features.comparison || features.facetSearch),
      sortBy: sortBy[name] ?? sortBy['*'] ?? 'alpha',
      facetSearch: features?.facetSearch ?? false,
      equality: features?.equality ?? false,
      comparison: features?.comparison ?? false,
    },
    localized: { locales: (settings.localizedAttributes ?? []).find((rule) => covered(rule.attributePatterns, name))?.locales ?? [] },
  };
}

function customRankingOrder(settings: Settings, field: string): 'asc' | 'desc' | null {
  for (const rule of settings.rankingRules ?? []) {
    const m = /^(.+):(asc|desc)$/.exec(rule);
    if (m && m[1] === field) return m[2] as 'asc' | 'desc';
  }
  return null;
}

/** A name pattern of `attributePatterns`: the field itself or a `*` glob over it (not its parent object). */
function nameMatches(pattern: string, field: string): boolean {
  return pattern === field || (pattern.includes('*') && !field.startsWith(pattern + '.') && matchesPattern(pattern, field));
}

function keep(field: FieldMetadata, filter: FieldsFilter): boolean {
  if (filter.attributePatterns && !filter.attributePatterns.some((p) => nameMatches(p, field.name))) return false;
  const checks: Array<[boolean | undefined, boolean]> = [
    [filter.displayed, field.displayed.enabled],
    [filter.searchable, field.searchable.enabled],
    [filter.sortable, field.sortable.enabled],
    [filter.distinct, field.distinct.enabled],
    [filter.rankingRule, field.rankingRule.enabled],
    [filter.filterable, field.filterable.enabled],
  ];
  return checks.every(([wanted, actual]) => wanted === undefined || wanted === actual);
}

export function listFields(
  settings: Settings,
  names: readonly string[],
  query: FieldsQuery,
): { results: FieldMetadata[]; offset: number; limit: number; total: number } {
  const offset = query.offset ?? 0;
  const limit = query.limit ?? 20;
  const fields = [...names]
    .sort()
    .map((name) => fieldMetadata(settings, name))
    .filter((field) => !query.filter || keep(field, query.filter));
  return { results: fields.slice(offset, offset + limit), offset, limit, total: fields.length };
}
