/**
 * Filters, facets, sort, geo and facet search over HTTP with the official `meilisearch` client:
 * the wire shapes users get from our modules, on the world-cities data set.
 */
import { Meilisearch, MeilisearchApiError } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../http/harness.js';
import { haversine } from '../../src/engine/search/geo/distance.js';
import { worldCities } from './helpers.js';

describe('facets and geo over HTTP', () => {
  let h: Harness;
  let client: Meilisearch;
  const cities = () => worldCities();

  beforeAll(async () => {
    h = await startHarness();
    client = new Meilisearch({ host: h.url });
    await client.createIndex('cities', { primaryKey: 'geonameid' }).waitTask();
    await client
      .index('cities')
      .updateSettings({
        searchableAttributes: ['name'],
        filterableAttributes: ['_geo', 'population', { attributePatterns: ['country'], features: { facetSearch: true, filter: { equality: true, comparison: false } } }],
        sortableAttributes: ['_geo', 'population'],
      })
      .waitTask();
    const task = await client.index('cities').addDocuments(cities()).waitTask({ timeout: 120_000 });
    expect(task.status).toBe('succeeded');
  }, 180_000);
  afterAll(() => h?.stop());

  it('filters, counts facets and sorts by distance', async () => {
    const res = await client.index('cities').search('', {
      filter: ['_geoRadius(48.85341, 2.3488, 130000)', 'population > 100000'],
      facets: ['country', 'population'],
      sort: ['_geoPoint(48.85341, 2.3488):asc'],
      limit: 3,
    });
    expect(res.hits.map((h) => h.name)).toEqual(['Paris', 'Boulogne-Billancourt', 'Argenteuil']);
    const want = cities().filter((c) => {
      const g = c._geo as { lat: number; lng: number };
      return haversine([48.85341, 2.3488], [g.lat, g.lng]) <= 130000 && (c.population as number) > 100000;
    });
    expect(res.estimatedTotalHits).toBe(want.length);
    expect(want.length).toBeGreaterThan(5);
    expect(res.facetDistribution?.country).toEqual({ France: want.length });
    const pops = want.map((c) => c.population as number);
    expect(res.facetStats?.population).toEqual({ min: Math.min(...pops), max: Math.max(...pops) });
  });

  it('accepts the GET form of a geo sort (a comma inside the parentheses)', async () => {
    const res = await h.request('GET', `/indexes/cities/search?limit=2&sort=${encodeURIComponent('_geoPoint(48.85341, 2.3488):asc,population:desc')}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.hits.map((hit: { name: string }) => hit.name)).toEqual(['Paris', 'Boulogne-Billancourt']);
  });

  it('counts a facet over the whole index like a brute-force count', async () => {
    const res = await client.index('cities').search('', { facets: ['country'], limit: 0 });
    const want = new Map<string, number>();
    for (const c of cities()) want.set(c.country as string, (want.get(c.country as string) ?? 0) + 1);
    const got = res.facetDistribution!.country!;
    // default maxValuesPerFacet: the first 100 countries in alphabetical order
    const expected = [...want].sort((a, b) => (a[0].toLowerCase() < b[0].toLowerCase() ? -1 : 1)).slice(0, 100);
    expect(Object.entries(got)).toEqual(expected);
  });

  it('answers facet searches', async () => {
    const res = await client.index('cities').searchForFacetValues({ facetName: 'country', facetQuery: 'germ' });
    const germany = cities().filter((c) => c.country === 'Germany').length;
    expect(res.facetHits).toEqual([{ value: 'Germany', count: germany }]);
    const filtered = await client.index('cities').searchForFacetValues({ facetName: 'country', facetQuery: 'fra', filter: 'population > 1000000' });
    expect(filtered.facetHits).toEqual([{ value: 'France', count: cities().filter((c) => c.country === 'France' && (c.population as number) > 1_000_000).length }]);
  });

  it('reports filter and sort errors with the reference codes and positions', async () => {
    const err = await client.index('cities').search('', { filter: 'timezone = "Europe/Paris"' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MeilisearchApiError);
    const body = (err as MeilisearchApiError).cause as { code: string; message: string } | undefined;
    expect(body?.code).toBe('invalid_search_filter');
    expect(body?.message).toBe(
      'Attribute `timezone` is not filterable. Available filterable attributes are: `_geo, country, population`.\n1:9 timezone = "Europe/Paris"',
    );
    const cmp = await h.request('POST', '/indexes/cities/search', { json: { filter: 'country > F' } });
    expect(cmp.status).toBe(400);
    expect(cmp.body.code).toBe('invalid_search_filter');
    expect(cmp.body.message).toMatch(/^Filter operator `>` is not allowed for the attribute `country`\./);
    const sort = await h.request('POST', '/indexes/cities/search', { json: { sort: ['name:asc'] } });
    expect([sort.status, sort.body.code, sort.body.message]).toEqual([
      400,
      'invalid_search_sort',
      'Attribute `name` is not sortable. Available sortable attributes are: `_geo, population`.',
    ]);
  });

  it('filters the documents routes and deletes by filter', async () => {
    const fetched = await client.index('cities').getDocuments({ filter: 'country = Iceland OR country = Malta', limit: 50 });
    const want = cities().filter((c) => c.country === 'Iceland' || c.country === 'Malta').length;
    expect(fetched.total).toBe(want);
    const bad = await h.request('POST', '/indexes/cities/documents/fetch', { json: { filter: 'country =' } });
    expect([bad.status, bad.body.code]).toEqual([400, 'invalid_document_filter']);
    const task = await client.index('cities').deleteDocuments({ filter: '_geoBoundingBox([-30, -170], [-50, 170])' }).waitTask();
    expect(task.status).toBe('succeeded');
    expect(task.details?.deletedDocuments).toBe(9);
    const nz = await client.index('cities').search('', { filter: 'country = "New Zealand"', limit: 0 });
    expect(nz.estimatedTotalHits).toBe(cities().filter((c) => c.country === 'New Zealand').length - 9);
  });
});
