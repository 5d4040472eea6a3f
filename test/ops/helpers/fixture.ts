/**
 * A populated database for the ops tests: two indexes of real data (films with 8-d vectors drawn
 * from GloVe, books), settings, API keys, a webhook, finished and failed tasks.
 */
import { AuthEnv } from '../../../src/engine/auth/auth-env.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { Document } from '../../../src/engine/types.js';
import { books as booksData, gloveBase, movies as moviesData } from '../../data.js';

export const movies: Document[] = moviesData();
export const books: Document[] = booksData();

/** The first `count` vectors of the GloVe subset, `dims` components each (the rows are 100-d). */
export function gloveVectors(count: number, dims = 100): number[][] {
  return gloveBase(count).map((v) => Array.from(v.subarray(0, dims)));
}

export const KEY = {
  uid: '7a5d9c1e-3b1f-4c2e-9a0d-5e6f7a8b9c0d',
  name: 'films-search',
  description: 'search the films',
  actions: ['search', 'documents.get'],
  indexes: ['films'],
  expiresAt: null,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};
export const WEBHOOK = { uuid: '0e4f3c2b-1a09-4876-8543-21fedcba9876', url: 'http://127.0.0.1:9/tasks', headers: { authorization: 'Bearer hook' } };

export async function populate(engine: Engine, auth: AuthEnv, filmCount = 1500): Promise<void> {
  const vectors = gloveVectors(filmCount, 8);
  const films = movies.slice(0, filmCount).map((m, i) => ({ ...m, _vectors: { glove: vectors[i]! } }));
  const tasks = [
    await engine.updateSettings('films', {
      searchableAttributes: ['title', 'extract', 'cast'],
      filterableAttributes: ['year', 'genres'],
      sortableAttributes: ['year'],
      embedders: { glove: { source: 'userProvided', dimensions: 8 } },
    } as never),
    await engine.addDocuments('films', films),
    await engine.addDocuments('films', [{ id: movies[0]!.id, year: 1901 }], { method: 'update' }),
    await engine.deleteDocuments('films', [String(movies[1]!.id)]),
    await engine.addDocuments('books', books, { primaryKey: 'isbn13' }),
    await engine.updateSettings('books', { rankingRules: ['words', 'typo', 'sort', 'proximity', 'attribute', 'exactness'] } as never),
    await engine.addDocuments('books', [{ isbn13: 'not an id!' }]), // fails: invalid id
  ];
  for (const t of tasks) await engine.waitForTask(t.taskUid, { timeoutMs: 120_000 });
  await auth.keys.put(KEY.uid, KEY as never);
  await auth.webhooks.put(WEBHOOK.uuid, { url: WEBHOOK.url, headers: WEBHOOK.headers });
}

/** Every document of an index, in primary key order, with vectors. */
export function allDocuments(engine: Engine, uid: string): Document[] {
  const total = engine.indexStats(uid).numberOfDocuments;
  const pk = engine.getIndex(uid).primaryKey!;
  const docs = engine.getDocuments(uid, { limit: total + 1, retrieveVectors: true }).results;
  return docs.sort((a, b) => String(a[pk]).localeCompare(String(b[pk])));
}

/** The same searches on any engine: keyword with filter and sort, and a vector query. */
export async function searches(engine: Engine): Promise<unknown[]> {
  const query = gloveVectors(3, 8)[2]!;
  return [
    await engine.search('films', { q: 'love story', limit: 20 }),
    await engine.search('films', { q: 'war', filter: 'year > 1950', sort: ['year:desc'], limit: 10 }),
    await engine.search('films', { vector: query, hybrid: { embedder: 'glove', semanticRatio: 1 }, limit: 10 }),
    await engine.search('books', { q: 'harry', limit: 10 }),
  ].map((r) => {
    const { processingTimeMs, ...rest } = r as unknown as Record<string, unknown>;
    void processingTimeMs;
    return rest;
  });
}
