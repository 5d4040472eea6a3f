/**
 * The auth matrix: every route the server serves × (no key, wrong key, expired key, key without
 * the route's action, key for another index, tenant token) -> the exact status and code, and no
 * response that is refused (or allowed on another index) carries data of the protected indexes.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandActions, type Action } from '../../src/engine/auth/actions.js';
import { listRoutes, startSecured, type SecuredHarness } from './harness.js';

const MASTER = 'matrix-master-key-0123456789abcdef';
const SECRET_MARK = 'TOPSECRET-42';
const MOVIE_MARK = 'Hidden Fortress';

let h: SecuredHarness;
const keys: Record<string, string> = {};
let tenantToken = '';
let movieTaskUid = 0;
let movieBatchUid = 0;

async function asMaster(method: string, path: string, json?: unknown) {
  const res = await h.request(method, path, { key: MASTER, json });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

async function createKey(body: Record<string, unknown>): Promise<string> {
  return (await asMaster('POST', '/keys', { expiresAt: null, ...body })).key as string;
}

beforeAll(async () => {
  h = await startSecured({ masterKey: MASTER });
  for (const [uid, doc] of [
    ['movies', { id: 1, title: MOVIE_MARK, genre: 'drama' }],
    ['secret', { id: 1, title: SECRET_MARK }],
    ['other', { id: 1, title: 'visible to the other key' }],
  ] as const) {
    const task = await asMaster('POST', `/indexes/${uid}/documents`, [doc]);
    const done = await h.engine.waitForTask(task.taskUid);
    expect(done.status).toBe('succeeded');
    if (uid === 'movies') {
      movieTaskUid = done.uid;
      movieBatchUid = done.batchUid!;
    }
  }
  keys.all = await createKey({ actions: ['*'], indexes: ['*'] });
  keys.other = await createKey({ actions: ['*'], indexes: ['other'] });
  keys.versionOnly = await createKey({ actions: ['version'], indexes: ['*'] });
  keys.searchOnly = await createKey({ actions: ['search'], indexes: ['*'] });
  // an expired key cannot be created through the API; write one whose expiry has passed
  const expired = await asMaster('POST', '/keys', { actions: ['*'], indexes: ['*'], expiresAt: '2099-01-01' });
  const record = h.security.auth.keys.get(expired.uid)!;
  h.security.auth.keys.put({ ...record, expiresAt: '2020-01-01T00:00:00Z' });
  keys.expired = expired.key;
  tenantToken = await new SignJWT({ apiKeyUid: (await asMaster('GET', `/keys/${keys.all}`)).uid, searchRules: { movies: { filter: 'genre = comedy' } } })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode(keys.all));
});

afterAll(() => h.stop());

function concrete(path: string): string {
  return path
    .replace(':indexUid', 'movies')
    .replace(':documentId', '1')
    .replace(':taskUid', String(movieTaskUid))
    .replace(':batchUid', String(movieBatchUid))
    .replace(':uidOrKey', '0b0b0b0b-0000-4000-8000-000000000000')
    .replace(':uuid', '0c0c0c0c-0000-4000-8000-000000000000');
}

/** Bodies that are valid enough to reach the handler when a request is let through. */
function bodyFor(method: string, path: string): unknown {
  if (method === 'GET' || method === 'DELETE') return undefined;
  if (path === '/indexes') return { uid: 'movies_copy' };
  if (path === '/swap-indexes') return [{ indexes: ['movies', 'secret'] }];
  if (path === '/multi-search') return { queries: [{ indexUid: 'movies', q: 'x' }] };
  if (path === '/export') return { url: 'http://127.0.0.1:9' };
  if (path.endsWith('/documents')) return [{ id: 2, title: 'x' }];
  return {};
}

function expectNoLeak(text: string): void {
  expect(text).not.toContain(SECRET_MARK);
  expect(text).not.toContain(MOVIE_MARK);
  expect(text).not.toContain('"movies"');
  expect(text).not.toContain('"secret"');
}

describe('auth matrix', () => {
  it('covers every route with every failure mode', async () => {
    const routes = listRoutes(h.server);
    // the tree really is the whole API: spot-check families are present
    for (const p of ['/keys', '/webhooks', '/indexes/:indexUid/search', '/multi-search', '/tasks/cancel', '/indexes/:indexUid/settings/ranking-rules'])
      expect(routes.some((r) => r.path === p), p).toBe(true);
    expect(routes.length).toBeGreaterThan(80);

    const rows: string[] = [];
    for (const { method, path } of routes) {
      if (path.includes('*')) {
        // catch-all routes (CORS preflight): public by nature, so they must carry no data
        const res = await h.request(method, '/indexes/movies/documents');
        expect(res.status, `${method} ${path}`).toBeLessThan(500);
        expectNoLeak(res.text);
        continue;
      }
      const url = concrete(path) + ((path === '/tasks' && method === 'DELETE') || path === '/tasks/cancel' ? '?indexUids=movies' : '');
      const json = bodyFor(method, path);
      const call = (key: string | null) => h.request(method, url, { key, json });
      // the action the route declares, as the guard sees it
      h.lastAccess = null;
      await call(null);
      expect(h.lastAccess, `${method} ${path} reached no guard`).not.toBeNull();
      const action = h.lastAccess!.action as Action | null;

      if (action === null) {
        // public: `/health`, whatever is sent
        for (const key of [null, 'wrong', keys.expired!]) expect((await call(key)).status, `${method} ${path}`).toBe(200);
        continue;
      }
      const refused = async (key: string | null, status: number, code: string, label: string) => {
        const res = await call(key);
        expect([res.status, res.body?.code], `${label}: ${method} ${path} -> ${res.text}`).toEqual([status, code]);
        expectNoLeak(res.text);
        rows.push(`${method} ${path} ${label} ${res.status} ${res.body.code}`);
      };
      await refused(null, 401, 'missing_authorization_header', 'no key');
      await refused('0'.repeat(64), 403, 'invalid_api_key', 'wrong key');
      await refused(keys.expired!, 403, 'invalid_api_key', 'expired key');
      const lacking = expandActions(['version']).has(action) ? keys.searchOnly! : keys.versionOnly!;
      await refused(lacking, 403, 'invalid_api_key', 'wrong action');

      // a tenant token only ever grants search, within its rules
      if (action === 'search') {
        const res = await call(tenantToken);
        expect(res.status, `tenant token: ${method} ${path} -> ${res.text}`).toBe(200);
      } else {
        await refused(tenantToken, 403, 'invalid_api_key', 'tenant token');
      }

      // a key for another index: refused on index routes; elsewhere it sees nothing of them
      const res = await call(keys.other!);
      if (path.includes(':indexUid') || ['/swap-indexes', '/multi-search', '/tasks/cancel', '/export'].includes(path) || (path === '/indexes' && method === 'POST') || (path === '/tasks' && method === 'DELETE')) {
        expect([res.status, res.body?.code], `other index: ${method} ${path} -> ${res.text}`).toEqual([403, 'invalid_api_key']);
      } else if (path === '/tasks/:taskUid') {
        expect([res.status, res.body?.code]).toEqual([404, 'task_not_found']);
      } else if (path === '/batches/:batchUid') {
        expect([res.status, res.body?.code]).toEqual([404, 'batch_not_found']);
      } else {
        // allowed routes (lists, version, keys and webhooks management): never a 401/403
        expect([401, 403], `other index: ${method} ${path} -> ${res.text}`).not.toContain(res.status);
      }
      expectNoLeak(res.text);
    }
    expect(rows.length).toBeGreaterThan(300);
  });

  it('a key for another index lists only its own index, tasks and stats', async () => {
    const indexes = await h.request('GET', '/indexes', { key: keys.other });
    expect(indexes.body.results.map((i: { uid: string }) => i.uid)).toEqual(['other']);
    expect(indexes.body.total).toBe(1);
    const tasks = await h.request('GET', '/tasks', { key: keys.other });
    expect(tasks.body.results.length).toBeGreaterThan(0);
    for (const t of tasks.body.results) expect(t.indexUid).toBe('other');
    expect(tasks.body.total).toBe(tasks.body.results.length);
    const stats = await h.request('GET', '/stats', { key: keys.other });
    expect(Object.keys(stats.body.indexes)).toEqual(['other']);
    const batches = await h.request('GET', '/batches', { key: keys.other });
    for (const b of batches.body.results) expect(Object.keys(b.stats.indexUids)).toEqual(['other']);
    // the full key sees everything
    const all = await h.request('GET', '/indexes', { key: keys.all });
    expect(all.body.results.map((i: { uid: string }) => i.uid).sort()).toEqual(['movies', 'other', 'secret']);
  });

  it('a tenant token searches only its indexes, always with its filter', async () => {
    h.searches.length = 0;
    const post = await h.request('POST', '/indexes/movies/search', { key: tenantToken, json: { q: 'x', filter: 'year > 2000' } });
    expect(post.status).toBe(200);
    const get = await h.request('GET', '/indexes/movies/search?q=x', { key: tenantToken });
    expect(get.status).toBe(200);
    const multi = await h.request('POST', '/multi-search', { key: tenantToken, json: { queries: [{ indexUid: 'movies', q: 'x', filter: ['a = 1', ['b = 1', 'b = 2']] }] } });
    expect(multi.status).toBe(200);
    expect(h.searches.map(([m, , body]) => (m === 'multiSearch' ? body.queries[0].filter : body.filter))).toEqual([
      ['year > 2000', 'genre = comedy'],
      'genre = comedy',
      ['a = 1', ['b = 1', 'b = 2'], 'genre = comedy'],
    ]);
    const elsewhere = await h.request('POST', '/indexes/secret/search', { key: tenantToken, json: { q: 'x' } });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([403, 'invalid_api_key']);
    const multiElsewhere = await h.request('POST', '/multi-search', { key: tenantToken, json: { queries: [{ indexUid: 'secret', q: 'x' }] } });
    expect([multiElsewhere.status, multiElsewhere.body.code]).toEqual([403, 'invalid_api_key']);
    // a plain key's searches are not rewritten
    h.searches.length = 0;
    await h.request('POST', '/indexes/movies/search', { key: keys.searchOnly, json: { q: 'x', filter: 'year > 2000' } });
    expect(h.searches[0]![2].filter).toBe('year > 2000');
  });

  it('the master key and the default admin key manage keys; values are derived, not stored', async () => {
    const list = await h.request('GET', '/keys', { key: MASTER });
    expect(list.status).toBe(200);
    const admin = list.body.results.find((k: { name: string }) => k.name === 'Default Admin API Key');
    const readOnly = list.body.results.find((k: { name: string }) => k.name === 'Default Read-Only Admin API Key');
    expect((await h.request('GET', '/keys', { key: admin.key })).status).toBe(200);
    expect((await h.request('GET', '/keys', { key: readOnly.key })).status).toBe(200);
    expect((await h.request('POST', '/keys', { key: readOnly.key, json: { actions: ['*'], indexes: ['*'], expiresAt: null } })).status).toBe(403);
    expect((await h.request('GET', '/indexes/secret/documents', { key: readOnly.key })).status).toBe(200);
    const created = await h.request('POST', '/keys', { key: admin.key, json: { name: 'n', actions: ['search'], indexes: ['movies'], expiresAt: null } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['actions', 'createdAt', 'description', 'expiresAt', 'indexes', 'key', 'name', 'uid', 'updatedAt']);
    const patched = await h.request('PATCH', `/keys/${created.body.key}`, { key: MASTER, json: { description: 'd' } });
    expect([patched.status, patched.body.description, patched.body.name]).toEqual([200, 'd', 'n']);
    const immutable = await h.request('PATCH', `/keys/${created.body.uid}`, { key: MASTER, json: { actions: ['*'] } });
    expect([immutable.status, immutable.body.code]).toEqual([400, 'immutable_api_key_actions']);
    expect((await h.request('DELETE', `/keys/${created.body.uid}`, { key: MASTER })).status).toBe(204);
    expect((await h.request('GET', `/keys/${created.body.uid}`, { key: MASTER })).body.code).toBe('api_key_not_found');
    expect((await h.request('POST', '/indexes/movies/search', { key: created.body.key, json: {} })).body.code).toBe('invalid_api_key');
  });

  it('adding documents or settings creates a missing index only with indexes.create', async () => {
    const addOnly = await createKey({ actions: ['documents.add', 'settings.update'], indexes: ['*'] });
    const creator = await createKey({ actions: ['documents.add', 'settings.update', 'indexes.create'], indexes: ['*'] });
    // accepted as the reference does; the task then fails without creating the index
    const refused = await h.request('POST', '/indexes/brand_new/documents', { key: addOnly, json: [{ id: 1 }] });
    expect(refused.status).toBe(202);
    const refusedDone = await h.engine.waitForTask(refused.body.taskUid);
    expect([refusedDone.status, refusedDone.error?.code, refusedDone.error?.message]).toEqual(['failed', 'index_not_found', 'Index `brand_new` not found.']);
    const refusedUpdate = await h.request('PUT', '/indexes/brand_new/documents', { key: addOnly, json: [{ id: 1 }] });
    expect(refusedUpdate.status).toBe(202);
    expect((await h.engine.waitForTask(refusedUpdate.body.taskUid)).error?.code).toBe('index_not_found');
    for (const [method, path, json] of [
      ['PATCH', '/indexes/brand_new/settings', { stopWords: ['a'] }],
      ['PUT', '/indexes/brand_new/settings/stop-words', ['a']],
      ['DELETE', '/indexes/brand_new/settings', undefined],
    ] as const) {
      const res = await h.request(method, path, { key: addOnly, json });
      expect([method, path, res.status]).toEqual([method, path, 202]);
      const done = await h.engine.waitForTask(res.body.taskUid);
      expect([path, done.status, done.error?.code]).toEqual([path, 'failed', 'index_not_found']);
    }
    const missing = await h.request('GET', '/indexes/brand_new', { key: MASTER });
    expect([missing.status, missing.body.code]).toEqual([404, 'index_not_found']);

    const toExisting = await h.request('POST', '/indexes/other/documents', { key: addOnly, json: [{ id: 7 }] });
    expect(toExisting.status).toBe(202);
    expect((await h.engine.waitForTask(toExisting.body.taskUid)).status).toBe('succeeded');
    const settingsOfExisting = await h.request('PATCH', '/indexes/other/settings', { key: addOnly, json: { stopWords: ['the'] } });
    expect((await h.engine.waitForTask(settingsOfExisting.body.taskUid)).status).toBe('succeeded');

    // a refused addition queued before a creating one fails alone; its documents are never written
    const before = await h.request('POST', '/indexes/brand_new/documents', { key: addOnly, json: [{ id: 'refused' }] });
    const created = await h.request('POST', '/indexes/brand_new/documents', { key: creator, json: [{ id: 'kept' }] });
    expect([before.status, created.status]).toEqual([202, 202]);
    expect((await h.engine.waitForTask(before.body.taskUid)).error?.code).toBe('index_not_found');
    expect((await h.engine.waitForTask(created.body.taskUid)).status).toBe('succeeded');
    const docs = await h.request('GET', '/indexes/brand_new/documents', { key: MASTER });
    expect(docs.body.results).toEqual([{ id: 'kept' }]);

    const settingsCreated = await h.request('PATCH', '/indexes/settings_new/settings', { key: creator, json: { stopWords: ['a'] } });
    expect((await h.engine.waitForTask(settingsCreated.body.taskUid)).status).toBe('succeeded');
    expect((await h.request('GET', '/indexes/settings_new/settings/stop-words', { key: MASTER })).body).toEqual(['a']);
  });

  it('without a master key every route is open except /keys', async () => {
    const open = await startSecured({ masterKey: null });
    try {
      expect((await open.request('GET', '/indexes')).status).toBe(200);
      expect((await open.request('GET', '/webhooks')).status).toBe(200);
      const keysRes = await open.request('GET', '/keys');
      expect([keysRes.status, keysRes.body.code]).toEqual([401, 'missing_master_key']);
      const withHeader = await open.request('POST', '/keys', { key: 'anything', json: {} });
      expect([withHeader.status, withHeader.body.code]).toEqual([401, 'missing_master_key']);
    } finally {
      await open.stop();
    }
  });
});
