/**
 * The answers a serving engine keeps (src/engine/search/result-cache.ts): a repeated search is
 * answered from the cache, byte for byte but for `processingTimeMs`, and never once its index has
 * changed (documents, settings), nor for what depends on more than the index and the body.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rmSync } from 'node:fs';
import { Engine } from '../../src/engine/engine.js';
import { MAX_ANSWER_BYTES, requestKey, ResultCache } from '../../src/engine/search/result-cache.js';
import type { SearchRequest } from '../../src/engine/search/search-threads.js';
import { tempEngine } from '../engine/helpers.js';

let engine: Engine;
let cleanup: () => Promise<void>;

const MOVIES = [
  { id: 1, title: 'Star Wars', genre: 'space' },
  { id: 2, title: 'Star Trek', genre: 'space' },
  { id: 3, title: 'Wars of the Roses', genre: 'history' },
];

async function settled(task: Promise<{ taskUid: number }>): Promise<void> {
  const done = await engine.waitForTask((await task).taskUid);
  expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
}

const search = (body: Record<string, unknown>, extra: Partial<SearchRequest> = {}): SearchRequest => ({ kind: 'search', uid: 'movies', body, ...extra }) as SearchRequest;

async function answer(request: SearchRequest): Promise<{ text: string; body: any; fromCache: boolean }> {
  const before = engine.resultCacheStats().hits;
  const bytes = await engine.answer(request);
  const text = bytes.toString();
  return { text, body: JSON.parse(text), fromCache: engine.resultCacheStats().hits > before };
}

const withoutTime = (text: string) => text.replace(/"processingTimeMs":\d+/, '"processingTimeMs":0');

beforeAll(async () => {
  ({ engine, cleanup } = await tempEngine({ searchThreads: 0 }));
  await settled(engine.updateSettings('movies', { filterableAttributes: ['genre'] }));
  await settled(engine.addDocuments('movies', MOVIES, { primaryKey: 'id' }));
});
afterAll(async () => {
  await cleanup();
});

describe('a serving engine keeps its answers', () => {
  test('a repeated search is answered from the cache, the same bytes but for processingTimeMs', async () => {
    const request = search({ q: 'star', facets: ['genre'], attributesToHighlight: ['title'] });
    const first = await answer(request);
    expect(first.fromCache).toBe(false);
    const again = await answer(request);
    expect(again.fromCache).toBe(true);
    expect(withoutTime(again.text)).toBe(withoutTime(first.text));
    expect(again.body.hits.map((h: { id: number }) => h.id)).toEqual([1, 2]);
    // another body is another answer
    expect((await answer(search({ q: 'star', limit: 1 }))).fromCache).toBe(false);
  });

  test('a document added or deleted is seen by the next identical search', async () => {
    const request = search({ q: 'wars' });
    await answer(request);
    expect((await answer(request)).fromCache).toBe(true);
    await settled(engine.addDocuments('movies', [{ id: 4, title: 'Clone Wars', genre: 'space' }]));
    const added = await answer(request);
    expect(added.fromCache).toBe(false);
    expect(added.body.hits.map((h: { id: number }) => h.id).sort()).toEqual([1, 3, 4]);
    await settled(engine.deleteDocuments('movies', [4]));
    expect((await answer(request)).body.hits.map((h: { id: number }) => h.id).sort()).toEqual([1, 3]);
  });

  test('a settings change is seen by the next identical search', async () => {
    const request = search({ q: 'space' });
    expect((await answer(request)).body.hits).toHaveLength(2);
    expect((await answer(request)).fromCache).toBe(true);
    await settled(engine.updateSettings('movies', { searchableAttributes: ['title'] }));
    const after = await answer(request);
    expect(after.fromCache).toBe(false);
    expect(after.body.hits).toHaveLength(0);
    await settled(engine.updateSettings('movies', { searchableAttributes: ['*'] }));
  });

  test('what depends on more than the index and the body is never kept', async () => {
    for (const request of [
      search({ q: 'star', showPerformanceDetails: true }),
      search({ q: 'star' }, { includeMetadata: true }),
      search({ q: 'star' }, { foreignIndexes: [] }),
    ]) {
      await answer(request);
      expect((await answer(request)).fromCache).toBe(false);
    }
  });

  test('the containsFilter feature turned off refuses a filter a cached answer had accepted', async () => {
    engine.updateExperimentalFeatures({ containsFilter: true });
    const request = search({ q: '', filter: 'genre CONTAINS pac' });
    expect((await answer(request)).body.hits.length).toBeGreaterThan(0);
    expect((await answer(request)).fromCache).toBe(true);
    engine.updateExperimentalFeatures({ containsFilter: false });
    await expect(engine.answer(request)).rejects.toMatchObject({ code: 'feature_not_enabled' });
  });
});

test('warm-up searches are not kept: they would push out the answers users asked for', async () => {
  const { engine: first, dbPath } = await tempEngine({ searchThreads: 0 });
  const task = await first.addDocuments('movies', MOVIES, { primaryKey: 'id' });
  expect((await first.waitForTask(task.taskUid)).status).toBe('succeeded');
  await first.close();
  // an engine that answers searches warms its indexes with searches when it opens (Engine.warm)
  const reopened = await Engine.open({ dbPath, logLevel: 'off', searchThreads: 0, warm: true });
  try {
    await new Promise((resolve) => setTimeout(resolve, 500)); // the keyword warm-ups run after `open`
    expect(reopened.resultCacheStats().entries).toBe(0);
    await reopened.answer(search({ q: 'star' }));
    expect(reopened.resultCacheStats().entries).toBe(1);
  } finally {
    await reopened.close();
    rmSync(dbPath, { recursive: true, force: true });
  }
});

describe('ResultCache', () => {
  const entry = (commit: number, bytes: number) => ({ commit, hits: [Buffer.alloc(bytes)], rest: {}, bytes });

  test('an entry answers only at its commit, and is dropped at another', () => {
    const cache = new ResultCache();
    cache.set('a', entry(3, 10));
    expect(cache.get('a', 4)).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(cache.heldBytes).toBe(0);
  });

  test('the least recently used answers go first past the byte budget; an oversized answer is not kept', () => {
    const cache = new ResultCache(100);
    cache.set('a', entry(1, 40));
    cache.set('b', entry(1, 40));
    expect(cache.get('a', 1)).toBeDefined(); // `b` is now the least recently used
    cache.set('c', entry(1, 40));
    expect(cache.get('b', 1)).toBeUndefined();
    expect(cache.get('a', 1)).toBeDefined();
    expect(cache.get('c', 1)).toBeDefined();
    expect(cache.heldBytes).toBe(80);
    const big = new ResultCache();
    big.set('big', entry(1, MAX_ANSWER_BYTES + 1));
    expect(big.size).toBe(0);
  });

  test('only plain keyword searches have a key', () => {
    expect(requestKey(search({ q: 'x' }))).toBe('movies\u0000{"q":"x"}');
    for (const body of [{ q: 'x', vector: [1] }, { q: 'x', hybrid: { embedder: 'e' } }, { q: 'x', personalize: { userContext: 'u' } }, { q: 'x', media: {} }])
      expect(requestKey(search(body))).toBeUndefined();
    expect(requestKey({ kind: 'multiSearch', body: { queries: [] } })).toBeUndefined();
    expect(requestKey({ kind: 'facetSearch', uid: 'movies', body: { facetName: 'genre' } })).toBeUndefined();
  });
});
