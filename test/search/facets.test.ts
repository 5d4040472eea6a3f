/** Facet distribution, stats, facet search, sort and distinct on the movies fixture (7,943 films of all years). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RoaringBitmap32 } from '../../src/engine/index/store.js';
import { computeFacets } from '../../src/engine/search/facets/distribution.js';
import { facetSearch } from '../../src/engine/search/facets/facet-search.js';
import { evaluateFilter } from '../../src/engine/search/filter/evaluate.js';
import { parseFilter } from '../../src/engine/search/filter/parser.js';
import { parseSort } from '../../src/engine/search/sort/parse.js';
import { sortBuckets, sortDocids } from '../../src/engine/search/sort/buckets.js';
import { distinctBitmap, distinctStream, checkDistinctField } from '../../src/engine/search/distinct.js';
import { SearchError } from '../../src/engine/errors.js';
import { facetExtension } from '../../src/engine/search/facets/extension.js';
import type { Document } from '../../src/engine/types.js';
import { movies, TestIndex } from './helpers.js';

function brutGenreCounts(docs: Document[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of docs) for (const g of new Set(m.genres as string[])) counts.set(g, (counts.get(g) ?? 0) + 1);
  return counts;
}

function thrown(fn: () => unknown): SearchError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SearchError);
    return e as SearchError;
  }
  throw new Error('expected a SearchError');
}

describe('facets on movies', () => {
  let index: TestIndex;
  const all = () => movies();

  beforeAll(async () => {
    index = new TestIndex('id', {
      filterableAttributes: ['genres', 'year', { attributePatterns: ['title'], features: { facetSearch: false, filter: { equality: true, comparison: false } } }],
      sortableAttributes: ['year', 'title'],
    });
    // the whole data set, in three batches like a client would send it
    const docs = all();
    const batch = Math.ceil(docs.length / 3);
    for (let i = 0; i < docs.length; i += batch) await index.add(docs.slice(i, i + batch));
  }, 120_000);
  afterAll(() => index.close());

  it('counts genres exactly, over everything and under a filter', () => {
    const everything = index.store.docids();
    const { facetDistribution, facetStats } = computeFacets(index.store, everything, ['genres', 'year'], index.settings);
    const want = brutGenreCounts(all());
    expect(Object.keys(facetDistribution.genres!).length).toBe(want.size);
    for (const [g, n] of want) expect(facetDistribution.genres![g], g).toBe(n);
    expect(facetDistribution.genres!.Drama).toBe(3428);
    expect(facetDistribution.genres!.Comedy).toBe(2132);
    expect(facetStats.year).toEqual({ min: 1900, max: 2023 });
    expect(facetStats.genres).toBeUndefined();
    // alpha order by default
    const keys = Object.keys(facetDistribution.genres!);
    expect(keys).toEqual([...keys].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));

    const recent = evaluateFilter(index.store, parseFilter('year >= 2000')!, index.settings);
    const sub = computeFacets(index.store, recent, ['genres'], index.settings);
    const wantRecent = brutGenreCounts(all().filter((m) => (m.year as number) >= 2000));
    expect(sub.facetDistribution.genres).toEqual(Object.fromEntries(wantRecent));
    expect(sub.facetDistribution.genres!.Horror).toBe(454);

    // few candidates: counted by reading documents, same answer
    const few = new RoaringBitmap32([...recent].slice(0, 40));
    const fewDocs = [...few].map((d) => index.store.getDocument(d)!);
    expect(computeFacets(index.store, few, ['genres'], index.settings).facetDistribution.genres).toEqual(
      Object.fromEntries([...brutGenreCounts(fewDocs)].sort((a, b) => (a[0].toLowerCase() < b[0].toLowerCase() ? -1 : 1))),
    );
  });

  it('honours maxValuesPerFacet, sortFacetValuesBy and wildcards', () => {
    const settings = { ...index.settings, faceting: { maxValuesPerFacet: 3, sortFacetValuesBy: { genres: 'count' as const, '*': 'alpha' as const } } };
    const { facetDistribution } = computeFacets(index.store, index.store.docids(), ['genres', 'year'], settings);
    expect(facetDistribution.genres).toEqual({ Drama: 3428, Comedy: 2132, Silent: 1994 });
    expect(Object.keys(facetDistribution.year!)).toEqual(['1900', '1901', '1902']);
    const star = computeFacets(index.store, new RoaringBitmap32(), ['*'], index.settings);
    expect(Object.keys(star.facetDistribution).sort()).toEqual(['genres', 'title', 'year']);
    expect(thrown(() => computeFacets(index.store, index.store.docids(), ['cast'], index.settings)).message).toBe(
      'Invalid facet distribution, attribute `cast` is not filterable. The available filterable attributes are `genres, title, year`.',
    );
  });

  it('answers facet searches with prefix and typos, restricted to the candidates', () => {
    const everything = index.store.docids();
    const hits = facetSearch(index.store, index.settings, { facetName: 'genres', facetQuery: 'sci' }, everything).facetHits;
    expect(hits.map((h) => h.value)).toContain('Science Fiction');
    expect(hits.find((h) => h.value === 'Science Fiction')!.count).toBe(brutGenreCounts(all()).get('Science Fiction'));
    // one typo allowed from five characters
    expect(facetSearch(index.store, index.settings, { facetName: 'genres', facetQuery: 'romanec' }, everything).facetHits.map((h) => h.value)).toContain('Romance');
    expect(facetSearch(index.store, index.settings, { facetName: 'genres', facetQuery: 'dram' }, everything).facetHits).toEqual([{ value: 'Drama', count: 3428 }]);
    const horror = evaluateFilter(index.store, parseFilter('genres = Horror AND year >= 2000')!, index.settings);
    expect(facetSearch(index.store, index.settings, { facetName: 'genres', facetQuery: 'horr' }, horror).facetHits).toEqual([{ value: 'Horror', count: 454 }]);
    expect(thrown(() => facetSearch(index.store, index.settings, { facetName: 'title' }, everything)).code).toBe('invalid_facet_search_facet_name');
    expect(thrown(() => facetSearch(index.store, index.settings, {}, everything)).code).toBe('missing_facet_search_facet_name');
    const disabled = thrown(() => facetSearch(index.store, { ...index.settings, facetSearch: false }, { facetName: 'genres' }, everything));
    expect([disabled.code, disabled.status]).toEqual(['facet_search_disabled', 400]);
  });

  it('sorts by year and title like a brute-force sort, numbers first and missing last', () => {
    const criteria = parseSort(['year:desc', 'title:asc'], index.settings)!;
    const candidates = evaluateFilter(index.store, parseFilter('genres = Western')!, index.settings);
    const got = sortDocids(index.store, candidates, criteria).slice(0, 50).map((d) => index.store.getDocument(d)!.id);
    const want = all()
      .filter((m) => (m.genres as string[]).includes('Western'))
      .sort((a, b) => (b.year as number) - (a.year as number) || (String(a.title).toLowerCase().trim() < String(b.title).toLowerCase().trim() ? -1 : String(a.title).toLowerCase().trim() > String(b.title).toLowerCase().trim() ? 1 : 0))
      .slice(0, 50)
      .map((m) => m.id);
    expect(got).toEqual(want);
    // the lazy walk over all documents: first bucket is the oldest year
    const first = sortBuckets(index.store, index.store.docids(), { kind: 'field', field: 'year', order: 'asc' })[Symbol.iterator]().next().value!;
    expect(first.size).toBe(all().filter((m) => m.year === 1900).length);
  });

  it('honours the features of object-form filterable rules', () => {
    // `title` allows equality but not comparison
    expect(evaluateFilter(index.store, parseFilter('title = "The Great Train Robbery"')!, index.settings).size).toBeGreaterThan(0);
    const err = thrown(() => evaluateFilter(index.store, parseFilter('title > abc')!, index.settings));
    expect(err.code).toBe('invalid_search_filter');
    expect(err.message).toMatch(/^Filter operator `>` is not allowed for the attribute `title`\.\n/);
    expect(err.message).toMatch(/rule #2 in `filterableAttributes`\n1:6 title > abc$/);
  });

  it('validates sort expressions with the reference messages', () => {
    expect(thrown(() => parseSort(['genres:asc'], index.settings)).message).toBe(
      'Attribute `genres` is not sortable. Available sortable attributes are: `title, year`.',
    );
    expect(thrown(() => parseSort(['year'], index.settings)).message).toBe(
      'Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found `year`.',
    );
    expect(thrown(() => parseSort(['_geoPoint(1,2):asc'], index.settings)).message).toBe(
      'Attribute `_geo` is not sortable. Available sortable attributes are: `title, year`.',
    );
    expect(thrown(() => parseSort(['_geo:asc'], index.settings)).message).toMatch(/^`_geo` is a reserved keyword and thus can't be used as a sort expression/);
    expect(thrown(() => parseSort('year:asc', { ...index.settings, rankingRules: ['words'] })).code).toBe('invalid_search_sort');
    const geo = { ...index.settings, sortableAttributes: ['_geo', 'year'] };
    expect(parseSort(['_geoPoint(1', ' 2):asc', 'year:desc'], geo)).toEqual([
      { kind: 'geo', point: [1, 2], order: 'asc' },
      { kind: 'field', field: 'year', order: 'desc' },
    ]);
    expect(parseSort('year:asc,title:desc', index.settings)).toEqual([
      { kind: 'field', field: 'year', order: 'asc' },
      { kind: 'field', field: 'title', order: 'desc' },
    ]);
  });

  it('keeps one document per distinct value', () => {
    const candidates = evaluateFilter(index.store, parseFilter('genres = Musical')!, index.settings);
    const years = new Set(all().filter((m) => (m.genres as string[]).includes('Musical')).map((m) => m.year));
    expect(distinctBitmap(index.store, candidates, 'year').size).toBe(years.size);
    const ordered = sortDocids(index.store, candidates, [{ kind: 'field', field: 'year', order: 'desc' }]);
    const kept = [...distinctStream(index.store, ordered, 'year')].map((d) => index.store.getDocument(d)!.year);
    expect(kept).toEqual([...years].sort((a, b) => (b as number) - (a as number)));
    expect(distinctBitmap(index.store, index.store.docids(), 'year').size).toBe(124);
    expect(thrown(() => checkDistinctField(index.settings, 'cast')).code).toBe('invalid_search_distinct');
  });

  it('asks for a re-index only when faceted settings change', () => {
    const s = index.settings;
    expect(facetExtension.needsReindex(s, { ...s, stopWords: ['the'] })).toBe(false);
    expect(facetExtension.needsReindex(s, { ...s, sortableAttributes: ['year'] })).toBe(true);
    // a custom ranking rule ranks by facet values: its field must be stored even when not sortable
    expect(facetExtension.needsReindex(s, { ...s, rankingRules: [...s.rankingRules, 'id:desc'] })).toBe(true);
  });
});
