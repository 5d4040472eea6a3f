/**
 * The held-in flow of issue #2 with the official `meilisearch` npm client, unchanged, against our
 * server: create indexes, add 7,000 movies (half as a JSON array, half as NDJSON), wait for the
 * tasks, get, browse and delete documents, filter tasks, swap indexes. (The flow had 10k
 * films; the committed fixture holds 7,943, and the flow does not depend on the count.)
 */
import { Meilisearch, MeilisearchApiError } from 'meilisearch';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';
import { movies } from '../data.js';

interface Movie {
  id: number;
  title: string;
  year: number;
  cast: string[];
  genres: string[];
  href: string | null;
}

const ALL: Movie[] = movies().slice(0, 7_000) as Movie[];
const MOVIES = ALL.slice(0, 3_500);
const MORE = ALL.slice(3_500);

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

  // 3,500 documents as a JSON array into one index, the next 3,500 as NDJSON into the other.
  const jsonIndex = client.index<Movie>('movies_json');
  const ndjsonIndex = client.index<Movie>('movies_ndjson');
  const ndjson = MORE.map((m) => JSON.stringify(m)).join('\n');
  const [jsonTask, ndjsonTask] = await Promise.all([
    jsonIndex.addDocuments(MOVIES).waitTask({ timeout: 280_000 }),
    ndjsonIndex.addDocumentsFromString(ndjson, 'application/x-ndjson', { primaryKey: 'id' }).waitTask({ timeout: 280_000 }),
  ]);
  expect(jsonTask).toMatchObject({ status: 'succeeded', details: { receivedDocuments: 3_500, indexedDocuments: 3_500 } });
  expect(ndjsonTask).toMatchObject({ status: 'succeeded', details: { receivedDocuments: 3_500, indexedDocuments: 3_500 } });
  expect((await jsonIndex.getStats()).numberOfDocuments).toBe(3_500);
  expect((await ndjsonIndex.getStats()).numberOfDocuments).toBe(3_500);
  expect((await ndjsonIndex.fetchPrimaryKey())).toBe('id');

  // get and browse
  expect(await jsonIndex.getDocument(MOVIES[42]!.id)).toEqual(MOVIES[42]);
  expect(await ndjsonIndex.getDocument(MORE[3_499]!.id, { fields: ['title'] })).toEqual({ title: MORE[3_499]!.title });
  const page = await jsonIndex.getDocuments({ offset: 500, limit: 3, fields: ['id', 'year'] });
  expect(page).toMatchObject({ offset: 500, limit: 3, total: 3_500 });
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
  expect((await jsonIndex.getStats()).numberOfDocuments).toBe(3_489);
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
  expect((await jsonIndex.getStats()).numberOfDocuments).toBe(3_500);
  expect((await ndjsonIndex.getStats()).numberOfDocuments).toBe(3_489);
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
