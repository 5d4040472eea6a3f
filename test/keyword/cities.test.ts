import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import { openTestIndex, type TestIndex } from './helpers.js';
import { worldCities } from '../data.js';

let t: TestIndex;
beforeAll(() => {
  t = openTestIndex({ searchableAttributes: ['name', 'alternatenames', 'country'] }, 'geonameid');
  t.add(worldCities());
}, 60_000);
afterAll(() => t.close());

describe('non-Latin scripts on world-cities', () => {
  it('finds cities by their Cyrillic, Arabic and CJK names', () => {
    expect(search(t.index, { q: 'Рас-эль-Хайма' }).hits[0]!.name).toBe('Ras Al Khaimah City');
    expect(search(t.index, { q: 'رأس الخيمة' }).hits.map((h) => h.name)).toContain('Ras Al Khaimah City');
    const tokyo = search(t.index, { q: '東京' });
    expect(tokyo.hits.map((h) => h.name)).toContain('Tokyo');
  });
  it('folds diacritics both ways', () => {
    const a = search(t.index, { q: 'Sao Paulo' }).hits.map((h) => h.name);
    const b = search(t.index, { q: 'São Paulo' }).hits.map((h) => h.name);
    expect(a[0]).toBe('São Paulo');
    expect(b).toEqual(a);
  });
});
