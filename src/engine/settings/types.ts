/** Index settings, in their wire shape (GET /indexes/:uid/settings). */

export type RankingRule = string; // 'words' | 'typo' | 'proximity' | 'attributeRank' | 'sort' | 'wordPosition' | 'exactness' | `${field}:asc|desc`

export interface FilterableAttributeRule {
  attributePatterns: string[];
  features: {
    facetSearch: boolean;
    filter: { equality: boolean; comparison: boolean };
  };
}

export interface TypoTolerance {
  enabled: boolean;
  minWordSizeForTypos: { oneTypo: number; twoTypos: number };
  disableOnWords: string[];
  disableOnAttributes: string[];
  disableOnNumbers: boolean;
}

export interface Faceting {
  maxValuesPerFacet: number;
  sortFacetValuesBy: Record<string, 'alpha' | 'count'>;
}

export interface Pagination {
  maxTotalHits: number;
}

/** A field whose values are document ids of another index, replaced by those documents in search results. */
export interface ForeignKey {
  foreignIndexUid: string;
  fieldName: string;
}

export interface LocalizedAttributeRule {
  attributePatterns: string[];
  locales: string[];
}

/** Embedder configuration; each source validates its own fields (see src/engine/embedders). */
export type EmbedderSettings = Record<string, unknown> & { source: string };

export interface Settings {
  displayedAttributes: string[];
  searchableAttributes: string[];
  filterableAttributes: Array<string | FilterableAttributeRule>;
  sortableAttributes: string[];
  rankingRules: RankingRule[];
  stopWords: string[];
  nonSeparatorTokens: string[];
  separatorTokens: string[];
  dictionary: string[];
  synonyms: Record<string, string[]>;
  distinctAttribute: string | null;
  proximityPrecision: 'byWord' | 'byAttribute';
  typoTolerance: TypoTolerance;
  faceting: Faceting;
  pagination: Pagination;
  embedders: Record<string, EmbedderSettings>;
  searchCutoffMs: number | null;
  localizedAttributes: LocalizedAttributeRule[] | null;
  facetSearch: boolean;
  prefixSearch: 'indexingTime' | 'disabled';
  foreignKeys: ForeignKey[];
}

export const DEFAULT_RANKING_RULES: readonly RankingRule[] = [
  'words',
  'typo',
  'proximity',
  'attributeRank',
  'sort',
  'wordPosition',
  'exactness',
];

export function defaultSettings(): Settings {
  return {
    displayedAttributes: ['*'],
    searchableAttributes: ['*'],
    filterableAttributes: [],
    sortableAttributes: [],
    rankingRules: [...DEFAULT_RANKING_RULES],
    stopWords: [],
    nonSeparatorTokens: [],
    separatorTokens: [],
    dictionary: [],
    synonyms: {},
    distinctAttribute: null,
    proximityPrecision: 'byWord',
    typoTolerance: {
      enabled: true,
      minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 },
      disableOnWords: [],
      disableOnAttributes: [],
      disableOnNumbers: false,
    },
    faceting: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha' } },
    pagination: { maxTotalHits: 1000 },
    embedders: {},
    searchCutoffMs: null,
    localizedAttributes: null,
    facetSearch: true,
    prefixSearch: 'indexingTime',
    foreignKeys: [],
  };
}
