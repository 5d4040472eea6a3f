/**
 * `POST /indexes/:uid/compact` (an `indexCompaction` task: a compacted copy of the index's LMDB
 * environment swapped in) and the stats routes' sizes (`usedDatabaseSize`, `showInternalDatabaseSizes`,
 * `sizeFormat`), through real HTTP.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { createServer } from '../../src/http/server.js';
import { movies } from '../data.js';
import { startHarness, type Harness } from './harness.js';

const MOVIES = movies().slice(0, 4000);
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

async function task(method: string, path: string, json?: unknown) {
  const reply = await h.request(method, path, json === undefined ? {} : { json });
  expect(reply.status).toBe(202);
  return h.wait(reply.body.taskUid);
}

const bytes = (human: string) => {
  const m = /^(\d+(?:\.\d+)?) (B|KiB|MiB|GiB)$/.exec(human);
  expect(m).not.toBeNull();
  return Number(m![1]) * 1024 ** ['B', 'KiB', 'MiB', 'GiB'].indexOf(m![2]!);
};

describe('index compaction', () => {
  test('after a bulk deletion the index shrinks on disk; documents, settings and search are unchanged; writes go on', async () => {
    await task('PATCH', '/indexes/films/settings', { filterableAttributes: ['genres', 'year'], sortableAttributes: ['year'] });
    await task('POST', '/indexes/films/documents?primaryKey=id', MOVIES);
    const removed = MOVIES.filter((_, i) => i % 4 !== 0).map((m) => m.id);
    expect(await task('POST', '/indexes/films/documents/delete-batch', removed)).toMatchObject({ status: 'succeeded' });
    const kept = MOVIES.filter((_, i) => i % 4 === 0);
    const search = { q: kept[7]!.title, filter: 'year > 1900', sort: ['year:asc'], limit: 5 };
    const before = await h.request('POST', '/indexes/films/search', { json: search });
    const statsBefore = (await h.request('GET', '/stats')).body;
    // LMDB keeps the freed pages: the used size leaves them out
    expect(statsBefore.usedDatabaseSize).toBeLessThan(statsBefore.databaseSize);

    const reply = await h.request('POST', '/indexes/films/compact');
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({ taskUid: expect.any(Number), indexUid: 'films', status: 'enqueued', type: 'indexCompaction', enqueuedAt: expect.any(String) });
    const done = await h.wait(reply.body.taskUid);
    expect(done).toMatchObject({ status: 'succeeded', type: 'indexCompaction', indexUid: 'films', error: null });
    const details = done.details as { preCompactionSize: string; postCompactionSize: string };
    expect(bytes(details.postCompactionSize)).toBeLessThan(bytes(details.preCompactionSize) * 0.8);

    // the same answers from the compacted environment
    expect((await h.request('POST', '/indexes/films/search', { json: search })).body.hits).toEqual(before.body.hits);
    expect((await h.request('GET', '/indexes/films/stats')).body).toMatchObject({ numberOfDocuments: kept.length, isIndexing: false });
    expect((await h.request('GET', '/indexes/films/settings')).body).toMatchObject({ filterableAttributes: ['genres', 'year'], sortableAttributes: ['year'] });
    expect((await h.request('GET', `/indexes/films/documents/${kept[3]!.id}`)).body.title).toBe(kept[3]!.title);
    const after = (await h.request('GET', '/stats')).body;
    expect(after.databaseSize).toBeLessThan(statsBefore.databaseSize);

    // writing into the compacted environment works, large posting lists included (every
    // document shares words and facet values); the old environment's directory is gone
    expect(await task('POST', '/indexes/films/documents', MOVIES.filter((_, i) => i % 4 !== 0))).toMatchObject({ status: 'succeeded' });
    expect((await h.request('GET', '/indexes/films/stats')).body.numberOfDocuments).toBe(MOVIES.length);
    const facets = await h.request('POST', '/indexes/films/search', { json: { q: 'the', facets: ['genres'], limit: 1 } });
    expect(facets.body.estimatedTotalHits).toBeGreaterThan(100);
    expect(readdirSync(join(h.dir, 'data.ms', 'indexes'))).toHaveLength(1);
  });

  test('errors: an unknown index fails the task with index_not_found; a bad uid is refused at once; other methods are not allowed', async () => {
    const missing = await task('POST', '/indexes/ghost/compact');
    expect(missing).toMatchObject({ status: 'failed', type: 'indexCompaction', error: { code: 'index_not_found', type: 'invalid_request' } });
    const bad = await h.request('POST', '/indexes/bad%20uid/compact');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_index_uid');
    const get = await h.request('GET', '/indexes/films/compact');
    expect(get.status).toBe(405);
    // the task type is known to the task filters
    const listed = await h.request('GET', '/tasks?types=indexCompaction');
    expect(listed.status).toBe(200);
    expect(listed.body.results.every((t: { type: string }) => t.type === 'indexCompaction')).toBe(true);
    expect(listed.body.results.length).toBeGreaterThanOrEqual(2);
  });
});

describe('stats sizes', () => {
  test('showInternalDatabaseSizes lists each database of an index with its size; sizeFormat=human writes sizes for people', async () => {
    const index = await h.request('GET', '/indexes/films/stats?showInternalDatabaseSizes=true');
    expect(index.status).toBe(200);
    const sizes = index.body.internalDatabaseSizes as Record<string, number>;
    expect(Object.keys(sizes)).toEqual(expect.arrayContaining(['main', 'documents', 'external-ids']));
    expect(Object.values(sizes).every((n) => Number.isInteger(n) && n >= 0)).toBe(true);
    expect(sizes.documents).toBe(index.body.rawDocumentDbSize);
    expect((await h.request('GET', '/indexes/films/stats')).body.internalDatabaseSizes).toBeUndefined();

    const human = await h.request('GET', '/stats?sizeFormat=human&showInternalDatabaseSizes=true');
    expect(human.status).toBe(200);
    expect(human.body.databaseSize).toMatch(/^\d+(\.\d\d)? (B|KiB|MiB|GiB)$/);
    expect(human.body.usedDatabaseSize).toMatch(/^\d+(\.\d\d)? (B|KiB|MiB|GiB)$/);
    expect(human.body.indexes.films.rawDocumentDbSize).toMatch(/ (B|KiB|MiB)$/);
    expect(human.body.indexes.films.avgDocumentSize).toMatch(/^\d+ B$|KiB$/);
    expect(human.body.indexes.films.internalDatabaseSizes.documents).toMatch(/ (B|KiB|MiB)$/);
    expect(human.body.indexes.films.numberOfDocuments).toBe(MOVIES.length);
    const raw = await h.request('GET', '/indexes/films/stats?sizeFormat=raw');
    expect(typeof raw.body.rawDocumentDbSize).toBe('number');
  });

  test('bad values are refused with bad_request', async () => {
    for (const path of ['/stats?sizeFormat=kb', '/indexes/films/stats?showInternalDatabaseSizes=yes', '/stats?other=1']) {
      const reply = await h.request('GET', path);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ code: 'bad_request', type: 'invalid_request', link: 'https://docs.meilisearch.com/errors#bad_request' });
    }
  });
});

test('a compacted index reopens with its documents after the server restarts', async () => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dbPath = join(mkdtempSync(join(tmpdir(), 'compact-restart-')), 'data.ms');
  let engine = await Engine.open({ dbPath, logLevel: 'off' });
  let server = createServer(engine);
  await server.listen('127.0.0.1:0');
  const add = await engine.addDocuments('m', MOVIES.slice(0, 500), { primaryKey: 'id' });
  await engine.waitForTask(add.taskUid);
  const compact = await engine.compactIndex('m');
  expect((await engine.waitForTask(compact.taskUid)).status).toBe('succeeded');
  await server.close();
  await engine.close();
  engine = await Engine.open({ dbPath, logLevel: 'off' });
  server = createServer(engine);
  try {
    expect(engine.indexStats('m').numberOfDocuments).toBe(500);
    expect((await engine.search('m', { q: MOVIES[10]!.title })).hits[0]).toMatchObject({ id: MOVIES[10]!.id });
    expect(existsSync(join(dbPath, 'indexes'))).toBe(true);
    expect(readdirSync(join(dbPath, 'indexes'))).toHaveLength(1);
  } finally {
    await server.close();
    await engine.close();
  }
});
