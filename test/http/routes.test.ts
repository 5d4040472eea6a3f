/** Every built-in route through real HTTP: status codes and response shapes of the reference. */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

const SUMMARIZED_KEYS = ['enqueuedAt', 'indexUid', 'status', 'taskUid', 'type'];
const TASK_KEYS = [
  'batchUid',
  'canceledBy',
  'details',
  'duration',
  'enqueuedAt',
  'error',
  'finishedAt',
  'indexUid',
  'startedAt',
  'status',
  'type',
  'uid',
];

async function accepted(method: string, path: string, json?: unknown) {
  const reply = await h.request(method, path, json === undefined ? {} : { json });
  expect(reply.status, reply.text).toBe(202);
  expect(Object.keys(reply.body).sort()).toEqual(SUMMARIZED_KEYS);
  expect(reply.body.status).toBe('enqueued');
  return h.wait(reply.body.taskUid);
}

describe('health and version', () => {
  test('GET /health answers available', async () => {
    const reply = await h.request('GET', '/health');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: 'available' });
  });

  test('GET /version gives the compatible Meilisearch version, our own version and the commit fields', async () => {
    const reply = await h.request('GET', '/version');
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(['commitDate', 'commitSha', 'pkgVersion', 'searchVersion']);
    // version-gated clients compare pkgVersion with the Meilisearch release that brought a feature
    expect(reply.body.pkgVersion).toMatch(/^1\.\d+\.\d+$/);
    expect(Number(reply.body.pkgVersion.split('.')[1])).toBeGreaterThanOrEqual(35);
    expect(reply.body.searchVersion).toBe(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
    expect(reply.body.commitSha).toMatch(/^([0-9a-f]{40}|unknown)$/);
  });
});

describe('indexes', () => {
  test('create, get, list with pagination, update primary key, delete', async () => {
    const created = await accepted('POST', '/indexes', { uid: 'books', primaryKey: 'isbn' });
    expect(created).toMatchObject({ status: 'succeeded', type: 'indexCreation', indexUid: 'books' });
    expect(Object.keys(created).sort()).toEqual(TASK_KEYS);
    await accepted('POST', '/indexes', { uid: 'authors' });

    const one = await h.request('GET', '/indexes/books');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ uid: 'books', primaryKey: 'isbn' });
    expect(Object.keys(one.body).sort()).toEqual(['createdAt', 'primaryKey', 'uid', 'updatedAt']);

    const page = await h.request('GET', '/indexes?offset=1&limit=1');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ offset: 1, limit: 1, total: 2 });
    expect(page.body.results).toHaveLength(1);
    const all = await h.request('GET', '/indexes');
    expect(all.body.limit).toBe(20);
    expect(all.body.results.map((i: { uid: string }) => i.uid).sort()).toEqual(['authors', 'books']);

    const updated = await accepted('PATCH', '/indexes/authors', { primaryKey: 'name' });
    expect(updated.status).toBe('succeeded');
    expect((await h.request('GET', '/indexes/authors')).body.primaryKey).toBe('name');

    const deleted = await accepted('DELETE', '/indexes/authors');
    expect(deleted.status).toBe('succeeded');
    const gone = await h.request('GET', '/indexes/authors');
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('index_not_found');
  });

  test('swap-indexes exchanges the documents of two indexes', async () => {
    await accepted('POST', '/indexes/left/documents', [{ id: 1, side: 'left' }]);
    await accepted('POST', '/indexes/right/documents', [{ id: 1, side: 'right' }]);
    const swap = await accepted('POST', '/swap-indexes', [{ indexes: ['left', 'right'] }]);
    expect(swap).toMatchObject({ status: 'succeeded', type: 'indexSwap' });
    expect((await h.request('GET', '/indexes/left/documents/1')).body).toEqual({ id: 1, side: 'right' });
  });

  test('stats of one index and of the instance', async () => {
    await accepted('POST', '/indexes/counted/documents', [
      { id: 1, a: 'x' },
      { id: 2, b: 'y' },
    ]);
    const one = await h.request('GET', '/indexes/counted/stats');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ numberOfDocuments: 2, isIndexing: false, fieldDistribution: { id: 2, a: 1, b: 1 } });
    const all = await h.request('GET', '/stats');
    expect(all.status).toBe(200);
    expect(all.body.indexes.counted.numberOfDocuments).toBe(2);
    expect(typeof all.body.databaseSize).toBe('number');
    // index data files are sparse, sized to their 1 GiB memory map: the size counts what is
    // allocated, as `du` does, not a gigabyte per index
    expect(all.body.databaseSize).toBeGreaterThan(0);
    expect(all.body.databaseSize).toBeLessThan(256 * 1024 * 1024);
    expect(all.body.lastUpdate).toEqual(expect.any(String));
  });
});

describe('documents', () => {
  test('add JSON (creates the index, infers the primary key), NDJSON and CSV, then browse', async () => {
    const json = await accepted('POST', '/indexes/movies/documents', [
      { movie_id: 1, title: 'Alien', year: 1979 },
      { movie_id: 2, title: 'Heat', year: 1995 },
    ]);
    expect(json).toMatchObject({ status: 'succeeded', details: { receivedDocuments: 2, indexedDocuments: 2 } });
    expect((await h.request('GET', '/indexes/movies')).body.primaryKey).toBe('movie_id');

    const nd = await h.request('POST', '/indexes/movies/documents', {
      raw: '{"movie_id":3,"title":"Ran"}\n{"movie_id":4,"title":"Brazil"}\n',
      contentType: 'application/x-ndjson',
    });
    expect(nd.status).toBe(202);
    expect((await h.wait(nd.body.taskUid)).status).toBe('succeeded');
    // as the reference reads NDJSON (a stream of values): objects back to back on one line, as its export sends them
    const run = await h.request('POST', '/indexes/movies/documents', {
      raw: '{"movie_id":6,"title":"Ikiru"}{"movie_id":7,"title":"Yojimbo {}"} {"movie_id":8,"title":"Ran \\"}\\""}\n',
      contentType: 'application/x-ndjson',
    });
    expect(run.status).toBe(202);
    expect((await h.wait(run.body.taskUid)).details).toMatchObject({ receivedDocuments: 3, indexedDocuments: 3 });
    const fetchedRun = await h.request('POST', '/indexes/movies/documents/fetch', { json: { ids: ['6', '7', '8'], fields: ['title'] } });
    expect(fetchedRun.body.results).toEqual([{ title: 'Ikiru' }, { title: 'Yojimbo {}' }, { title: 'Ran "}"' }]);
    const deleted = await h.request('POST', '/indexes/movies/documents/delete-batch', { json: [6, 7, 8] });
    expect((await h.wait(deleted.body.taskUid)).status).toBe('succeeded');

    const csv = await h.request('POST', '/indexes/movies/documents?csvDelimiter=;', {
      raw: 'movie_id;title\n5;Jaws\n',
      contentType: 'text/csv',
    });
    expect(csv.status).toBe(202);
    expect((await h.wait(csv.body.taskUid)).status).toBe('succeeded');

    const page = await h.request('GET', '/indexes/movies/documents?offset=1&limit=2&fields=title');
    expect(page.status).toBe(200);
    expect(page.body).toEqual({ results: [{ title: 'Heat' }, { title: 'Ran' }], offset: 1, limit: 2, total: 5 });

    const fetched = await h.request('POST', '/indexes/movies/documents/fetch', { json: { limit: 1, fields: ['movie_id'] } });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({ results: [{ movie_id: 1 }], offset: 0, limit: 1, total: 5 });

    const one = await h.request('GET', '/indexes/movies/documents/5?fields=title');
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ title: 'Jaws' });
  });

  test('PUT merges fields into existing documents, POST replaces them', async () => {
    await accepted('POST', '/indexes/merge/documents', [{ id: 'a', x: 1, y: 1 }]);
    await accepted('PUT', '/indexes/merge/documents', [{ id: 'a', y: 2 }]);
    expect((await h.request('GET', '/indexes/merge/documents/a')).body).toEqual({ id: 'a', x: 1, y: 2 });
    await accepted('POST', '/indexes/merge/documents', [{ id: 'a', z: 3 }]);
    expect((await h.request('GET', '/indexes/merge/documents/a')).body).toEqual({ id: 'a', z: 3 });
  });

  test('delete one, a batch, by clearing; primaryKey query parameter', async () => {
    await accepted(
      'POST',
      '/indexes/del/documents?primaryKey=code',
      Array.from({ length: 6 }, (_, i) => ({ code: `c${i}`, ref: i })),
    );
    expect((await h.request('GET', '/indexes/del')).body.primaryKey).toBe('code');
    expect((await accepted('DELETE', '/indexes/del/documents/c0')).details).toMatchObject({ deletedDocuments: 1 });
    expect((await accepted('POST', '/indexes/del/documents/delete-batch', ['c1', 'c2', 'nope'])).details).toMatchObject({
      providedIds: 3,
      deletedDocuments: 2,
    });
    expect((await h.request('GET', '/indexes/del/documents')).body.total).toBe(3);
    expect((await accepted('DELETE', '/indexes/del/documents')).details).toMatchObject({ deletedDocuments: 3 });
    expect((await h.request('GET', '/indexes/del/documents')).body.total).toBe(0);
  });
});

describe('transport', () => {
  test('a gzip-compressed document payload is decoded', async () => {
    const reply = await h.request('POST', '/indexes/zipped/documents', {
      raw: gzipSync(JSON.stringify([{ id: 1, title: 'compressed' }])),
      contentType: 'application/json',
      headers: { 'content-encoding': 'gzip' },
    });
    expect(reply.status, reply.text).toBe(202);
    expect((await h.wait(reply.body.taskUid)).status).toBe('succeeded');
    expect((await h.request('GET', '/indexes/zipped/documents/1')).body).toEqual({ id: 1, title: 'compressed' });
  });

  test('CORS: preflights are answered and every response, errors included, allows any origin', async () => {
    const preflight = await h.request('OPTIONS', '/indexes/movies/search', {
      headers: { origin: 'http://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const error = await h.request('GET', '/indexes/nothing-here', { headers: { origin: 'http://app.example' } });
    expect(error.status).toBe(404);
    expect(error.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('methods', () => {
  test('a known path asked with a method it does not serve answers 405 with Allow; an unknown path 404', async () => {
    await accepted('POST', '/indexes', { uid: 'methods' });
    for (const [method, path, allowed] of [
      ['PATCH', '/indexes/methods/search', 'GET, HEAD, POST'],
      ['DELETE', '/health', 'GET, HEAD'],
      ['PUT', '/indexes/methods/settings', 'DELETE, GET, HEAD, PATCH'],
      ['DELETE', '/tasks/cancel?uids=1', 'GET, HEAD, POST'],
      ['POST', '/indexes/methods/', 'DELETE, GET, HEAD, PATCH'],
      ['PATCH', '/indexes/a%2Fb/documents/42', 'DELETE, GET, HEAD'],
    ] as const) {
      const reply = await h.request(method, path, method === 'DELETE' || method === 'GET' ? {} : { json: {} });
      expect([method, path, reply.status, reply.text, reply.headers.get('allow')]).toEqual([method, path, 405, '', allowed]);
    }
    // the index and its settings are untouched by the refused calls
    expect((await h.request('GET', '/indexes/methods/settings/stop-words')).body).toEqual([]);
    for (const [method, path] of [
      ['DELETE', '/nothing-here'],
      ['GET', '/indexes/methods/search/extra'],
      ['PATCH', '/indexes/methods/unknown'],
    ] as const) {
      const reply = await h.request(method, path);
      expect([method, path, reply.status, reply.body?.code]).toEqual([method, path, 404, 'not_found']);
    }
  });
});

describe('settings', () => {
  test('whole settings and one sub-route: get, update, reset', async () => {
    await accepted('POST', '/indexes', { uid: 'conf' });
    const defaults = await h.request('GET', '/indexes/conf/settings');
    expect(defaults.status).toBe(200);
    expect(defaults.body.rankingRules).toEqual(['words', 'typo', 'proximity', 'attributeRank', 'sort', 'wordPosition', 'exactness']);

    expect((await accepted('PUT', '/indexes/conf/settings/stop-words', ['the', 'a'])).status).toBe('succeeded');
    expect((await h.request('GET', '/indexes/conf/settings/stop-words')).body).toEqual(['the', 'a']);
    expect((await accepted('PATCH', '/indexes/conf/settings', { distinctAttribute: 'sku' })).status).toBe('succeeded');
    expect((await h.request('GET', '/indexes/conf/settings')).body).toMatchObject({ stopWords: ['the', 'a'], distinctAttribute: 'sku' });
    expect((await h.request('GET', '/indexes/conf/settings/typo-tolerance')).body.enabled).toBe(true);

    await accepted('DELETE', '/indexes/conf/settings/stop-words');
    expect((await h.request('GET', '/indexes/conf/settings/stop-words')).body).toEqual([]);
    await accepted('DELETE', '/indexes/conf/settings');
    expect((await h.request('GET', '/indexes/conf/settings')).body.distinctAttribute).toBeNull();
  });
});

describe('tasks and batches', () => {
  test('list with filters and cursor pagination, get one, cancel and delete by filter', async () => {
    const a = await accepted('POST', '/indexes', { uid: 'task_a' });
    const b = await accepted('POST', '/indexes', { uid: 'task_b' });

    const filtered = await h.request('GET', '/tasks?indexUids=task_a,task_b&types=indexCreation&statuses=succeeded');
    expect(filtered.status).toBe(200);
    expect(filtered.body.results.map((t: { uid: number }) => t.uid)).toEqual([b.uid, a.uid]);
    expect(Object.keys(filtered.body).sort()).toEqual(['from', 'limit', 'next', 'results', 'total']);

    const first = await h.request('GET', '/tasks?indexUids=task_a,task_b&limit=1');
    expect(first.body).toMatchObject({ total: 2, limit: 1, from: b.uid, next: a.uid });
    const second = await h.request('GET', `/tasks?indexUids=task_a,task_b&limit=1&from=${first.body.next}`);
    expect(second.body.results[0].uid).toBe(a.uid);
    expect(second.body.next).toBeNull();
    const reversed = await h.request('GET', '/tasks?indexUids=task_a,task_b&reverse=true');
    expect(reversed.body.results.map((t: { uid: number }) => t.uid)).toEqual([a.uid, b.uid]);

    const since = new Date(Date.parse(String(a.enqueuedAt)) - 1).toISOString();
    const dated = await h.request('GET', `/tasks?afterEnqueuedAt=${since}&indexUids=task_a`);
    expect(dated.body.results.map((t: { uid: number }) => t.uid)).toEqual([a.uid]);

    const one = await h.request('GET', `/tasks/${a.uid}`);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(TASK_KEYS);

    const cancel = await h.request('POST', `/tasks/cancel?uids=${a.uid}`);
    expect(cancel.status).toBe(200);
    expect(cancel.body.type).toBe('taskCancelation');
    const cancelTask = await h.wait(cancel.body.taskUid);
    expect(cancelTask.details).toMatchObject({ matchedTasks: 1, canceledTasks: 0 });

    const del = await h.request('DELETE', `/tasks?uids=${a.uid}`);
    expect(del.status).toBe(200);
    expect(del.body.type).toBe('taskDeletion');
    await h.wait(del.body.taskUid);
    expect((await h.request('GET', `/tasks/${a.uid}`)).status).toBe(404);

    const batches = await h.request('GET', '/batches?limit=2');
    expect(batches.status).toBe(200);
    expect(batches.body.limit).toBe(2);
    const batch = await h.request('GET', `/batches/${b.batchUid}`);
    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({ uid: b.batchUid, stats: { types: { indexCreation: 1 } } });
  });

  test('statuses=* is a filter (it selects every task) for deletion', async () => {
    const del = await h.request('DELETE', '/tasks?statuses=*&indexUids=never_used');
    expect(del.status).toBe(200);
    const done = await h.wait(del.body.taskUid);
    expect(done.status).toBe('succeeded');
  });
});
