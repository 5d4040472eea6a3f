/**
 * End to end through the Engine (composed in src/engine/modules.ts): the facet and geo extensions
 * in the real document pipeline and settings task, the filter hook behind the documents routes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { computeFacets } from '../../src/engine/search/facets/distribution.js';
import { facetSearchRequest } from '../../src/engine/search/facets/facet-search-request.js';
import { sortDocids } from '../../src/engine/search/sort/buckets.js';
import { parseSort } from '../../src/engine/search/sort/parse.js';
import { movies, worldCities } from './helpers.js';

describe('facets and geo through the engine', () => {
  let dir: string;
  let engine: Engine;

  const settled = async (p: Promise<{ taskUid: number }>) => {
    const task = await engine.waitForTask((await p).taskUid, { timeoutMs: 60_000 });
    return task;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'search-facets-engine-'));
    engine = await Engine.open({ dbPath: dir, logLevel: 'off' });
    // STARTS WITH is gated by the containsFilter experimental feature
    engine.updateExperimentalFeatures({ containsFilter: true });
    await settled(engine.createIndex('movies', { primaryKey: 'id' }));
    // keyword indexing is not under test here: keep it to the titles
    await settled(engine.updateSettings('movies', { searchableAttributes: ['title'], filterableAttributes: ['genres', 'year'], sortableAttributes: ['year'] }));
    const task = await settled(engine.addDocuments('movies', movies().slice(0, 5000), { method: 'replace' }));
    expect(task.status).toBe('succeeded');
  }, 120_000);

  afterAll(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('filters the documents route and reports the documents error code', () => {
    const page = engine.getDocuments('movies', { filter: 'genres = Western AND year < 1915', limit: 1000 } as never);
    const want = movies().slice(0, 5000).filter((m) => (m.genres as string[]).includes('Western') && (m.year as number) < 1915);
    expect(page.total).toBe(want.length);
    expect(page.total).toBeGreaterThan(10);
    expect(() => engine.getDocuments('movies', { filter: 'title = x' } as never)).toThrow(/Attribute `title` is not filterable/);
    expect(() => engine.getDocuments('movies', { filter: 'year >' } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_document_filter', message: 'Was expecting a value but instead got nothing.\n7:7 year >' }),
    );
  });

  it('serves filter, facets and sort through Engine.search', async () => {
    const res = (await engine.search('movies', {
      q: '',
      filter: ['year 1905 TO 1910', ['genres = Western', 'genres = Comedy']],
      facets: ['genres', 'year'],
      sort: ['year:desc'],
      limit: 5,
    })) as unknown as { hits: Array<Record<string, unknown>>; facetDistribution: Record<string, Record<string, number>>; facetStats: Record<string, unknown>; estimatedTotalHits: number };
    const want = movies()
      .slice(0, 5000)
      .filter((m) => (m.year as number) >= 1905 && (m.year as number) <= 1910 && ((m.genres as string[]).includes('Western') || (m.genres as string[]).includes('Comedy')));
    expect(res.estimatedTotalHits).toBe(want.length);
    expect(res.hits.map((h) => h.year)).toEqual(want.map((m) => m.year as number).sort((a, b) => b - a).slice(0, 5));
    expect(res.facetDistribution.genres!.Western).toBe(want.filter((m) => (m.genres as string[]).includes('Western')).length);
    expect(res.facetStats.year).toEqual({ min: Math.min(...want.map((m) => m.year as number)), max: Math.max(...want.map((m) => m.year as number)) });
  });

  it('answers a whole facet-search request (filter and q restrict the counts)', () => {
    const index = engine.indexes.get('movies');
    const res = facetSearchRequest(index, { facetName: 'genres', facetQuery: 'com', filter: 'year < 1910' });
    const want = movies().slice(0, 5000).filter((m) => (m.year as number) < 1910 && (m.genres as string[]).includes('Comedy')).length;
    expect(res.facetHits).toEqual([{ value: 'Comedy', count: want }]);
    expect(res.facetQuery).toBe('com');
    const withQ = facetSearchRequest(index, { facetName: 'genres', q: 'robbery' });
    const all = facetSearchRequest(index, { facetName: 'genres' });
    expect(withQ.facetHits.length).toBeGreaterThan(0);
    expect(withQ.facetHits.reduce((n, h) => n + h.count, 0)).toBeLessThan(all.facetHits.reduce((n, h) => n + h.count, 0));
    expect(() => facetSearchRequest(index, { facetName: 'genres', sort: ['year:asc'] })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => facetSearchRequest(index, { facetName: 'cast' })).toThrow(expect.objectContaining({ code: 'invalid_facet_search_facet_name' }));
  });

  it('serves POST /indexes/:uid/facet-search through Engine.facetSearch', async () => {
    const res = await engine.facetSearch('movies', { facetName: 'genres', facetQuery: 'docu' });
    const want = movies().slice(0, 5000).filter((m) => (m.genres as string[]).includes('Documentary')).length;
    expect(res.facetHits).toEqual([{ value: 'Documentary', count: want }]);
    expect(typeof res.processingTimeMs).toBe('number');
  });

  it('deletes by filter and keeps facets exact', async () => {
    const index = engine.indexes.get('movies');
    const before = computeFacets(index.store, index.store.docids(), ['genres'], index.settings).facetDistribution.genres!;
    const task = await settled(engine.deleteDocumentsByFilter('movies', 'genres = Western'));
    expect(task.status).toBe('succeeded');
    const after = computeFacets(index.store, index.store.docids(), ['genres'], index.settings).facetDistribution.genres!;
    expect(after.Western).toBeUndefined();
    expect(before.Western).toBeGreaterThan(100);
    const remaining = movies().slice(0, 5000).filter((m) => !(m.genres as string[]).includes('Western'));
    const comedies = remaining.filter((m) => (m.genres as string[]).includes('Comedy')).length;
    expect(after.Comedy).toBe(comedies);
    expect(index.store.documentCount).toBe(remaining.length);
  });

  it('re-indexes facets when filterable attributes change', async () => {
    const index = engine.indexes.get('movies');
    expect(() => index.filterDocids('title STARTS WITH "the"')).toThrow(/not filterable/);
    await settled(engine.updateSettings('movies', { filterableAttributes: ['genres', 'year', 'title'] }));
    const got = index.filterDocids('title STARTS WITH "The"').size;
    const want = movies().slice(0, 5000).filter((m) => !(m.genres as string[]).includes('Western') && String(m.title).trim().toLowerCase().startsWith('the')).length;
    expect(got).toBe(want);
    expect(got).toBeGreaterThan(100);
  });

  it('indexes geo points in the pipeline and fails a batch with a bad _geo', async () => {
    await settled(engine.createIndex('cities', { primaryKey: 'geonameid' }));
    await settled(engine.updateSettings('cities', { searchableAttributes: ['name'], filterableAttributes: ['_geo'], sortableAttributes: ['_geo'] }));
    expect((await settled(engine.addDocuments('cities', worldCities(), { method: 'replace' }))).status).toBe('succeeded');
    const index = engine.indexes.get('cities');
    const near = index.filterDocids('_geoRadius(48.85341, 2.3488, 30000)');
    const ordered = sortDocids(index.store, near, parseSort(['_geoPoint(48.85341, 2.3488):asc'], index.settings)!);
    expect(ordered.map((d) => index.store.getDocument(d)!.name)).toEqual([
      'Paris', 'Boulogne-Billancourt', 'Argenteuil', 'Saint-Quentin-en-Yvelines', 'Cergy-Pontoise',
    ]);
    const failed = await settled(engine.addDocuments('cities', [{ geonameid: 'bad', name: 'Bad', _geo: { lat: 'north', lng: 3 } }], { method: 'replace' }));
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('invalid_document_geo_field');
    expect(failed.error?.message).toMatch(/Could not parse latitude in the document with the id: `"bad"`\. Was expecting a finite number but instead got `"north"`\./);
    expect(index.store.documentCount).toBe(4449);
  });

  it('facets arrays that mix values and objects by their faceted paths only, beside vectors', async () => {
    await settled(engine.createIndex('mixed', { primaryKey: 'id' }));
    await settled(
      engine.updateSettings('mixed', {
        filterableAttributes: ['tags.n', 'flags'],
        embedders: { default: { source: 'userProvided', dimensions: 3 } },
      }),
    );
    const docs = [
      { id: 1, tags: [7, { n: 2 }, 'seven'], flags: ['a', 'b'], _vectors: { default: [1, 0, 0] } },
      { id: 2, tags: [{ n: 3 }, [{ n: 2 }]], flags: [], _vectors: { default: [0, 1, 0] } },
      { id: 3, tags: [2], flags: ['b', null], _vectors: { default: [0, 0, 1] } },
    ];
    expect((await settled(engine.addDocuments('mixed', docs, { method: 'replace' }))).status).toBe('succeeded');
    const ids = (filter: string) => (engine.getDocuments('mixed', { filter, limit: 10 } as never).results as Array<{ id: number }>).map((d) => d.id).sort();
    // objects inside an array are walked whatever the array's own path; its plain values count only where faceted
    expect(ids('tags.n = 2')).toEqual([1, 2]);
    expect(ids('tags.n = 3')).toEqual([2]);
    expect(ids('flags = b')).toEqual([1, 3]);
    expect(ids('flags IS EMPTY')).toEqual([2]);
    expect(() => ids('tags = 7')).toThrow(/Attribute `tags` is not filterable/);
    const res = (await engine.search('mixed', { q: '', facets: ['tags.n', 'flags'] })) as unknown as { facetDistribution: Record<string, Record<string, number>> };
    expect(res.facetDistribution).toEqual({ 'tags.n': { '2': 2, '3': 1 }, flags: { a: 1, b: 2 } });
  });
});
