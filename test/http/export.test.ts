/**
 * `POST /export` end to end: two servers of ours on ephemeral loopback ports, a source (with a
 * master key, loopback allowed for outbound calls) and a destination (with its own master key).
 * What the destination holds after an export is read through its public API: indexes, settings,
 * documents with their vectors, and the document tasks the payloads became.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSecured, type SecuredHarness } from '../auth/harness.js';
import { movies as moviesData } from '../data.js';
import { expectErrorShape } from './harness.js';

// the export gives up on a dead remote after this long (the reference retries for 15 minutes)
process.env.SEARCH_EXPORT_RETRY_BUDGET_MS = '1500';

const SOURCE_KEY = 'export-source-master-key-0123456789';
const DEST_KEY = 'export-destination-master-key-0123456789';
const movies = moviesData()
  .slice(0, 60)
  .map(({ id, title, year, genres }) => ({ id, title, year, genres }));

let source: SecuredHarness;

async function settled(h: SecuredHarness, key: string, method: string, path: string, json?: unknown): Promise<void> {
  const res = await h.request(method, path, { key, json });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const task = await h.engine.waitForTask(res.body.taskUid as number, { timeoutMs: 60_000 });
  expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
}

/** Start an export on the source and wait for its task to finish. */
async function exportTo(body: unknown): Promise<any> {
  const res = await source.request('POST', '/export', { key: SOURCE_KEY, json: body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body).toMatchObject({ indexUid: null, status: 'enqueued', type: 'export' });
  await source.engine.waitForTask(res.body.taskUid as number, { timeoutMs: 60_000 });
  return (await source.request('GET', `/tasks/${String(res.body.taskUid)}`, { key: SOURCE_KEY })).body;
}

/** Every task the destination was sent, finished. */
async function destinationSettled(dest: SecuredHarness): Promise<any[]> {
  const tasks = (await dest.request('GET', '/tasks?limit=1000', { key: DEST_KEY })).body.results as any[];
  for (const task of tasks) await dest.engine.waitForTask(task.uid as number, { timeoutMs: 60_000 });
  return (await dest.request('GET', '/tasks?limit=1000', { key: DEST_KEY })).body.results as any[];
}

async function documents(h: SecuredHarness, key: string, uid: string, query = ''): Promise<any[]> {
  const res = await h.request('GET', `/indexes/${uid}/documents?limit=1000${query}`, { key });
  expect(res.status).toBe(200);
  return (res.body.results as any[]).sort((a, b) => Number(a.id) - Number(b.id));
}

beforeAll(async () => {
  source = await startSecured({ masterKey: SOURCE_KEY, allowedIpNetworks: '127.0.0.0/8' });
  await settled(source, SOURCE_KEY, 'POST', '/indexes', { uid: 'movies', primaryKey: 'id' });
  await settled(source, SOURCE_KEY, 'PATCH', '/indexes/movies/settings', {
    filterableAttributes: ['genres', 'year'],
    searchableAttributes: ['title', 'genres'],
    embedders: { manual: { source: 'userProvided', dimensions: 3 } },
  });
  await settled(
    source,
    SOURCE_KEY,
    'POST',
    '/indexes/movies/documents',
    movies.map((m, i) => ({ ...m, _vectors: { manual: [i, 1, 0.5] } })),
  );
  await settled(source, SOURCE_KEY, 'POST', '/indexes', { uid: 'books', primaryKey: 'isbn' });
  await settled(source, SOURCE_KEY, 'POST', '/indexes/books/documents', [
    { isbn: '1', title: 'Dune' },
    { isbn: '2', title: 'Emma' },
  ]);
});
afterAll(async () => {
  await source.stop();
});

describe('POST /export', () => {
  let dest: SecuredHarness;
  beforeEach(async () => {
    // the address policy is per process, and every harness sets it: the destination's must allow loopback too
    dest = await startSecured({ masterKey: DEST_KEY, allowedIpNetworks: '127.0.0.0/8' });
  });
  afterEach(async () => {
    await dest.stop();
  });

  it('sends every index, its settings and its documents with their vectors, authenticated with the apiKey', async () => {
    const task = await exportTo({ url: dest.url, apiKey: DEST_KEY });
    expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
    expect(task.error).toBeNull();
    // the key never shows in clear; indexes are keyed by the exported index uid once done
    expect(task.details).toEqual({
      url: dest.url,
      apiKey: 'exporXXXXXX...',
      indexes: {
        books: { filter: null, overrideSettings: false, matchedDocuments: 2 },
        movies: { filter: null, overrideSettings: false, matchedDocuments: 60 },
      },
    });
    expect(JSON.stringify(task)).not.toContain(DEST_KEY);
    const listed = await source.request('GET', '/tasks?types=export', { key: SOURCE_KEY });
    expect(listed.body.results.map((t: any) => t.uid)).toContain(task.uid);

    const destTasks = await destinationSettled(dest);
    expect(destTasks.every((t) => t.status === 'succeeded')).toBe(true);
    for (const uid of ['movies', 'books']) {
      const [theirs, ours] = await Promise.all([
        dest.request('GET', `/indexes/${uid}`, { key: DEST_KEY }),
        source.request('GET', `/indexes/${uid}`, { key: SOURCE_KEY }),
      ]);
      expect(theirs.body.primaryKey).toBe(ours.body.primaryKey);
      const [theirSettings, ourSettings] = await Promise.all([
        dest.request('GET', `/indexes/${uid}/settings`, { key: DEST_KEY }),
        source.request('GET', `/indexes/${uid}/settings`, { key: SOURCE_KEY }),
      ]);
      expect(theirSettings.body).toEqual(ourSettings.body);
      expect(await documents(dest, DEST_KEY, uid, '&retrieveVectors=true')).toEqual(await documents(source, SOURCE_KEY, uid, '&retrieveVectors=true'));
    }
    // the vectors travelled as user-provided embeddings, not re-computed
    const [first] = await documents(dest, DEST_KEY, 'movies', '&retrieveVectors=true');
    expect(first._vectors.manual).toEqual({ embeddings: [[0, 1, 0.5]], regenerate: false });
  });

  it('sends only the indexes a pattern matches and only the documents the filter selects', async () => {
    const task = await exportTo({ url: dest.url, apiKey: DEST_KEY, indexes: { 'mov*': { filter: 'year = 1901 AND genres = Silent' } } });
    expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
    const expected = movies.filter((m) => m.year === 1901 && m.genres.includes('Silent'));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(movies.length);
    expect(task.details.indexes).toEqual({ movies: { filter: 'year = 1901 AND genres = Silent', overrideSettings: false, matchedDocuments: expected.length } });
    await destinationSettled(dest);
    const indexes = (await dest.request('GET', '/indexes', { key: DEST_KEY })).body.results.map((i: any) => i.uid);
    expect(indexes).toEqual(['movies']);
    expect((await documents(dest, DEST_KEY, 'movies')).map((d) => d.id)).toEqual(expected.map((m) => m.id).sort((a, b) => a - b));
  });

  it('keeps the settings of an existing remote index unless overrideSettings is true', async () => {
    await settled(dest, DEST_KEY, 'POST', '/indexes', { uid: 'books', primaryKey: 'isbn' });
    await settled(dest, DEST_KEY, 'PATCH', '/indexes/books/settings', { searchableAttributes: ['title'], sortableAttributes: ['title'] });
    const theirsBefore = (await dest.request('GET', '/indexes/books/settings', { key: DEST_KEY })).body;

    const kept = await exportTo({ url: dest.url, apiKey: DEST_KEY, indexes: { books: { overrideSettings: false } } });
    expect(kept.status, JSON.stringify(kept.error)).toBe('succeeded');
    const afterKept = await destinationSettled(dest);
    expect(afterKept.filter((t) => t.type === 'settingsUpdate')).toHaveLength(1);
    expect((await dest.request('GET', '/indexes/books/settings', { key: DEST_KEY })).body).toEqual(theirsBefore);
    expect(await documents(dest, DEST_KEY, 'books')).toHaveLength(2);

    const overridden = await exportTo({ url: dest.url, apiKey: DEST_KEY, indexes: { books: { overrideSettings: true } } });
    expect(overridden.status, JSON.stringify(overridden.error)).toBe('succeeded');
    expect(overridden.details.indexes.books).toEqual({ filter: null, overrideSettings: true, matchedDocuments: 2 });
    await destinationSettled(dest);
    const ours = (await source.request('GET', '/indexes/books/settings', { key: SOURCE_KEY })).body;
    expect((await dest.request('GET', '/indexes/books/settings', { key: DEST_KEY })).body).toEqual(ours);
  });

  it('splits the documents into payloads of at most payloadSize bytes', async () => {
    const task = await exportTo({ url: dest.url, apiKey: DEST_KEY, payloadSize: '2KiB', indexes: { movies: {} } });
    expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
    expect(task.details.payloadSize).toBe('2 KiB');
    const tasks = await destinationSettled(dest);
    const additions = tasks.filter((t) => t.type === 'documentAdditionOrUpdate');
    // 60 documents of 150 to 300 bytes with their vectors: at least 5 payloads of 2 KiB
    expect(additions.length).toBeGreaterThanOrEqual(5);
    expect(additions.every((t) => t.status === 'succeeded')).toBe(true);
    expect(additions.reduce((sum, t) => sum + (t.details.receivedDocuments as number), 0)).toBe(60);
    expect(await documents(dest, DEST_KEY, 'movies')).toHaveLength(60);

    // an integer is a number of bytes; one document larger than the limit still goes, alone
    const tiny = await exportTo({ url: dest.url, apiKey: DEST_KEY, payloadSize: 1, indexes: { books: {} } });
    expect(tiny.details.payloadSize).toBe('1 B');
    const after = await destinationSettled(dest);
    expect(after.filter((t) => t.type === 'documentAdditionOrUpdate' && t.indexUid === 'books')).toHaveLength(2);
  });

  it('calls the public API with the bearer key, gzipped NDJSON, and retries a 503', async () => {
    const calls: Array<{ method: string; path: string; authorization?: string; type?: string; encoding?: string; answered: number }> = [];
    let failed = false;
    // a recording proxy in front of the destination that answers the first document payload 503
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const call = { method: req.method!, path: req.url!, authorization: req.headers.authorization, type: req.headers['content-type'], encoding: req.headers['content-encoding'], answered: 503 };
        calls.push(call);
        if (!failed && req.method === 'POST' && req.url!.endsWith('/documents')) {
          failed = true;
          res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy","code":"internal","type":"internal","link":"x"}');
          return;
        }
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'content-type', 'content-encoding']) if (req.headers[name]) headers[name] = String(req.headers[name]);
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        const answer = await fetch(dest.url + req.url!, { method: req.method, headers, body });
        call.answered = answer.status;
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const task = await exportTo({ url, apiKey: DEST_KEY, payloadSize: 1000, indexes: { books: {} } });
      expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
      expect(calls.every((c) => c.authorization === `Bearer ${DEST_KEY}`)).toBe(true);
      expect(calls.map((c) => [c.method, c.path, c.answered])).toEqual([
        ['GET', '/indexes/books', 404],
        ['POST', '/indexes', 202],
        ['PATCH', '/indexes/books/settings', 202],
        ['POST', '/indexes/books/documents', 503],
        ['POST', '/indexes/books/documents', 202],
      ]);
      const payload = calls[4]!;
      expect([payload.type, payload.encoding]).toEqual(['application/x-ndjson', 'gzip']);
      await destinationSettled(dest);
      expect(await documents(dest, DEST_KEY, 'books')).toEqual(await documents(source, SOURCE_KEY, 'books'));
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('fails with the remote error when the remote refuses the key', async () => {
    const wrong = await exportTo({ url: dest.url, apiKey: 'not-the-destination-key-0123456789' });
    expect(wrong.status).toBe('failed');
    expectErrorShape(wrong.error, 'invalid_api_key');
    expect(wrong.error.type).toBe('auth');
    expect(wrong.error.message).toContain(dest.url);
    const none = await exportTo({ url: dest.url });
    expect(none.status).toBe('failed');
    expectErrorShape(none.error, 'missing_authorization_header');
    expect(none.details).not.toHaveProperty('apiKey');
    expect((await dest.request('GET', '/indexes', { key: DEST_KEY })).body.results).toEqual([]);
  });
});

describe('POST /export to a remote that is down or hangs', () => {
  it('fails the task with an error object once the retries run out; the server keeps serving', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const task = await exportTo({ url: `http://127.0.0.1:${port}`, apiKey: DEST_KEY });
    expect(task.status).toBe('failed');
    expectErrorShape(task.error, 'internal');
    expect(task.error.message).toMatch(/could not reach `http:\/\/127\.0\.0\.1:\d+`.*gave up after \d+ attempts/);
    expect((await source.request('GET', '/health')).status).toBe(200);
    expect((await documents(source, SOURCE_KEY, 'books')).length).toBe(2);
  });

  it('is canceled while it waits for the remote', async () => {
    let hanging: Server | null = createServer(() => {
      // never answers
    });
    await new Promise<void>((resolve) => hanging!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    try {
      const res = await source.request('POST', '/export', { key: SOURCE_KEY, json: { url } });
      expect(res.status).toBe(202);
      const uid = res.body.taskUid as number;
      // wait until it runs
      for (let i = 0; i < 200 && source.engine.getTask(uid).status !== 'processing'; i++) await new Promise((r) => setTimeout(r, 25));
      expect(source.engine.getTask(uid).status, JSON.stringify(source.engine.getTask(uid).error)).toBe('processing');
      const cancel = await source.request('POST', `/tasks/cancel?uids=${uid}`, { key: SOURCE_KEY });
      expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
      await source.engine.waitForTask(cancel.body.taskUid as number, { timeoutMs: 10_000 });
      const task = source.engine.getTask(uid);
      expect(task.status).toBe('canceled');
      expect(task.canceledBy).toBe(cancel.body.taskUid);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging!.close(() => resolve()));
      hanging = null;
    }
  });
});

describe('POST /export validation and keys', () => {
  const cases: Array<[string, unknown, string]> = [
    ['no url', {}, 'invalid_export_url'],
    ['a url of the wrong type', { url: 12 }, 'invalid_export_url'],
    ['a url that is not one', { url: 'not a url' }, 'invalid_export_url'],
    ['a url of another protocol', { url: 'ftp://example.com' }, 'invalid_export_url'],
    ['an apiKey of the wrong type', { url: 'http://example.com', apiKey: 1 }, 'invalid_export_api_key'],
    ['a payloadSize with an unknown unit', { url: 'http://example.com', payloadSize: '12 XB' }, 'invalid_export_payload_size'],
    ['a payloadSize that is not a number', { url: 'http://example.com', payloadSize: 'big' }, 'invalid_export_payload_size'],
    ['a negative payloadSize', { url: 'http://example.com', payloadSize: -1 }, 'invalid_export_payload_size'],
    ['an invalid index pattern', { url: 'http://example.com', indexes: { 'no spaces*': {} } }, 'invalid_export_indexes_patterns'],
    ['a star inside a pattern', { url: 'http://example.com', indexes: { 'mo*ies': {} } }, 'invalid_export_indexes_patterns'],
    ['a filter that does not parse', { url: 'http://example.com', indexes: { '*': { filter: 'year >' } } }, 'invalid_export_index_filter'],
    ['a filter of the wrong type', { url: 'http://example.com', indexes: { '*': { filter: 12 } } }, 'invalid_export_index_filter'],
    ['overrideSettings not a boolean', { url: 'http://example.com', indexes: { '*': { overrideSettings: 'yes' } } }, 'invalid_export_index_override_settings'],
    ['an unknown field', { url: 'http://example.com', index: {} }, 'bad_request'],
    ['an unknown index field', { url: 'http://example.com', indexes: { '*': { name: 'x' } } }, 'bad_request'],
  ];
  it.each(cases)('refuses %s with 400 and its code, enqueuing nothing', async (_name, body, code) => {
    const before = (await source.request('GET', '/tasks?types=export&limit=1000', { key: SOURCE_KEY })).body.total;
    const res = await source.request('POST', '/export', { key: SOURCE_KEY, json: body });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, code);
    expect((await source.request('GET', '/tasks?types=export&limit=1000', { key: SOURCE_KEY })).body.total).toBe(before);
  });

  it('shows the details the reference shows while enqueued, and needs the export action', async () => {
    const made = async (actions: string[]) =>
      (await source.request('POST', '/keys', { key: SOURCE_KEY, json: { actions, indexes: ['*'], expiresAt: null } })).body.key as string;
    const exporter = await made(['export']);
    const searcher = await made(['search']);
    expect((await source.request('POST', '/export', { key: searcher, json: { url: 'http://127.0.0.1:9' } })).status).toBe(403);
    // a key scoped to some indexes exports those only, named exactly
    const scoped = (await source.request('POST', '/keys', { key: SOURCE_KEY, json: { actions: ['export'], indexes: ['books'], expiresAt: null } })).body.key as string;
    for (const indexes of [undefined, { 'b*': {} }, { books: {}, movies: {} }]) {
      const refused = await source.request('POST', '/export', { key: scoped, json: { url: 'http://127.0.0.1:9', indexes } });
      expect([refused.status, refused.body.code]).toEqual([403, 'invalid_api_key']);
    }
    const allowed = await source.request('POST', '/export', { key: scoped, json: { url: 'http://127.0.0.1:9', indexes: { books: {} } } });
    expect(allowed.status).toBe(202);
    await source.engine.waitForTask(allowed.body.taskUid as number, { timeoutMs: 30_000 });

    // the details are set at enqueue time; a failed task keeps them
    const res = await source.request('POST', '/export', {
      key: exporter,
      json: { url: 'http://127.0.0.1:9', apiKey: 'a-remote-key-of-34-characters-long!', payloadSize: '24MiB', indexes: { 'b*': { filter: ['title = Dune'] }, movies: { overrideSettings: true } } },
    });
    expect(res.status).toBe(202);
    const enqueued = source.engine.getTask(res.body.taskUid as number);
    expect(enqueued.type).toBe('export');
    expect(enqueued.details).toEqual({
      url: 'http://127.0.0.1:9',
      apiKey: 'a-remXXXXXX...',
      payloadSize: '24 MiB',
      indexes: { 'b*': { filter: ['title = Dune'], overrideSettings: false }, movies: { filter: null, overrideSettings: true } },
    });
    // nothing listens there: the task fails, with the details it was enqueued with
    const done = await source.engine.waitForTask(res.body.taskUid as number, { timeoutMs: 30_000 });
    expect(done.status).toBe('failed');
    expect(done.details).toEqual(enqueued.details);
  });
});
