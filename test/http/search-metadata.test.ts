/**
 * The `Meili-Include-Metadata` request header (issue #16): search, multi-search and federated
 * search answer each query's metadata (a UUID v7 `queryUid`, the index, its primary key) only when
 * asked, through real HTTP, with the answer computed in this thread and in search threads.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ASK = { 'meili-include-metadata': 'true' };

describe.each([
  ['in the serving thread', 0],
  ['in search threads', 1],
])('search metadata %s', (_label, searchThreads) => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({}, { searchThreads });
    for (const [path, docs] of [
      ['/indexes/movies/documents?primaryKey=movie_id', [{ movie_id: 1, title: 'Fox' }, { movie_id: 2, title: 'Hound' }]],
      ['/indexes/books/documents', [{ id: 'b1', title: 'Fox in the Attic' }]],
    ] as const) {
      const reply = await h.request('POST', path, { json: docs });
      expect(reply.status, reply.text).toBe(202);
      expect((await h.wait(reply.body.taskUid)).status).toBe('succeeded');
    }
    const empty = await h.request('POST', '/indexes', { json: { uid: 'empty' } });
    await h.wait(empty.body.taskUid);
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
  });

  test('a search answers metadata only when the header says true or 1', async () => {
    const plain = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox' } });
    expect(plain.status).toBe(200);
    expect(plain.body).not.toHaveProperty('metadata');
    const off = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox' }, headers: { 'meili-include-metadata': 'false' } });
    expect(off.body).not.toHaveProperty('metadata');

    const post = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox' }, headers: ASK });
    expect(post.status, post.text).toBe(200);
    expect(post.body.hits).toEqual([{ movie_id: 1, title: 'Fox' }]);
    expect(post.body.metadata).toEqual({ queryUid: expect.stringMatching(UUID_V7), indexUid: 'movies', primaryKey: 'movie_id' });

    const get = await h.request('GET', '/indexes/movies/search?q=hound', { headers: { 'Meili-Include-Metadata': '1' } });
    expect(get.body.metadata).toMatchObject({ indexUid: 'movies', primaryKey: 'movie_id' });
    // each query gets its own uid, in time order
    expect(get.body.metadata.queryUid).not.toBe(post.body.metadata.queryUid);
    expect(get.body.metadata.queryUid.slice(0, 13) >= post.body.metadata.queryUid.slice(0, 13)).toBe(true);

    // an index without a primary key yet: no primaryKey field
    const empty = await h.request('POST', '/indexes/empty/search', { json: {}, headers: ASK });
    expect(empty.body.metadata).toEqual({ queryUid: expect.stringMatching(UUID_V7), indexUid: 'empty' });
  });

  test('multi-search: one metadata object per result; federated: one entry per query, with its text', async () => {
    const queries = [
      { indexUid: 'movies', q: 'fox' },
      { indexUid: 'books', q: '' },
    ];
    const multi = await h.request('POST', '/multi-search', { json: { queries }, headers: ASK });
    expect(multi.status, multi.text).toBe(200);
    expect(multi.body.results.map((r: { metadata: unknown }) => r.metadata)).toEqual([
      { queryUid: expect.stringMatching(UUID_V7), indexUid: 'movies', primaryKey: 'movie_id' },
      { queryUid: expect.stringMatching(UUID_V7), indexUid: 'books', primaryKey: 'id' },
    ]);
    expect(multi.body.results[0].hits).toEqual([{ movie_id: 1, title: 'Fox' }]);

    const federated = await h.request('POST', '/multi-search', { json: { queries, federation: {} }, headers: ASK });
    expect(federated.status, federated.text).toBe(200);
    expect(federated.body.metadata).toEqual([
      { queryUid: expect.stringMatching(UUID_V7), indexUid: 'movies', primaryKey: 'movie_id', query: 'fox' },
      { queryUid: expect.stringMatching(UUID_V7), indexUid: 'books', primaryKey: 'id' },
    ]);
    expect(federated.body.hits.length).toBe(2);

    const without = await h.request('POST', '/multi-search', { json: { queries, federation: {} } });
    expect(without.body).not.toHaveProperty('metadata');
  });

  test('errors are unchanged by the header', async () => {
    const missing = await h.request('POST', '/indexes/nope/search', { json: { q: 'fox' }, headers: ASK });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('index_not_found');
  });
});
