/**
 * Searches answered in search threads (`searchThreads`), over real HTTP: the same bodies as the
 * serving thread gives, the same errors, and each new commit of the write thread seen at once
 * (documents, settings, a deleted index).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectErrorShape, startHarness, type Harness } from './harness.js';
import { movies } from '../data.js';
import { cacheHitTotal } from '../../src/engine/search/result-cache.js';

const MOVIES: Array<Record<string, unknown>> = movies().slice(0, 1500);

describe('search threads', () => {
  let threaded: Harness;
  let inline: Harness;

  beforeAll(async () => {
    threaded = await startHarness({}, { searchThreads: 2 });
    inline = await startHarness();
    for (const h of [threaded, inline]) {
      const settings = await h.request('PATCH', '/indexes/movies/settings', { json: { filterableAttributes: ['genres', 'year'], sortableAttributes: ['year'] } });
      await h.wait(settings.body.taskUid);
      const added = await h.request('POST', '/indexes/movies/documents?primaryKey=id', { json: MOVIES });
      expect((await h.wait(added.body.taskUid)).status).toBe('succeeded');
    }
  });
  afterAll(async () => {
    await threaded?.stop();
    await inline?.stop();
  });

  const withoutTime = (body: any) => JSON.parse(JSON.stringify(body, (key, value) => (key === 'processingTimeMs' ? undefined : value)));

  test('search, multi-search, facet search and GET search answer as the serving thread does', async () => {
    const requests: Array<[string, string, unknown]> = [
      ['POST', '/indexes/movies/search', { q: 'love', filter: 'year > 1950', sort: ['year:desc'], facets: ['genres'], attributesToHighlight: ['title'] }],
      ['GET', '/indexes/movies/search?q=war&limit=5', undefined],
      ['POST', '/multi-search', { queries: [{ indexUid: 'movies', q: 'man' }, { indexUid: 'movies', q: 'the', limit: 3 }] }],
      ['POST', '/indexes/movies/facet-search', { facetName: 'genres', facetQuery: 'dra' }],
    ];
    for (const [method, path, json] of requests) {
      const a = await threaded.request(method, path, json === undefined ? {} : { json });
      const b = await inline.request(method, path, json === undefined ? {} : { json });
      expect(a.status, a.text).toBe(200);
      expect(a.headers.get('content-type')).toMatch(/^application\/json/);
      expect(withoutTime(a.body)).toEqual(withoutTime(b.body));
    }
  });

  test('errors keep their code and status', async () => {
    const missing = await threaded.request('POST', '/indexes/nope/search', { json: { q: 'x' } });
    expect(missing.status).toBe(404);
    expectErrorShape(missing.body, 'index_not_found');
    const bad = await threaded.request('POST', '/indexes/movies/search', { json: { q: 'x', filter: 'title = x' } });
    expect(bad.status).toBe(400);
    expectErrorShape(bad.body, 'invalid_search_filter');
  });

  test('searches and errors sent together each get their own answer', async () => {
    // 48 requests at once: the threads answer them in batches (bodies side by side in one buffer)
    const queries = ['love', 'war', 'man', 'the', 'star', 'night', 'day', 'life'];
    const requests = Array.from({ length: 48 }, (_, i) =>
      i % 6 === 5
        ? { path: '/indexes/movies/search', json: { q: 'x', filter: 'title = x' } }
        : { path: '/indexes/movies/search', json: { q: queries[i % queries.length], limit: 1 + (i % 7) } },
    );
    const send = (h: Harness) => Promise.all(requests.map(({ path, json }) => h.request('POST', path, { json })));
    const [a, b] = [await send(threaded), await send(inline)];
    for (let i = 0; i < requests.length; i++) {
      expect(a[i]!.status, a[i]!.text).toBe(b[i]!.status);
      if (a[i]!.status === 200) expect(withoutTime(a[i]!.body)).toEqual(withoutTime(b[i]!.body));
      else expectErrorShape(a[i]!.body, 'invalid_search_filter');
    }
  });

  test('the ranking of a few candidates follows an update of their words', async () => {
    // proximity and exactness read each candidate's stored words, kept between searches
    for (const h of [threaded, inline]) {
      const ids = async () => (await h.request('POST', '/indexes/prox/search', { json: { q: 'zorblat quimby' } })).body.hits.map((hit: { id: string }) => hit.id);
      const put = async (docs: unknown[]) => expect((await h.wait((await h.request('POST', '/indexes/prox/documents?primaryKey=id', { json: docs })).body.taskUid)).status).toBe('succeeded');
      await put([
        { id: 'a', title: 'zorblat quimby' },
        { id: 'b', title: 'zorblat one two three quimby' },
      ]);
      expect(await ids()).toEqual(['a', 'b']);
      await put([{ id: 'a', title: 'zorblat one two three four quimby' }]);
      expect(await ids()).toEqual(['b', 'a']);
      await put([{ id: 'b', title: 'quimby and zorblat, zorblat quimby' }]);
      expect(await ids()).toEqual(['b', 'a']);
      await put([{ id: 'b', title: 'zorblat one two three four five quimby' }]);
      expect(await ids()).toEqual(['a', 'b']);
    }
  });

  test('hits follow their documents: an update, narrower displayed attributes, extras after the fields', async () => {
    for (const h of [threaded, inline]) {
      const search = async (json: unknown) => {
        const res = await h.request('POST', '/indexes/cache/search', { json });
        expect(res.status, res.text).toBe(200);
        // the body is one well-formed JSON value, as JSON.stringify writes it
        expect(res.text).toBe(JSON.stringify(JSON.parse(res.text)));
        return (res.body.hits as Array<Record<string, unknown>>).sort((a, b) => (a.id as number) - (b.id as number));
      };
      const added = await h.request('POST', '/indexes/cache/documents?primaryKey=id', {
        json: [
          { id: 1, title: 'Quokka Island', year: 2001 },
          { id: 2, title: 'Quokka Return', year: 2003 },
        ],
      });
      await h.wait(added.body.taskUid);
      // several searches, so that every thread has the documents at hand before they change
      for (let i = 0; i < 4; i++)
        expect(await search({ q: 'quokka' })).toEqual([
          { id: 1, title: 'Quokka Island', year: 2001 },
          { id: 2, title: 'Quokka Return', year: 2003 },
        ]);
      const updated = await h.request('PUT', '/indexes/cache/documents', { json: [{ id: 1, title: 'Quokka Island Redux', year: 2002 }] });
      await h.wait(updated.body.taskUid);
      for (let i = 0; i < 4; i++) expect((await search({ q: 'quokka' }))[0]).toEqual({ id: 1, title: 'Quokka Island Redux', year: 2002 });
      const displayed = await h.request('PUT', '/indexes/cache/settings/displayed-attributes', { json: ['id', 'title'] });
      await h.wait(displayed.body.taskUid);
      for (let i = 0; i < 4; i++)
        expect(await search({ q: 'quokka' })).toEqual([
          { id: 1, title: 'Quokka Island Redux' },
          { id: 2, title: 'Quokka Return' },
        ]);
      const [first] = await search({ q: 'quokka', showRankingScore: true, attributesToHighlight: ['title'] });
      expect(Object.keys(first!)).toEqual(['id', 'title', '_formatted', '_rankingScore']);
      expect(first!._formatted).toEqual({ id: '1', title: '<em>Quokka</em> Island Redux' });
    }
  });

  test('a repeated search is answered from the threads\' caches, which report their hits to the serving thread', async () => {
    const before = cacheHitTotal();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await threaded.request('POST', '/indexes/movies/search', { json: { q: 'cached river', limit: 3 } }));
    for (const answer of answers) expect(withoutTime(answer.body)).toEqual(withoutTime(answers[0]!.body));
    // each of the two threads computes it once at most
    expect(cacheHitTotal()).toBeGreaterThanOrEqual(before + 2);
  });

  test('every commit of the write thread is seen by the next search', async () => {
    const added = await threaded.request('POST', '/indexes/movies/documents', { json: [{ id: 99_000_001, title: 'Zyxwvut Quokka' }] });
    await threaded.wait(added.body.taskUid);
    // several searches, so that both threads answer one
    for (let i = 0; i < 4; i++) {
      const found = await threaded.request('POST', '/indexes/movies/search', { json: { q: 'quokka' } });
      expect(found.body.hits.map((h: any) => h.id)).toEqual([99_000_001]);
    }
    const settings = await threaded.request('PATCH', '/indexes/movies/settings', { json: { filterableAttributes: ['title'] } });
    await threaded.wait(settings.body.taskUid);
    for (let i = 0; i < 4; i++) {
      const filtered = await threaded.request('POST', '/indexes/movies/search', { json: { q: '', filter: 'title = "Zyxwvut Quokka"' } });
      expect(filtered.status, filtered.text).toBe(200);
      expect(filtered.body.hits.length).toBe(1);
    }
    const deleted = await threaded.request('DELETE', '/indexes/movies');
    await threaded.wait(deleted.body.taskUid);
    for (let i = 0; i < 4; i++) {
      const gone = await threaded.request('POST', '/indexes/movies/search', { json: { q: 'quokka' } });
      expect(gone.status).toBe(404);
    }
  });
});
