import { describe, expect, it } from 'vitest';
import { SearchError } from '../errors.js';
import { applySettingsPatch, validateSettingsPatch } from './validate.js';
import { defaultSettings } from './types.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as SearchError).code;
  }
  return 'no error';
};

describe('validateSettingsPatch', () => {
  it('accepts a full valid patch and applies it, null resetting to defaults', () => {
    const patch = validateSettingsPatch({
      searchableAttributes: ['title', 'overview'],
      rankingRules: ['words', 'typo', 'proximity', 'attributeRank', 'sort', 'wordPosition', 'exactness', 'year:desc'],
      typoTolerance: { minWordSizeForTypos: { oneTypo: 4 }, disableOnWords: ['batman'] },
      synonyms: { wolverine: ['xmen', 'logan'] },
      filterableAttributes: ['genres', { attributePatterns: ['year'], features: { filter: { comparison: true } } }],
      localizedAttributes: [{ attributePatterns: ['*_ja'], locales: ['jpn'] }],
      stopWords: null,
      prefixSearch: 'disabled',
    });
    const next = applySettingsPatch({ ...defaultSettings(), stopWords: ['the'] }, patch);
    expect(next.searchableAttributes).toEqual(['title', 'overview']);
    expect(next.typoTolerance).toMatchObject({ enabled: true, minWordSizeForTypos: { oneTypo: 4, twoTypos: 9 }, disableOnWords: ['batman'] });
    expect(next.stopWords).toEqual([]);
    expect(next.prefixSearch).toBe('disabled');
    expect(next.filterableAttributes[1]).toEqual({ attributePatterns: ['year'], features: { facetSearch: false, filter: { equality: true, comparison: true } } });
  });
  it('rejects with the reference codes', () => {
    expect(codeOf(() => validateSettingsPatch({ unknown: 1 }))).toBe('bad_request');
    expect(codeOf(() => validateSettingsPatch({ rankingRules: ['wrods'] }))).toBe('invalid_settings_ranking_rules');
    expect(codeOf(() => validateSettingsPatch({ searchableAttributes: 'title' }))).toBe('invalid_settings_searchable_attributes');
    expect(codeOf(() => validateSettingsPatch({ typoTolerance: { minWordSizeForTypos: { oneTypo: 10, twoTypos: 5 } } }))).toBe('invalid_settings_typo_tolerance');
    expect(codeOf(() => validateSettingsPatch({ typoTolerance: { foo: true } }))).toBe('invalid_settings_typo_tolerance');
    expect(codeOf(() => validateSettingsPatch({ pagination: { maxTotalHits: -1 } }))).toBe('invalid_settings_pagination');
    expect(codeOf(() => validateSettingsPatch({ proximityPrecision: 'byLetter' }))).toBe('invalid_settings_proximity_precision');
    expect(codeOf(() => validateSettingsPatch({ localizedAttributes: [{ attributePatterns: ['a'], locales: ['xx'] }] }))).toBe('invalid_settings_localized_attributes');
    expect(codeOf(() => validateSettingsPatch({ searchCutoffMs: 1.5 }))).toBe('invalid_settings_search_cutoff_ms');
    expect(codeOf(() => validateSettingsPatch({ synonyms: { a: 'b' } }))).toBe('invalid_settings_synonyms');
    expect(codeOf(() => validateSettingsPatch({ faceting: { sortFacetValuesBy: { genre: 'random' } } }))).toBe('invalid_settings_faceting');
  });
});
