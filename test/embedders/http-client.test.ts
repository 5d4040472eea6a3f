/**
 * Vectors over HTTP with the official `meilisearch` client, unchanged: embedders settings (with
 * a REST provider the test runs), `_vectors` documents, vector and hybrid search, similar
 * documents, retrieveVectors, errors.
 */
import { Meilisearch, MeilisearchApiError } from 'meilisearch';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { AddressPolicy, setOutboundPolicy } from '../../src/engine/net/index.js';
import { startHarness, type Harness } from '../http/harness.js';
import { startFakeProvider, type FakeProvider } from './fake-provider.js';

let h: Harness;
let provider: FakeProvider;
let client: Meilisearch;

beforeAll(async () => {
  process.env.SEARCH_EMBEDDER_RETRY_BASE_MS = '5';
  provider = await startFakeProvider(8);
  h = await startHarness();
  setOutboundPolicy(AddressPolicy.parse('127.0.0.1/32'));
  client = new Meilisearch({ host: h.url });
});
afterAll(async () => {
  await h?.stop();
  await provider?.close();
  setOutboundPolicy(AddressPolicy.publicOnly());
});

const films = [
  { id: 1, title: 'shark attack at the beach', _vectors: { manual: [1, 0] } },
  { id: 2, title: 'lovers in paris', _vectors: { manual: [0, 1] } },
  { id: 3, title: 'sharks and whales of the deep sea', _vectors: { manual: [0.9, 0.2] } },
];

test('embedders, documents and searches through the official client', async () => {
  await client.createIndex('films', { primaryKey: 'id' }).waitTask();
  const index = client.index('films');
  const settingsTask = await index
    .updateEmbedders({
      manual: { source: 'userProvided', dimensions: 2 },
      remote: {
        source: 'rest',
        url: `${provider.url}/rest/batch`,
        request: { inputs: ['{{text}}', '{{..}}'] },
        response: { results: [{ vec: '{{embedding}}' }, '{{..}}'] },
        apiKey: 'rest-secret-key-0123',
        documentTemplate: '{{doc.title}}',
      },
    })
    .waitTask();
  expect(settingsTask.status).toBe('succeeded');
  const embedders = await index.getEmbedders();
  expect(embedders!.remote!.apiKey).toBe('resXXXXX...');
  expect(embedders!.manual).toEqual({ source: 'userProvided', dimensions: 2 });

  expect((await index.addDocuments(films).waitTask()).status).toBe('succeeded');
  expect(provider.received.at(-1)!.headers.authorization).toBe('Bearer rest-secret-key-0123');

  const byVector = await index.search('', { vector: [1, 0.05], hybrid: { embedder: 'manual', semanticRatio: 1 }, limit: 2, showRankingScore: true });
  expect(byVector.hits.map((h) => h.id)).toEqual([1, 3]);
  expect(byVector.semanticHitCount).toBe(2);

  const hybrid = await index.search('shark', { hybrid: { embedder: 'remote', semanticRatio: 0.5 }, retrieveVectors: true });
  expect(hybrid.hits.map((h) => h.id)).toContain(1);
  expect(typeof hybrid.semanticHitCount).toBe('number');
  const withVectors = hybrid.hits.find((h) => h.id === 2)!;
  expect(withVectors._vectors!.manual).toEqual({ embeddings: [[0, 1]], regenerate: false });
  expect((withVectors._vectors!.remote as { embeddings: number[][]; regenerate: boolean }).regenerate).toBe(true);

  const similar = await index.searchSimilarDocuments({ id: 1, embedder: 'manual', limit: 1 });
  expect(similar.hits.map((h) => h.id)).toEqual([3]);

  const doc = await index.getDocument(2, { retrieveVectors: true });
  expect(doc._vectors.manual).toEqual({ embeddings: [[0, 1]], regenerate: false });
  expect((await index.getDocument(2))._vectors).toBeUndefined();

  const stats = await index.getStats();
  expect(stats.numberOfEmbeddings).toBe(6);
  expect(stats.numberOfEmbeddedDocuments).toBe(6);
});

test('vector errors reach the client with the reference codes', async () => {
  const index = client.index('films');
  const error = await index.search('', { vector: [1, 0, 0], hybrid: { embedder: 'manual' } }).catch((e) => e);
  expect(error).toBeInstanceOf(MeilisearchApiError);
  expect(error.cause.code).toBe('invalid_vector_dimensions');
  expect(error.response.status).toBe(400);
  const unknown = await index.search('x', { hybrid: { embedder: 'nope' } }).catch((e) => e);
  expect(unknown.cause.code).toBe('invalid_search_embedder');
  const missing = await index.searchSimilarDocuments({ id: 999, embedder: 'manual' }).catch((e) => e);
  expect(missing.cause.code).toBe('not_found_similar_id');
  const task = await index.addDocuments([{ id: 9, title: 'x', _vectors: { manual: 'oops' } }]).waitTask();
  expect(task.status).toBe('failed');
  expect(task.error!.code).toBe('invalid_vectors_type');
});
