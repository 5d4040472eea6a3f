/**
 * Tenant tokens against the real search: on movies, a token whose rule is `genres = Comedy`
 * only ever returns comedies, whatever the query and its own filter, in single and multi-search.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecured, type SecuredHarness } from './harness.js';
import { movies } from '../data.js';

const MASTER = 'tenant-search-master-key-0123456789';
type Movie = { id: number; title: string; year: number; genres: string[] };
const MOVIES: Movie[] = movies().slice(0, 1200);
const COMEDIES = MOVIES.filter((m) => m.genres.includes('Comedy'));

let h: SecuredHarness;
let token = '';
let searchKey = '';

beforeAll(async () => {
  h = await startSecured({ masterKey: MASTER, realSearch: true });
  const master = { key: MASTER };
  const settings = await h.request('PATCH', '/indexes/movies/settings', { ...master, json: { filterableAttributes: ['genres', 'year'] } });
  await h.engine.waitForTask(settings.body.taskUid);
  const added = await h.request('POST', '/indexes/movies/documents', { ...master, json: MOVIES });
  expect((await h.engine.waitForTask(added.body.taskUid, { timeoutMs: 120_000 })).status).toBe('succeeded');
  const key = await h.request('POST', '/keys', { ...master, json: { actions: ['search'], indexes: ['movies'], expiresAt: null } });
  searchKey = key.body.key;
  token = await new SignJWT({ apiKeyUid: key.body.uid, searchRules: { movies: { filter: 'genres = Comedy' } } })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(searchKey));
}, 180_000);
afterAll(() => h.stop());

const isComedy = (hit: { id: number }) => COMEDIES.some((m) => m.id === hit.id);

describe('tenant token on the real search', () => {
  it('returns only documents matching the rule', async () => {
    expect(COMEDIES.length).toBeGreaterThan(50);
    const all = await h.request('POST', '/indexes/movies/search', { key: searchKey, json: { q: '', limit: 1000 } });
    expect(all.status).toBe(200);
    expect(all.body.hits.some((hit: { id: number }) => !isComedy(hit))).toBe(true);

    const scoped = await h.request('POST', '/indexes/movies/search', { key: token, json: { q: '', limit: 1000 } });
    expect(scoped.status).toBe(200);
    expect(scoped.body.hits.length).toBe(Math.min(1000, COMEDIES.length));
    expect(scoped.body.estimatedTotalHits ?? scoped.body.totalHits).toBe(COMEDIES.length);
    expect(scoped.body.hits.every(isComedy)).toBe(true);
  });

  it('keeps the rule whatever the query filter says', async () => {
    // a filter trying to widen the set (OR) is AND-ed with the rule, never replacing it
    const widened = await h.request('POST', '/indexes/movies/search', {
      key: token,
      json: { q: '', limit: 1000, filter: [['genres = Comedy', 'genres = Drama', 'year > 0']] },
    });
    expect(widened.status).toBe(200);
    expect(widened.body.hits.length).toBe(Math.min(1000, COMEDIES.length));
    expect(widened.body.hits.every(isComedy)).toBe(true);

    const narrowed = await h.request('GET', `/indexes/movies/search?q=&limit=1000&filter=${encodeURIComponent('year < 1910')}`, { key: token });
    expect(narrowed.status).toBe(200);
    const expected = COMEDIES.filter((m) => m.year < 1910).length;
    expect(narrowed.body.hits.length).toBe(expected);
    expect(narrowed.body.hits.every(isComedy)).toBe(true);

    // multi-search: each query reaches the engine with the rule AND-ed in
    h.searches.length = 0;
    const multi = await h.request('POST', '/multi-search', {
      key: token,
      json: { queries: [{ indexUid: 'movies', q: '', limit: 1000, filter: 'genres != Comedy' }] },
    });
    expect(multi.status, multi.text).toBe(200);
    expect(h.searches[0]![2].queries[0].filter).toEqual(['genres != Comedy', 'genres = Comedy']);
  });
});
