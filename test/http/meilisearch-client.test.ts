/**
 * The held-in flow of issue #2 with the official `meilisearch` npm client, unchanged, against our
 * server: create indexes, add 10k movies (half as a JSON array, half as NDJSON), wait for the
 * tasks, get, browse and delete documents, filter tasks, swap indexes.
 */
import { readFileSync } from 'node:fs';
import { Meilisearch, MeilisearchApiError } from 'meilisearch';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';

interface Movie {
  id: number;
  title: string;
  year: number;
  cast: string[];
  genres: string[];
  href: string | null;
}

const ALL: Movie[] = (JSON.parse(readFileSync('../shared/data/movies.json', 'utf8')) as Movie[]).slice(0, 10_000);
const MOVIES = ALL.slice(0, 5_000);
const MORE = ALL.slice(5_000);

let h: Harness;
let client: Meilisearch;
beforeAll(async () => {
  h = await startHarness();
  // Generous waits: the shared CI machine can be heavily loaded; the client's default is 5 s.
  client = new Meilisearch({ host: h.url, defaultWaitOptions: { timeout: 120_000, interval: 50 } });
});
afterAll(async () => {
  await h.stop();
});

test('the official client drives the whole document and task flow', async () => {
  expect(await client.isHealthy()).toBe(true);
  expect((await client.getVersion()).pkgVersion).toMatch(/^\d+\.\d+\.\d+/);

  const created = await client.createIndex('movies_json', { primaryKey: 'id' }).waitTask();
  expect(created.status).toBe('succeeded');
  await client.createIndex('movies_ndjson').waitTask();

  // 5k documents as a JSON array into one index, the next 5k as NDJSON into the other.
  const jsonIndex = client.index<Movie>('movies_json');
  const ndjsonIndex = client.index<Movie>('movies_ndjson');
  const ndjson = MORE.map((m) => JSON.stringify(m)).join('\n');
  const [jsonTask, ndjsonTask] = await Promise.all([
    jsonIndex.addDocuments(MOVIES).waitTask({ timeout: 280_000 }),
    ndjsonIndex.addDocumentsFromString(ndjson, 'application/x-ndjson', { primaryKey: 'id' }).waitTask({ timeout: 280_000 }),
  ]);
  expect(jsonTask).toMatchObject({ status: 'succeeded', details: { receivedDocuments: 5_000, indexedDocuments: 5_000 } });
  expect(ndjsonTask).toMatchObject({ status: 'succeeded', details: { receivedDocuments: 5_000, indexedDocuments: 5_000 } });
  expect((await jsonIndex.getStats()).numberOfDocuments).toBe(5_000);
  expect((await ndjsonIndex.getStats()).numberOfDocuments).toBe(5_000);
  expect((await ndjsonIndex.fetchPrimaryKey())).toBe('id');

  // get and browse
  expect(await jsonIndex.getDocument(MOVIES[42]!.id)).toEqual(MOVIES[42]);
  expect(await ndjsonIndex.getDocument(MORE[4_999]!.id, { fields: ['title'] })).toEqual({ title: MORE[4_999]!.title });
  const page = await jsonIndex.getDocuments({ offset: 500, limit: 3, fields: ['id', 'year'] });
  expect(page).toMatchObject({ offset: 500, limit: 3, total: 5_000 });
  expect(page.results).toEqual(MOVIES.slice(500, 503).map(({ id, year }) => ({ id, year })));

  // search, through the client's POST and GET search routes
  const hits = await jsonIndex.search(MOVIES[42]!.title, { limit: 5, attributesToRetrieve: ['id', 'title'] });
  expect(hits.hits.map((hit) => hit.title)).toContain(MOVIES[42]!.title);
  const viaGet = await jsonIndex.searchGet(MOVIES[42]!.title, { limit: 5, attributesToRetrieve: ['id', 'title'] });
  expect(viaGet.hits).toEqual(hits.hits);

  // delete one, a batch, then check what is left
  await jsonIndex.deleteDocument(MOVIES[0]!.id).waitTask();
  const batch = await jsonIndex.deleteDocuments(MOVIES.slice(1, 11).map((m) => m.id)).waitTask();
  expect(batch.details).toMatchObject({ deletedDocuments: 10 });
  expect((await jsonIndex.getStats()).numberOfDocuments).toBe(4_989);
  await expect(jsonIndex.getDocument(MOVIES[0]!.id)).rejects.toSatisfy(
    (e: unknown) => e instanceof MeilisearchApiError && e.cause?.code === 'document_not_found',
  );

  // task filters
  const additions = await client.tasks.getTasks({ types: ['documentAdditionOrUpdate'], indexUids: ['movies_json', 'movies_ndjson'] });
  expect(additions.results.map((t) => t.indexUid).sort()).toEqual(['movies_json', 'movies_ndjson']);
  const deletions = await client.tasks.getTasks({ types: ['documentDeletion'], statuses: ['succeeded'], limit: 1 });
  expect(deletions).toMatchObject({ total: 2, limit: 1 });
  expect(deletions.next).not.toBeNull();
  const byUid = await client.tasks.getTasks({ uids: [jsonTask.uid] });
  expect(byUid.results).toHaveLength(1);
  const done = await client.tasks.getTask(jsonTask.uid);
  expect(done.duration).toMatch(/^PT/);
  const batches = await client.batches.getBatches({ limit: 2 });
  expect(batches.results.length).toBe(2);

  // swap: each index now holds the other's documents
  const swap = await client.swapIndexes([{ indexes: ['movies_json', 'movies_ndjson'] }]).waitTask();
  expect(swap.status).toBe('succeeded');
  expect((await jsonIndex.getStats()).numberOfDocuments).toBe(5_000);
  expect((await ndjsonIndex.getStats()).numberOfDocuments).toBe(4_989);
  expect(await jsonIndex.getDocument(MORE[0]!.id)).toEqual(MORE[0]);

  // cancel and delete tasks by filter are tasks too
  const deleted = await client.tasks.deleteTasks({ types: ['documentDeletion'] }).waitTask();
  expect(deleted).toMatchObject({ status: 'succeeded', details: { deletedTasks: 2 } });

  // errors come back as the client's typed errors with the reference's codes
  await expect(client.index('missing').getDocuments()).rejects.toSatisfy(
    (e: unknown) => e instanceof MeilisearchApiError && e.cause?.code === 'index_not_found' && e.response.status === 404,
  );
  await jsonIndex.deleteAllDocuments().waitTask();
  expect((await jsonIndex.getDocuments()).total).toBe(0);
  expect((await client.deleteIndex('movies_json').waitTask()).status).toBe('succeeded');
  expect((await client.getIndexes()).results.map((i) => i.uid)).toEqual(['movies_ndjson']);
}, 300_000);
