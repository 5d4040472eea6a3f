import { afterEach, describe, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { tempEngine } from './helpers.js';
import { movies as moviesData, worldCities } from '../data.js';

const movies: Array<Record<string, unknown>> = moviesData();

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

describe('engine: indexes, documents and tasks', () => {
  test('documents added to a new index are stored, counted and retrievable', async () => {
    const t = await tempEngine();
    cleanup = t.cleanup;
    const { engine } = t;
    const task = await engine.addDocuments('movies', movies.slice(0, 1000));
    expect(task).toMatchObject({ indexUid: 'movies', status: 'enqueued', type: 'documentAdditionOrUpdate' });
    const done = await engine.waitForTask(task.taskUid);
    expect(done.status).toBe('succeeded');
    expect(done.details).toEqual({ receivedDocuments: 1000, indexedDocuments: 1000 });
    expect(engine.getIndex('movies').primaryKey).toBe('id');
    expect(engine.indexStats('movies').numberOfDocuments).toBe(1000);
    const first = movies[0]!;
    expect(engine.getDocument('movies', String(first.id))).toEqual(first);
    const page = engine.getDocuments('movies', { offset: 10, limit: 5, fields: ['title'] });
    expect(page.total).toBe(1000);
    expect(page.results).toHaveLength(5);
    expect(Object.keys(page.results[0]!)).toEqual(['title']);
  });

  test('update merges top-level fields, replace overwrites, deletions remove', async () => {
    const t = await tempEngine();
    cleanup = t.cleanup;
    const { engine } = t;
    await engine.waitForTask((await engine.addDocuments('books', [{ id: 1, title: 'A', author: 'X' }, { id: 2, title: 'B' }])).taskUid);
    await engine.waitForTask((await engine.addDocuments('books', [{ id: 1, year: 2000 }], { method: 'update' })).taskUid);
    expect(engine.getDocument('books', '1')).toEqual({ id: 1, title: 'A', author: 'X', year: 2000 });
    await engine.waitForTask((await engine.addDocuments('books', [{ id: 1, title: 'C' }])).taskUid);
    expect(engine.getDocument('books', '1')).toEqual({ id: 1, title: 'C' });
    const del = await engine.waitForTask((await engine.deleteDocuments('books', ['1', 'missing'])).taskUid);
    expect(del.details).toEqual({ providedIds: 2, deletedDocuments: 1 });
    expect(() => engine.getDocument('books', '1')).toThrow(/not found/);
    expect(engine.indexStats('books').fieldDistribution).toEqual({ id: 1, title: 1 });
  });

  test('a task with an invalid id fails alone; its batch neighbours succeed', async () => {
    const t = await tempEngine({ autoProcess: false });
    cleanup = t.cleanup;
    const { engine } = t;
    const good = await engine.addDocuments('x', [{ id: 'a' }]);
    const bad = await engine.addDocuments('x', [{ id: 'b c' }]);
    const good2 = await engine.addDocuments('x', [{ id: 'd' }]);
    engine.scheduler.start();
    expect((await engine.waitForTask(good2.taskUid)).status).toBe('succeeded');
    const failed = await engine.waitForTask(bad.taskUid);
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('invalid_document_id');
    expect(engine.getTask(good.taskUid).batchUid).toBe(engine.getTask(good2.taskUid).batchUid);
    expect(engine.indexStats('x').numberOfDocuments).toBe(2);
  });

  test('consecutive payloads are batched within the indexing memory budget', async () => {
    const payload = (from: number) => Array.from({ length: 2000 }, (_, i) => ({ id: from + i, text: 'x'.repeat(250) })); // ~0.55 MB each
    const run = async (maxIndexingMemory: number) => {
      const t = await tempEngine({ autoProcess: false, maxIndexingMemory });
      try {
        const tasks = [];
        for (let p = 0; p < 4; p++) tasks.push(await t.engine.addDocuments('x', payload(p * 2000)));
        t.engine.scheduler.start();
        for (const task of tasks) expect((await t.engine.waitForTask(task.taskUid)).status).toBe('succeeded');
        expect(t.engine.indexStats('x').numberOfDocuments).toBe(8000);
        return new Set(tasks.map((task) => t.engine.getTask(task.taskUid).batchUid)).size;
      } finally {
        await t.cleanup();
      }
    };
    // 16 MiB of indexing memory gathers 1 MiB of payload: one ~0.55 MB payload per batch.
    expect(await run(16 * 1024 * 1024)).toBe(4);
    // 64 MiB gathers 4 MiB: the four payloads in one batch.
    expect(await run(64 * 1024 * 1024)).toBe(1);
  });

  test('searches are answered while a large batch is being extracted, and see the state before it', async () => {
    // The batch's steps are logged at debug level: "batch <uid>: extracting", then "...: writing".
    let step = '';
    const t = await tempEngine({ logLevel: 'debug', logger: (_level, message) => (step = /^batch \d+: (\w+)/.exec(message)?.[1] ?? step) });
    cleanup = t.cleanup;
    const { engine } = t;
    await engine.waitForTask((await engine.addDocuments('movies', movies.slice(0, 500))).taskUid);
    const before = (await engine.search('movies', { q: 'love', limit: 0 })).estimatedTotalHits;
    // The rest of the fixture: 7,443 films, 4,000 of them recent ones with long extracts. Their
    // extraction lasts seconds, thousands of event-loop turns (over 10,000 searches got in on a
    // 2-core machine); the point does not need the 20,000 films of the full data set.
    const big = await engine.addDocuments('movies', movies.slice(500));
    let duringExtraction = 0;
    // Back-to-back searches, one per event-loop turn, until the batch is done.
    for (;;) {
      const status = engine.getTask(big.taskUid).status;
      if (status === 'succeeded' || status === 'failed') break;
      const r = await engine.search('movies', { q: 'love', limit: 0 });
      if (engine.getTask(big.taskUid).status === 'processing' && step === 'extracting') {
        duringExtraction++;
        // Nothing of the batch is visible before it commits.
        expect(r.estimatedTotalHits).toBe(before);
      }
      await new Promise((r) => setImmediate(r));
    }
    expect(engine.getTask(big.taskUid).status).toBe('succeeded');
    // Keyword extraction runs before the write transaction and yields to the event loop every
    // few milliseconds: searches get in while 7,443 documents are extracted (with extraction
    // inside the transaction, this step passed within one turn and none did).
    expect(duringExtraction).toBeGreaterThan(10);
    expect((await engine.search('movies', { q: 'love', limit: 0 })).estimatedTotalHits).toBeGreaterThan(before!);
  });

  test('tasks survive a restart and are processed after it', async () => {
    const t = await tempEngine({ autoProcess: false });
    const { engine, dbPath } = t;
    const task = await engine.addDocuments('m', movies.slice(0, 200));
    await engine.close();
    const reopened = await Engine.open({ dbPath, logLevel: 'off' });
    cleanup = async () => {
      await reopened.close();
      await t.cleanup();
    };
    expect((await reopened.waitForTask(task.taskUid)).status).toBe('succeeded');
    expect(reopened.indexStats('m').numberOfDocuments).toBe(200);
  });

  test('cancel and delete tasks, filters and pagination', async () => {
    const t = await tempEngine({ autoProcess: false });
    cleanup = t.cleanup;
    const { engine } = t;
    const a = await engine.addDocuments('a', [{ id: 1 }]);
    const b = await engine.addDocuments('b', [{ id: 1 }]);
    const cancel = await engine.cancelTasks({ indexUids: ['b'] });
    engine.scheduler.start();
    const canceled = await engine.waitForTask(cancel.taskUid);
    expect(canceled.details).toMatchObject({ matchedTasks: 1, canceledTasks: 1, originalFilter: '?indexUids=b' });
    expect(engine.getTask(b.taskUid)).toMatchObject({ status: 'canceled', canceledBy: cancel.taskUid });
    await engine.waitForTask(a.taskUid);
    const list = engine.getTasks({ limit: 2 });
    expect(list.results.map((r) => r.uid)).toEqual([2, 1]);
    expect(list.next).toBe(0);
    expect(engine.getTasks({ statuses: ['canceled'] }).results.map((r) => r.uid)).toEqual([b.taskUid]);
    await expect(engine.deleteTasks({})).rejects.toMatchObject({ code: 'missing_task_filters' });
    const del = await engine.waitForTask((await engine.deleteTasks({ uids: [a.taskUid] })).taskUid);
    expect(del.details).toMatchObject({ matchedTasks: 1, deletedTasks: 1 });
    expect(() => engine.getTask(a.taskUid)).toThrow(/not found/);
  });

  test('index lifecycle: create, conflict, update primary key, swap, delete', async () => {
    const t = await tempEngine();
    cleanup = t.cleanup;
    const { engine } = t;
    await engine.waitForTask((await engine.createIndex('one', { primaryKey: 'sku' })).taskUid);
    const dup = await engine.waitForTask((await engine.createIndex('one')).taskUid);
    expect(dup.error?.code).toBe('index_already_exists');
    await engine.waitForTask((await engine.addDocuments('two', [{ id: 7 }])).taskUid);
    await engine.waitForTask((await engine.swapIndexes([{ indexes: ['one', 'two'] }])).taskUid);
    expect(engine.getIndex('one').primaryKey).toBe('id');
    expect(engine.getIndex('two').primaryKey).toBe('sku');
    expect(engine.listIndexes().results.map((i) => i.uid)).toEqual(['one', 'two']);
    const deleted = await engine.waitForTask((await engine.deleteIndex('one')).taskUid);
    expect(deleted.details).toEqual({ deletedDocuments: 1 });
    expect(() => engine.getIndex('one')).toThrow(/not found/);
  });
});

describe('engine: settings validation for in-process callers', () => {
  test('bad settings are refused before anything is enqueued', async () => {
    const t = await tempEngine();
    cleanup = t.cleanup;
    const { engine } = t;
    await expect(engine.updateSettings('a', { stopWords: 5 })).rejects.toMatchObject({ code: 'invalid_settings_stop_words', status: 400 });
    await expect(engine.updateSettings('a', { nope: 1 })).rejects.toMatchObject({ code: 'bad_request' });
    await expect(engine.updateSettings('a', 'hello')).rejects.toMatchObject({ status: 400 });
    await expect(engine.cancelTasks({})).rejects.toThrow(/tasks to cancel are missing/);
    expect(engine.getTasks().total).toBe(0);
  });
});

describe('engine: composed modules', () => {
  test('keyword search, filters and facets work on documents added through the engine', async () => {
    const t = await tempEngine();
    cleanup = t.cleanup;
    const { engine } = t;
    await engine.waitForTask((await engine.updateSettings('movies', { filterableAttributes: ['genres', 'year'] })).taskUid);
    const added = await engine.waitForTask((await engine.addDocuments('movies', movies.slice(0, 3000))).taskUid);
    expect(added.status).toBe('succeeded');
    const result = (await engine.search('movies', { q: 'godfather', filter: 'year > 1900', facets: ['genres'] })) as {
      hits: Array<Record<string, unknown>>;
      facetDistribution?: Record<string, Record<string, number>>;
    };
    const expected = movies.slice(0, 3000).filter((m) => /godfather/i.test(String(m.title)) && Number(m.year) > 1900);
    expect(expected.map((m) => m.title)).toEqual(['The Three Godfathers']);
    expect(result.hits[0]?.title).toBe('The Three Godfathers');
    expect(result.facetDistribution?.genres).toBeDefined();
    const filtered = engine.getDocuments('movies', { filter: 'year = 1950', limit: 1000 });
    expect(filtered.total).toBe(movies.slice(0, 3000).filter((m) => m.year === 1950).length);
  });
});

describe('engine: multi-search', () => {
  test('several queries answer per index; federation merges them into one list', async () => {
    const t = await tempEngine();
    cleanup = t.cleanup;
    const { engine } = t;
    await engine.waitForTask((await engine.addDocuments('old', movies.slice(0, 2000))).taskUid);
    await engine.waitForTask((await engine.addDocuments('new', movies.slice(-2000))).taskUid);
    const separate = (await engine.multiSearch({
      queries: [
        { indexUid: 'old', q: 'godfathers', limit: 3 },
        { indexUid: 'new', q: 'avengers', limit: 3 },
      ],
    })) as { results: Array<{ indexUid: string; hits: Array<Record<string, unknown>> }> };
    expect(separate.results.map((r) => r.indexUid)).toEqual(['old', 'new']);
    expect(String(separate.results[1]!.hits[0]!.title)).toMatch(/Avengers/);
    const merged = (await engine.multiSearch({
      federation: { limit: 5 },
      queries: [
        { indexUid: 'old', q: 'godfathers' },
        { indexUid: 'new', q: 'avengers' },
      ],
    })) as { hits: Array<Record<string, unknown> & { _federation: { indexUid: string } }> };
    const indexes = new Set(merged.hits.map((h) => h._federation.indexUid));
    expect(merged.hits.length).toBeGreaterThan(0);
    expect(indexes.has('new')).toBe(true);
    await expect(engine.multiSearch({ queries: [{ indexUid: 'missing', q: 'x' }] })).rejects.toMatchObject({ code: 'index_not_found' });
  });
});

describe('engine: geo sort through search', () => {
  test('hits sorted by _geoPoint carry their _geoDistance in meters, nearest first', async () => {
    const cities: Array<Record<string, unknown>> = worldCities();
    const t = await tempEngine();
    cleanup = t.cleanup;
    const { engine } = t;
    await engine.waitForTask((await engine.updateSettings('cities', { sortableAttributes: ['_geo'] })).taskUid);
    const added = await engine.waitForTask((await engine.addDocuments('cities', cities, { primaryKey: 'geonameid' })).taskUid);
    expect(added.status).toBe('succeeded');
    const result = (await engine.search('cities', { sort: ['_geoPoint(48.8566, 2.3522):asc'], limit: 5 })) as {
      hits: Array<{ name: string; _geoDistance: number }>;
    };
    expect(result.hits[0]!.name).toBe('Paris');
    const distances = result.hits.map((h) => h._geoDistance);
    expect(distances.every((d) => Number.isInteger(d))).toBe(true);
    expect([...distances].sort((a, b) => a - b)).toEqual(distances);
    const plain = (await engine.search('cities', { q: 'paris', limit: 1 })) as { hits: Array<Record<string, unknown>> };
    expect(plain.hits[0]).not.toHaveProperty('_geoDistance');
  });
});
