/**
 * Importing the dumps Meilisearch writes, every dump version (v1: 0.20 ... v6: 1.x), from the
 * small dumps in fixtures/dumps (written from the documented layouts by make-dumps.mjs). Each
 * test imports one and checks, through the Engine API (and HTTP for vectors), what a user moving
 * over relies on: documents, settings as the reference converts them, API keys, and the task
 * history as the reference converts it (uids, types, statuses, details, errors), with enqueued
 * document tasks replayed from their payload.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create as tarCreate } from 'tar';
import { afterAll, describe, expect, test } from 'vitest';
import { AuthEnv } from '../../src/engine/auth/auth-env.js';
import { Engine } from '../../src/engine/engine.js';
import { importDump } from '../../src/engine/ops/dump/import.js';
import { taskFilter } from '../../src/engine/ops/dump/task-payload.js';
import { createServer } from '../../src/http/server.js';
import { locateModel } from '../../src/engine/embedders/model-location.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'dumps');
const root = mkdtempSync(join(tmpdir(), 'dump-versions-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TITLES = ['Carol', 'Wild Tales', 'Taxi Driver', 'The Cat Returns'];

let n = 0;
async function imported(name: string) {
  const db = join(root, `${name}-${n++}`, 'data.ms');
  const logs: string[] = [];
  const result = await importDump(join(FIXTURES, `${name}.dump`), db, { log: (m) => logs.push(m) });
  const engine = await Engine.open({ dbPath: db, logLevel: 'off', autoProcess: false });
  const auth = AuthEnv.open(db);
  return {
    db,
    result,
    logs,
    engine,
    auth,
    titles: (uid: string) => engine.getDocuments(uid, { limit: 100 }).results.map((d) => d.title),
    task: (uid: number) => engine.getTask(uid),
    tasks: () => engine.getTasks({ limit: 100 }).results.sort((a, b) => a.uid - b.uid),
    keys: () => [...auth.keys.getRange()].map((e) => e.value).sort((a, b) => a.createdAt.localeCompare(b.createdAt)),
    async close() {
      await auth.close();
      await engine.close();
    },
  };
}

describe('Meilisearch dumps, every version', () => {
  test('v1 (0.20): attributesForFaceting and old ranking rules converted, per-index updates renumbered', async () => {
    const d = await imported('v1');
    try {
      expect(d.result).toMatchObject({ outcome: 'imported', indexes: 2, documents: 6, tasks: 5 });
      expect(d.engine.listIndexes({}).results).toEqual([
        { uid: 'movies', primaryKey: 'id', createdAt: '2022-10-01T10:00:00.123456789Z', updatedAt: '2022-10-01T10:05:00.123456789Z' },
        { uid: 'products', primaryKey: 'sku', createdAt: '2022-10-01T10:06:00.123456789Z', updatedAt: '2022-10-01T10:08:00.123456789Z' },
      ]);
      expect(d.titles('movies')).toEqual(TITLES);
      expect(d.engine.getSettings('movies')).toMatchObject({
        // wordsPosition no longer exists; desc(field) is field:desc
        rankingRules: ['typo', 'words', 'proximity', 'attribute', 'exactness', 'release_date:desc'],
        filterableAttributes: ['genres'],
        sortableAttributes: ['genres'],
        searchableAttributes: ['title', 'overview'],
        displayedAttributes: ['*'],
        stopWords: ['the'],
        synonyms: { cat: ['kitten'] },
      });
      expect(d.engine.getSettings('products')).toMatchObject({ distinctAttribute: 'brand', displayedAttributes: ['name', 'sku'] });
      // the converted settings work: sorted by the old custom ranking rule, filtered by the old facet
      const hits = (await d.engine.search('movies', { q: '', filter: 'genres = Drama' })).hits.map((h) => h.title);
      expect(hits).toEqual(['Carol', 'Taxi Driver']);
      expect(d.logs.some((l) => /wordsPosition/.test(l))).toBe(true);

      // the `Customs` update and the enqueued one (no payload in v1) are dropped, as the reference does
      const tasks = d.tasks();
      expect(tasks.map((t) => [t.uid, t.indexUid, t.type, t.status])).toEqual([
        [0, 'movies', 'settingsUpdate', 'succeeded'],
        [1, 'movies', 'documentAdditionOrUpdate', 'succeeded'],
        [2, 'movies', 'documentAdditionOrUpdate', 'failed'],
        [3, 'products', 'documentAdditionOrUpdate', 'succeeded'],
        [4, 'products', 'documentDeletion', 'succeeded'],
      ]);
      expect(tasks[0]!.details).toMatchObject({ rankingRules: ['typo', 'words', 'release_date:desc'], displayedAttributes: null, filterableAttributes: ['genres'] });
      expect(tasks[1]).toMatchObject({ details: { indexedDocuments: 4 }, duration: 'PT1.25S', finishedAt: '2022-10-01T10:02:00.123456789Z' });
      expect(tasks[2]!.error).toEqual({
        message: 'document id is missing',
        code: 'missing_document_id',
        type: 'invalid_request',
        link: 'https://docs.meilisearch.com/errors#missing_document_id',
      });
      expect(tasks[4]!.details).toEqual({ providedIds: 0, deletedDocuments: 1 });
      expect(d.keys()).toEqual([]);
      // new tasks continue the sequence
      expect((await d.engine.createIndex('after')).taskUid).toBe(5);
    } finally {
      await d.close();
    }
  });

  test('v2 (0.21-0.24): asc(field) rules, index dates from the updates, the enqueued addition replayed from its JSON array', async () => {
    const d = await imported('v2');
    try {
      expect(d.result).toMatchObject({ indexes: 2, documents: 4, tasks: 4 });
      const [movies, empty] = d.engine.listIndexes({}).results;
      expect(movies).toEqual({ uid: 'movies', primaryKey: 'id', createdAt: '2022-10-01T10:00:02.123456789Z', updatedAt: '2022-10-01T10:04:02.123456789Z' });
      expect(empty).toMatchObject({ uid: 'movies_2', primaryKey: null });
      expect(d.engine.getSettings('movies')).toMatchObject({
        rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'release_date:asc', 'exactness'],
        filterableAttributes: ['genres'],
        sortableAttributes: ['release_date'],
      });
      const tasks = d.tasks();
      expect(tasks.map((t) => [t.uid, t.type, t.status])).toEqual([
        [0, 'settingsUpdate', 'succeeded'],
        [1, 'documentAdditionOrUpdate', 'succeeded'],
        [2, 'documentDeletion', 'failed'],
        [3, 'documentAdditionOrUpdate', 'enqueued'],
      ]);
      expect(tasks[0]!.details).toEqual({ filterableAttributes: ['genres'], rankingRules: ['words', 'typo', 'release_date:asc'] });
      expect(tasks[2]).toMatchObject({ details: { providedIds: 1, deletedDocuments: 0 }, error: { code: 'document_not_found', message: 'Document `99` not found.' } });
      d.engine.scheduler.start();
      expect((await d.engine.waitForTask(3)).status).toBe('succeeded');
      expect(d.engine.getDocument('movies', '5')).toEqual({ id: 5, title: 'Added Later', genres: ['Drama'] });
    } finally {
      await d.close();
    }
  });

  test('v3 (0.25): aborted and failed updates, error codes renamed, the enqueued addition replayed', async () => {
    const d = await imported('v3');
    try {
      expect(d.titles('movies')).toEqual(TITLES);
      expect(d.engine.getSettings('movies')).toMatchObject({
        displayedAttributes: ['title', 'overview', 'genres'],
        rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'release_date:desc'],
        stopWords: ['a'],
        synonyms: { film: ['movie'] },
      });
      const tasks = d.tasks();
      expect(tasks.map((t) => [t.uid, t.type, t.status, t.error?.code ?? null])).toEqual([
        [0, 'documentAdditionOrUpdate', 'succeeded', null],
        [1, 'settingsUpdate', 'succeeded', null],
        [2, 'documentDeletion', 'failed', 'internal'],
        [3, 'documentDeletion', 'failed', 'unretrievable_error_code'],
        [4, 'documentAdditionOrUpdate', 'enqueued', null],
      ]);
      expect(tasks[3]!.error!.message).toBe('Task was aborted in a previous version of meilisearch.');
      d.engine.scheduler.start();
      expect((await d.engine.waitForTask(4)).status).toBe('succeeded');
      // an update (not a replacement): the new document is added, the others stay
      expect(d.engine.indexStats('movies').numberOfDocuments).toBe(5);
    } finally {
      await d.close();
    }
  });

  test('v4 (0.26-0.27): keys get new uids and lose dumps.get, typo tolerance, newest-first queue, instance uid', async () => {
    const d = await imported('v4');
    try {
      expect(d.engine.instanceUid).toBe('9e15e977-f2ae-4761-943f-1eaf75fd736d');
      expect(d.engine.getSettings('movies').typoTolerance).toEqual({
        enabled: true,
        minWordSizeForTypos: { oneTypo: 4, twoTypos: 8 },
        disableOnWords: ['carol'],
        disableOnAttributes: ['overview'],
        disableOnNumbers: false,
      });
      expect(d.engine.getIndex('movies')).toMatchObject({ createdAt: '2022-10-01T10:00:00.123456789Z', updatedAt: '2022-10-01T10:02:02.123456789Z' });
      const keys = d.keys();
      expect(keys).toHaveLength(2);
      expect(keys[0]).toMatchObject({ name: null, description: 'Default Search API Key (Use it to search from the frontend)', actions: ['search'], indexes: ['*'] });
      expect(keys[1]).toMatchObject({ actions: ['dumps.create', 'documents.add'], indexes: ['movies'], expiresAt: '2031-01-01T00:00:00Z' });
      for (const key of keys) expect(key.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const tasks = d.tasks();
      expect(tasks.map((t) => [t.uid, t.type, t.status])).toEqual([
        [0, 'documentAdditionOrUpdate', 'succeeded'],
        [1, 'settingsUpdate', 'succeeded'],
        [2, 'settingsUpdate', 'failed'],
        [3, 'documentAdditionOrUpdate', 'enqueued'],
      ]);
      expect(tasks[0]).toMatchObject({ details: { receivedDocuments: 4, indexedDocuments: 4 }, startedAt: '2022-10-01T10:00:02.123456789Z', duration: 'PT1S' });
      expect(tasks[2]!.error).toMatchObject({ code: 'invalid_settings_ranking_rules', message: '`nope` ranking rule is invalid.' });
      // the queue was listed newest first: new tasks still come after the highest uid
      expect((await d.engine.createIndex('after')).taskUid).toBe(4);
    } finally {
      await d.close();
    }
  });

  test('v5 (0.28-0.29): keys kept, faceting and pagination, the processing dump task enqueued again', async () => {
    const d = await imported('v5');
    try {
      expect(d.engine.instanceUid).toBe('9e15e977-f2ae-4761-943f-1eaf75fd7360');
      expect(d.engine.getSettings('movies')).toMatchObject({
        faceting: { maxValuesPerFacet: 50 },
        pagination: { maxTotalHits: 500 },
        typoTolerance: { enabled: false },
        filterableAttributes: ['genres', 'release_date'],
      });
      expect(d.titles('books')).toEqual(['Crime and Punishment', 'Pride and Prejudice']);
      expect(d.engine.getIndex('books')).toMatchObject({ primaryKey: 'isbn', createdAt: '2022-10-01T10:08:00.123456789Z' });
      expect(d.keys().map((k) => [k.uid, k.name, k.actions])).toEqual([
        ['8ad6cf4b-7a3c-4e0b-8d33-6f1f8c4a0e01', 'Default Search API Key', ['search']],
        ['8ad6cf4b-7a3c-4e0b-8d33-6f1f8c4a0e02', 'movies writer', ['documents.*', 'indexes.create', 'metrics.get']],
      ]);
      const tasks = d.tasks();
      expect(tasks.map((t) => [t.uid, t.indexUid, t.type, t.status])).toEqual([
        [0, 'movies', 'documentAdditionOrUpdate', 'succeeded'],
        [1, 'movies', 'settingsUpdate', 'succeeded'],
        [2, 'movies', 'documentAdditionOrUpdate', 'enqueued'],
        [3, 'movies', 'documentDeletion', 'failed'],
        [4, 'books', 'indexCreation', 'succeeded'],
        [5, null, 'dumpCreation', 'enqueued'],
      ]);
      expect(tasks[1]!.details).toEqual({ faceting: { maxValuesPerFacet: 50 }, pagination: { maxTotalHits: 500 } });
      expect(tasks[3]).toMatchObject({ details: { deletedDocuments: 0 }, error: { code: 'internal', type: 'internal' } });
      expect(tasks[4]!.details).toEqual({ primaryKey: 'isbn' });
      expect(tasks[5]).toMatchObject({ startedAt: null, details: { dumpUid: '20221004-155510344' } });
    } finally {
      await d.close();
    }
  });

  test('v6 (1.x): settings of a newer Meilisearch left out with a warning, export tasks, batches and cancelations kept', async () => {
    const d = await imported('v6');
    try {
      expect(d.engine.instanceUid).toBe('2b5fb6c6-6a8e-4f3a-9d0c-5a4e3c2b1a00');
      expect(d.titles('movies')).toEqual(TITLES);
      const settings = d.engine.getSettings('movies');
      expect(settings).toMatchObject({
        filterableAttributes: ['genres', { attributePatterns: ['release_*'], features: { facetSearch: false, filter: { equality: true, comparison: true } } }],
        faceting: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha', genres: 'count' } },
        searchCutoffMs: 150,
        synonyms: { scifi: ['science fiction'] },
      });
      expect(settings).not.toHaveProperty('chat');
      expect(d.logs).toEqual(expect.arrayContaining(['index `movies`: the setting `chat` is not supported by this engine and is left out']));
      const tasks = d.tasks();
      expect(tasks.map((t) => [t.uid, t.type, t.status])).toEqual([
        [0, 'settingsUpdate', 'succeeded'],
        [1, 'documentAdditionOrUpdate', 'succeeded'],
        [2, 'taskCancelation', 'succeeded'],
        [3, 'documentDeletion', 'failed'],
        [4, 'export', 'succeeded'],
        [5, 'documentAdditionOrUpdate', 'enqueued'],
      ]);
      expect(tasks[4]!.details).toEqual({ url: 'http://127.0.0.1:7701', indexes: {} });
      // Meilisearch's lines carry no duration: it is computed
      expect(tasks[0]).toMatchObject({ batchUid: 0, duration: 'PT0.75S', details: { sortableAttributes: ['release_date'] } });
      expect(tasks[2]!.details).toEqual({ matchedTasks: 0, canceledTasks: 0, originalFilter: '?statuses=enqueued,processing' });
      expect(tasks[3]!.error!.code).toBe('invalid_document_filter');
      expect(d.engine.getBatches({ limit: 10 }).results).toEqual([
        expect.objectContaining({ uid: 0, duration: 'PT0.75S', batchStrategy: 'batched all enqueued tasks', stats: expect.objectContaining({ totalNbTasks: 1, types: { settingsUpdate: 1 } }) }),
      ]);
      expect(d.keys().map((k) => k.name).sort()).toEqual(['Default Search API Key', 'movies admin']);
      d.engine.scheduler.start();
      expect((await d.engine.waitForTask(5)).status).toBe('succeeded');
      expect(d.engine.getDocument('movies', '5')).toMatchObject({ title: 'Added Later' });
      expect((await d.engine.createIndex('after')).taskUid).toBe(6);
    } finally {
      await d.close();
    }
  });

  test('v6 with embeddings and a huggingFace model not on disk: vectors and regenerate flags imported, no embedder called; served over HTTP', async () => {
    // the model named in the dump is not on this machine (it would have to be downloaded)
    expect(locateModel('BAAI/bge-small-en-v1.5', { env: { HF_HUB_CACHE: join(root, 'no-hub-cache') } }).kind).toBe('download');
    const d = await imported('v6-vectors');
    await d.close();
    expect(d.logs).toContain('index `vectors`: 1 document(s) carry no vectors for embedder `default`; they are embedded at their next update');
    const engine = await Engine.open({ dbPath: d.db, logLevel: 'off' });
    const server = createServer(engine);
    const { url } = await server.listen('127.0.0.1:0');
    const call = async (path: string, body?: unknown) => {
      const response = await fetch(url + path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as any };
    };
    try {
      const settings = await call('/indexes/vectors/settings');
      expect(settings.body.embedders).toEqual({
        // 1.13 wrote no pooling: the reference reads that as forceMean
        default: { source: 'huggingFace', model: 'BAAI/bge-small-en-v1.5', revision: '5c38ec7c405ec4b44b94cc5a9bb96e735b38267a', documentTemplate: '{{doc.title}}', documentTemplateMaxBytes: 400, pooling: 'forceMean' },
        own: { source: 'userProvided', dimensions: 3 },
      });
      const docs = await call('/indexes/vectors/documents?retrieveVectors=true&limit=10');
      expect(docs.status).toBe(200);
      const byId = new Map((docs.body.results as any[]).map((doc) => [doc.id, doc._vectors]));
      expect(byId.get(2).default.regenerate).toBe(true);
      expect(byId.get(2).default.embeddings[0].map((x: number) => Math.round(x * 10) / 10)).toEqual([0.2, 0.2, -0.6, 0.4]);
      expect(byId.get(2).own).toEqual({ embeddings: [[1, 2, -2]], regenerate: false });
      expect(byId.get(4).default).toEqual({ embeddings: [[0.9, 0.9, 0.9, 0.9]], regenerate: false });
      expect(byId.get(5).default).toEqual({ embeddings: [], regenerate: true });
      const stats = await call('/indexes/vectors/stats');
      expect(stats.body).toMatchObject({ numberOfDocuments: 5, numberOfEmbeddedDocuments: 8 });
      // semantic search with the imported vectors (a query vector: no model needed)
      const near = await call('/indexes/vectors/search', { vector: [0.9, 0.9, 0.9, 0.9], hybrid: { embedder: 'default', semanticRatio: 1 }, limit: 2 });
      expect(near.status).toBe(200);
      // cosine: film 4 is the query itself, film 1 the next closest (film 3 is orthogonal to it)
      expect(near.body.hits.map((h: any) => h.id)).toEqual([4, 1]);
      const own = await call('/indexes/vectors/search', { vector: [1, 3, -3], hybrid: { embedder: 'own', semanticRatio: 1 }, limit: 1 });
      expect(own.body.hits.map((h: any) => h.id)).toEqual([3]);
    } finally {
      await server.close();
      await engine.close();
    }
  });
});

describe('refused dumps leave nothing behind', () => {
  async function pack(name: string, files: Record<string, unknown>): Promise<string> {
    const dir = join(root, `${name}-src`);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content));
    }
    const file = join(root, `${name}.dump`);
    await tarCreate({ gzip: true, file, cwd: dir }, readdirSync(dir));
    return file;
  }

  test('a v3 index with a settings field that version never had fails with a clear error, as in the reference', async () => {
    const uuid = 'f1b2c3d4-0000-4000-8000-000000000001';
    const file = await pack('bad-v3', {
      'metadata.json': { dbVersion: '0.25.2', indexDbSize: 1, updateDbSize: 1, dumpDate: '2022-10-01T10:00:00Z', dumpVersion: 'V3' },
      'index_uuids/data.jsonl': JSON.stringify({ uid: 'movies', uuid }) + '\n',
      [`indexes/${uuid}/meta.json`]: { settings: { rankingRulez: ['words'] }, primary_key: 'id' },
      [`indexes/${uuid}/documents.jsonl`]: JSON.stringify({ id: 1 }) + '\n',
      'updates/data.jsonl': '',
    });
    const parent = join(root, 'bad-v3-target');
    await expect(importDump(file, join(parent, 'data.ms'))).rejects.toMatchObject({
      code: 'invalid_dump',
      message: expect.stringMatching(/meta\.json`: unknown settings field `rankingRulez` for a dump v3/),
    });
    expect(readdirSync(parent)).toEqual([]);
  });

  test('a document the engine refuses fails the import with its index and reason, and leaves nothing', async () => {
    const file = await pack('bad-doc', {
      'metadata.json': { dumpVersion: 'V6', dbVersion: '1.10.0', dumpDate: '2024-10-01T00:00:00Z' },
      'keys.jsonl': '',
      'tasks/queue.jsonl': '',
      'indexes/movies/metadata.json': { uid: 'movies', primaryKey: 'id', createdAt: '2024-10-01T00:00:00Z', updatedAt: '2024-10-01T00:00:00Z' },
      'indexes/movies/settings.json': {},
      'indexes/movies/documents.jsonl': JSON.stringify({ id: 1 }) + '\n' + JSON.stringify({ id: 'not a valid id!' }) + '\n',
    });
    const parent = join(root, 'bad-doc-target');
    await expect(importDump(file, join(parent, 'data.ms'))).rejects.toMatchObject({
      code: 'invalid_dump',
      message: expect.stringMatching(/cannot be imported: index `movies`: .*not a valid id!.*\(`invalid_document_id`\)/),
    });
    expect(readdirSync(parent)).toEqual([]);
  });

  test('an unknown dump version is refused', async () => {
    const file = await pack('v7', { 'metadata.json': { dumpVersion: 'V7', dbVersion: '9.0.0', dumpDate: '2030-01-01T00:00:00Z' } });
    await expect(importDump(file, join(root, 'v7-target', 'data.ms'))).rejects.toThrow(/dump version `V7` is not supported \(expected one of V1, V2, V3, V4, V5, V6\)/);
    expect(existsSync(join(root, 'v7-target', 'data.ms'))).toBe(false);
  });
});

test('the filter of a dumped cancelation or deletion task is read from the query string Meilisearch stores', () => {
  expect(taskFilter('?statuses=enqueued,processing&indexUids=movies&uids=1,2&afterEnqueuedAt=2025-01-01')).toEqual({
    statuses: ['enqueued', 'processing'],
    indexUids: ['movies'],
    uids: [1, 2],
    afterEnqueuedAt: '2025-01-01T00:00:00.000Z',
  });
  expect(taskFilter({ types: ['indexCreation'] })).toEqual({ types: ['indexCreation'] });
  expect(taskFilter('?nothing=1')).toEqual({ uids: [] });
});

describe('dumps as real files vary', () => {
  /** Packed as Meilisearch packs its dumps (`append_dir_all(".")`: `./metadata.json`, ...), or under a top-level folder. */
  async function pack(name: string, files: Record<string, unknown>, topFolder?: string): Promise<string> {
    const dir = join(root, `${name}-src`);
    const base = topFolder ? join(dir, topFolder) : dir;
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(base, path)), { recursive: true });
      writeFileSync(join(base, path), typeof content === 'string' ? content : JSON.stringify(content));
    }
    const file = join(root, `${name}.dump`);
    await tarCreate({ gzip: true, file, cwd: dir }, topFolder ? [topFolder] : ['.']);
    return file;
  }
  const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const at = (s: number) => `2022-10-06T12:53:${String(s).padStart(2, '0')}.131989609Z`;

  function v4Files() {
    const uuid = '0f8e0c1a-0000-4000-8000-000000000001';
    return {
      'metadata.json': { dbVersion: '0.25.2', indexDbSize: 107374182400, updateDbSize: 107374182400, dumpDate: at(49), dumpVersion: 'V4' },
      'instance-uid': '9e15e977-f2ae-4761-943f-1eaf75fd736d',
      keys: '',
      'index_uuids/data.jsonl': jsonl([{ uid: 'movies', index_meta: { uuid, creation_task_id: 0 } }]),
      [`indexes/${uuid}/meta.json`]: { settings: { displayedAttributes: ['*'], searchableAttributes: ['*'], filterableAttributes: [], sortableAttributes: [], rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'], stopWords: [], synonyms: {}, distinctAttribute: null, typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 }, disableOnWords: [], disableOnAttributes: [] } }, primary_key: 'id' },
      [`indexes/${uuid}/documents.jsonl`]: jsonl([{ id: 7, title: 'Kept' }]),
      // newest first; a clear is the unit variant `"Clear"` in v4
      'updates/data.jsonl': jsonl([
        { id: 2, index_uid: 'movies', content: { DocumentAddition: { content_uuid: 'c0ffee00-0000-4000-8000-0000000000aa', merge_strategy: 'ReplaceDocuments', primary_key: null, documents_count: 1, allow_index_creation: true } }, events: [{ Created: at(40) }, { Batched: { timestamp: at(41), batch_id: 2 } }, { Processing: at(41) }, { Succeded: { result: { DocumentAddition: { indexed_documents: 1 } }, timestamp: at(42) } }] },
        { id: 1, index_uid: 'movies', content: { DocumentDeletion: 'Clear' }, events: [{ Created: at(30) }, { Processing: at(31) }, { Succeded: { result: { ClearAll: { deleted_documents: 3 } }, timestamp: at(32) } }] },
        { id: 0, index_uid: 'movies', content: { IndexCreation: { primary_key: 'id' } }, events: [{ Created: at(20) }, { Processing: at(21) }, { Succeded: { result: 'Other', timestamp: at(22) } }] },
      ]),
    };
  }

  test('a v4 dump packed as Meilisearch packs it, with a document clear (the unit variant), imports', async () => {
    const file = await pack('real-v4', v4Files());
    const db = join(root, 'real-v4-target', 'data.ms');
    expect(await importDump(file, db)).toMatchObject({ outcome: 'imported', indexes: 1, documents: 1, tasks: 3 });
    const engine = await Engine.open({ dbPath: db, logLevel: 'off', autoProcess: false });
    try {
      const clear = engine.getTask(1);
      expect(clear).toMatchObject({ type: 'documentDeletion', status: 'succeeded', details: { deletedDocuments: 3 }, duration: 'PT1S' });
      expect(engine.getTask(0)).toMatchObject({ type: 'indexCreation', details: { primaryKey: 'id' } });
      expect(engine.listIndexes({}).results[0]).toMatchObject({ uid: 'movies', createdAt: at(20), updatedAt: at(42) });
      expect(engine.getSettings('movies').typoTolerance).toMatchObject({ minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 } });
    } finally {
      await engine.close();
    }
  });

  test('a dump packed again under a top-level folder imports the same', async () => {
    const file = await pack('real-v4-folder', v4Files(), '20221006-125349131');
    const db = join(root, 'real-v4-folder-target', 'data.ms');
    expect(await importDump(file, db)).toMatchObject({ outcome: 'imported', indexes: 1, documents: 1, tasks: 3 });
  });

  test('a v6 dump with integers past 2^53 imports, and the log names each rounded value', async () => {
    const file = await pack('real-v6-bignum', {
      'metadata.json': { dumpVersion: 'V6', dbVersion: '1.12.3', dumpDate: '2024-12-01T10:00:00.123456789Z' },
      'instance_uid.uuid': '9e15e977-f2ae-4761-943f-1eaf75fd736d',
      'keys.jsonl': '',
      'tasks/queue.jsonl': '',
      'indexes/stats/metadata.json': { uid: 'stats', primaryKey: 'id', createdAt: '2024-12-01T09:00:00.1Z', updatedAt: '2024-12-01T09:30:00.2Z' },
      'indexes/stats/settings.json': { displayedAttributes: ['*'], searchableAttributes: ['*'], filterableAttributes: [], sortableAttributes: [], rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'], stopWords: [], nonSeparatorTokens: [], separatorTokens: [], dictionary: [], synonyms: {}, distinctAttribute: null, proximityPrecision: 'byWord', typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 }, disableOnWords: [], disableOnAttributes: [] }, faceting: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha' } }, pagination: { maxTotalHits: 1000 }, embedders: {}, searchCutoffMs: null, localizedAttributes: null, facetSearch: true, prefixSearch: 'indexingTime' },
      'indexes/stats/documents.jsonl': '{"id":1,"views":12345678901234567890,"label":"12345678901234567890 in a string"}\n{"id":2,"views":42}\n',
    });
    const logs: string[] = [];
    const db = join(root, 'real-v6-bignum-target', 'data.ms');
    expect(await importDump(file, db, { log: (m) => logs.push(m) })).toMatchObject({ outcome: 'imported', documents: 2 });
    const warnings = logs.filter((l) => /beyond 2\^53/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/documents\.jsonl`, line 1: the integer 12345678901234567890 /);
  });

  test('a v1 index without its `updates.jsonl` imports with no history, and says so', async () => {
    const file = await pack('real-v1', {
      'metadata.json': { indexes: [{ name: 'movies', uid: 'movies', createdAt: '2022-10-02T13:15:29.477512777Z', updatedAt: '2022-10-02T13:21:12.671204856Z', primaryKey: 'id' }], dbVersion: '0.20.0', dumpVersion: 'V1' },
      'movies/settings.json': { rankingRules: ['typo', 'words', 'proximity', 'attribute', 'wordsPosition', 'exactness', 'asc(release_date)'], distinctAttribute: null, searchableAttributes: ['*'], displayedAttributes: ['*'], stopWords: [], synonyms: {}, attributesForFaceting: ['id', 'genres'] },
      'movies/documents.jsonl': jsonl([{ id: 1, title: 'Carol', genres: ['Drama'], release_date: 1 }, { id: 2, title: 'Heat', genres: ['Crime'], _geo: { lat: 1.5, lng: 2.25 } }]),
    });
    const logs: string[] = [];
    const db = join(root, 'real-v1-target', 'data.ms');
    expect(await importDump(file, db, { log: (m) => logs.push(m) })).toMatchObject({ outcome: 'imported', indexes: 1, documents: 2, tasks: 0 });
    expect(logs.some((l) => /movies\/updates\.jsonl` is missing/.test(l))).toBe(true);
    const engine = await Engine.open({ dbPath: db, logLevel: 'off', autoProcess: false });
    try {
      expect(engine.getSettings('movies')).toMatchObject({ rankingRules: ['typo', 'words', 'proximity', 'attribute', 'exactness', 'release_date:asc'], filterableAttributes: ['id', 'genres'] });
      expect(engine.getDocument('movies', '2')).toMatchObject({ _geo: { lat: 1.5, lng: 2.25 } });
    } finally {
      await engine.close();
    }
  });
});
