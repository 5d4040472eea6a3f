/** Geo filters, geo sort and `_geo` validation on the world-cities data set. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SearchError } from '../../src/engine/errors.js';
import { evaluateFilter } from '../../src/engine/search/filter/evaluate.js';
import { parseFilter } from '../../src/engine/search/filter/parser.js';
import { haversine } from '../../src/engine/search/geo/distance.js';
import { extractGeoPoint, geoExtension } from '../../src/engine/search/geo/extension.js';
import { geoDistance, hitGeoDistance } from '../../src/engine/search/geo/query.js';
import { parseSort } from '../../src/engine/search/sort/parse.js';
import { sortDocids } from '../../src/engine/search/sort/buckets.js';
import type { Document } from '../../src/engine/types.js';
import { TestIndex, worldCities } from './helpers.js';

const PARIS: [number, number] = [48.85341, 2.3488];

describe('geo on world cities', () => {
  let index: TestIndex;

  beforeAll(async () => {
    index = new TestIndex('geonameid', { filterableAttributes: ['_geo', 'country'], sortableAttributes: ['_geo', 'population'] });
    await index.add(worldCities());
  });
  afterAll(() => index.close());

  const names = (filter: string): string[] =>
    [...evaluateFilter(index.store, parseFilter(filter)!, index.settings)].map((d) => index.store.getDocument(d)!.name as string).sort();

  it('finds the cities within a radius of Paris', () => {
    expect(names(`_geoRadius(${PARIS[0]}, ${PARIS[1]}, 30000)`)).toEqual(
      ['Argenteuil', 'Boulogne-Billancourt', 'Cergy-Pontoise', 'Paris', 'Saint-Quentin-en-Yvelines'],
    );
    expect(names(`_geoRadius(${PARIS[0]}, ${PARIS[1]}, 120000)`)).toEqual(
      ['Amiens', 'Argenteuil', 'Boulogne-Billancourt', 'Cergy-Pontoise', 'Orléans', 'Paris', 'Rouen', 'Saint-Quentin-en-Yvelines'],
    );
    expect(names(`_geoRadius(${PARIS[0]}, ${PARIS[1]}, 10) AND country = France`)).toEqual(['Paris']);
    // a radius bigger than the Earth covers everything
    expect(names('_geoRadius(0, 0, 30000000)').length).toBe(4449);
  });

  it('filters by bounding box, including across the antimeridian', () => {
    expect(names('_geoBoundingBox([49.2, 2.8], [48.5, 1.9])')).toEqual(
      ['Argenteuil', 'Boulogne-Billancourt', 'Cergy-Pontoise', 'Paris', 'Saint-Quentin-en-Yvelines'],
    );
    const pacific = names('_geoBoundingBox([-30, -170], [-50, 170])');
    expect(pacific).toEqual(['Auckland', 'Christchurch', 'Dunedin', 'Hamilton', 'Lower Hutt', 'Manukau City', 'North Shore', 'Tauranga', 'Wellington']);
  });

  it('filters by polygon', () => {
    // a slanted quadrilateral west of Paris: its east edge passes between Argenteuil (in) and Boulogne (out)
    expect(names('_geoPolygon([49.1, 1.9], [48.7, 1.9], [48.7, 2.2], [49.1, 2.3])')).toEqual(
      ['Argenteuil', 'Cergy-Pontoise', 'Saint-Quentin-en-Yvelines'],
    );
    const brute = worldCities()
      .filter((c) => {
        const g = c._geo as { lat: number; lng: number };
        return g.lat >= 35 && g.lat <= 60 && g.lng >= -10 && g.lng <= 30;
      })
      .map((c) => c.name as string)
      .sort();
    expect(names('_geoPolygon([35, -10], [60, -10], [60, 30], [35, 30])')).toEqual(brute);
  });

  it('sorts by distance and reports _geoDistance', () => {
    const criteria = parseSort([`_geoPoint(${PARIS[0]}, ${PARIS[1]}):asc`], index.settings)!;
    const france = evaluateFilter(index.store, parseFilter('country = France')!, index.settings);
    const order = sortDocids(index.store, france, criteria);
    const top = order.slice(0, 5).map((d) => [index.store.getDocument(d)!.name, geoDistance(index.store, d, PARIS)]);
    expect(top).toEqual([
      ['Paris', 0],
      ['Boulogne-Billancourt', 8118],
      ['Argenteuil', 12855],
      ['Saint-Quentin-en-Yvelines', 25802],
      ['Cergy-Pontoise', 28575],
    ]);
    // what a hit shows as `_geoDistance`: only when sorting by `_geoPoint`
    expect(hitGeoDistance(index.store, order[1]!, [{ kind: 'field', field: 'population', order: 'asc' }, ...criteria])).toBe(8118);
    expect(hitGeoDistance(index.store, order[1]!, [{ kind: 'field', field: 'population', order: 'asc' }])).toBeUndefined();
    // every city, farthest first, matches a brute-force sort
    const desc = sortDocids(index.store, index.store.docids(), parseSort([`_geoPoint(${PARIS[0]}, ${PARIS[1]}):desc`], index.settings)!);
    const want = worldCities()
      .map((c) => ({ id: c.geonameid, d: haversine(PARIS, [(c._geo as any).lat, (c._geo as any).lng]) }))
      .sort((a, b) => b.d - a.d)
      .map((c) => c.id);
    expect(desc.map((d) => index.store.getDocument(d)!.geonameid)).toEqual(want);
  });

  it('keeps points exact through updates, deletions and a settings change', async () => {
    const paris = worldCities().find((c) => c.name === 'Paris')!;
    // move Paris to Lyon's neighbourhood, delete Argenteuil
    await index.add([{ ...paris, _geo: { lat: '45.75', lng: 4.85 } }]);
    index.delete(['3037044']);
    expect(names(`_geoRadius(${PARIS[0]}, ${PARIS[1]}, 30000)`)).toEqual(['Boulogne-Billancourt', 'Cergy-Pontoise', 'Saint-Quentin-en-Yvelines']);
    expect(names('_geoRadius(45.75, 4.85, 1)')).toEqual(['Paris']);
    // a document without _geo any more leaves the index
    await index.add([{ ...paris, _geo: null }]);
    expect(names('_geoRadius(45.75, 4.85, 1)')).toEqual([]);
    // `_geo` no longer filterable nor sortable: re-index drops the points, and filters are refused
    expect(geoExtension.needsReindex(index.settings, { ...index.settings, filterableAttributes: ['country'], sortableAttributes: [] })).toBe(true);
    index.updateSettings({ filterableAttributes: ['country'], sortableAttributes: [] });
    expect(() => names('_geoRadius(0, 0, 10)')).toThrow('Attribute `_geo` is not filterable. Available filterable attributes are: `country`.\n1:21 _geoRadius(0, 0, 10)');
    index.updateSettings({ filterableAttributes: ['_geo', 'country'] });
    expect(names(`_geoRadius(${PARIS[0]}, ${PARIS[1]}, 30000)`)).toEqual(['Boulogne-Billancourt', 'Cergy-Pontoise', 'Saint-Quentin-en-Yvelines']);
  });

  it('rejects malformed _geo fields with the reference messages', async () => {
    const bad = (doc: Document): string => {
      try {
        extractGeoPoint(doc, doc.id);
      } catch (e) {
        expect((e as SearchError).code).toBe('invalid_document_geo_field');
        return (e as SearchError).message;
      }
      throw new Error('expected a failure');
    };
    expect(bad({ id: 0, _geo: { lat: 'lol', lng: 42 } })).toBe(
      'Could not parse latitude in the document with the id: `0`. Was expecting a finite number but instead got `"lol"`.',
    );
    expect(bad({ id: '12', _geo: { lat: null, lng: 42 } })).toBe(
      'Could not parse latitude in the document with the id: `"12"`. Was expecting a finite number but instead got `null`.',
    );
    expect(bad({ id: 1, _geo: { lng: 42 } })).toBe('Could not find latitude in the document with the id: `1`. Was expecting a `_geo.lat` field.');
    expect(bad({ id: 1, _geo: { lat: 42 } })).toBe('Could not find longitude in the document with the id: `1`. Was expecting a `_geo.lng` field.');
    expect(bad({ id: 1, _geo: {} })).toBe(
      'Could not find latitude nor longitude in the document with the id: `1`. Was expecting `_geo.lat` and `_geo.lng` fields.',
    );
    expect(bad({ id: 1, _geo: { lat: [1], lng: true } })).toBe(
      'Could not parse latitude nor longitude in the document with the id: `1`. Was expecting finite numbers but instead got `[1]` and `true`.',
    );
    expect(bad({ id: 1, _geo: 'here' })).toMatch(/^The `_geo` field in the document with the id: `1` is not an object\./);
    // the batch fails before anything is written
    const before = index.store.documentCount;
    await expect(index.add([{ geonameid: 'x1', name: 'Nowhere', _geo: { lat: 1 } }])).rejects.toThrow(/Could not find longitude/);
    expect(index.store.documentCount).toBe(before);
  });
});
