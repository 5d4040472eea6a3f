import { describe, expect, it } from 'vitest';
import { parseSearchParams, searchQueryToBody } from './params.js';

describe('search parameters', () => {
  it('applies the reference defaults', () => {
    expect(parseSearchParams({})).toMatchObject({
      q: null, offset: 0, limit: 20, page: null, hitsPerPage: null, cropLength: 10, cropMarker: '…',
      highlightPreTag: '<em>', highlightPostTag: '</em>', matchingStrategy: 'last', rankingScoreThreshold: null,
    });
  });
  it('converts a GET query string', () => {
    const body = searchQueryToBody({ q: 'star wars', limit: '5', attributesToRetrieve: 'title, year', showRankingScore: 'true', sort: 'year:desc', rankingScoreThreshold: '0.5' });
    expect(body).toEqual({ q: 'star wars', limit: 5, attributesToRetrieve: ['title', 'year'], showRankingScore: true, sort: ['year:desc'], rankingScoreThreshold: 0.5 });
    expect(() => searchQueryToBody({ limit: 'ten' })).toThrow(expect.objectContaining({ code: 'invalid_search_limit' }));
    expect(() => searchQueryToBody({ showMatchesPosition: 'yes' })).toThrow(expect.objectContaining({ code: 'invalid_search_show_matches_position' }));
  });
  it('names the field in type errors', () => {
    expect(() => parseSearchParams({ attributesToHighlight: [1] })).toThrow(expect.objectContaining({ code: 'invalid_search_attributes_to_highlight', message: expect.stringContaining('.attributesToHighlight[0]') }));
    expect(() => parseSearchParams({ locales: ['xx'] })).toThrow(expect.objectContaining({ code: 'invalid_search_locales' }));
  });
});
