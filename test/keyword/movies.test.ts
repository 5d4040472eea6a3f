import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import { loadJson, openTestIndex, type TestIndex } from './helpers.js';

let t: TestIndex;
const titles = (r: { hits: Array<Record<string, unknown>> }) => r.hits.map((h) => h.title);

beforeAll(() => {
  const movies = loadJson('../shared/data/movies.json');
  t = openTestIndex({ searchableAttributes: ['title', 'cast', 'genres', 'extract'], sortableAttributes: ['year'], filterableAttributes: ['year', 'genres'] });
  const started = performance.now();
  for (let i = 0; i < movies.length; i += 5000) t.add(movies.slice(i, i + 5000));
  console.log(`indexed ${movies.length} movies in ${Math.round(performance.now() - started)} ms`);
}, 120_000);
afterAll(() => t.close());

describe('keyword search on movies.json', () => {
  it('finds a title despite a typo, best match first', () => {
    const r = search(t.index, { q: 'godfathr' });
    console.log(titles(r).slice(0, 5), r.estimatedTotalHits);
    expect(titles(r).slice(0, 5)).toContain('The Godfather');
  });
  it('ranks and counts a multi-word query', () => {
    const r = search(t.index, { q: 'star wars', showRankingScore: true });
    console.log(titles(r).slice(0, 5), r.estimatedTotalHits, r.processingTimeMs);
    expect(titles(r).slice(0, 3)).toContain('Star Wars');
  });
});
