import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy, setOutboundPolicy } from '../../src/engine/net/index.js';
import { OpenAiEmbedder } from '../../src/engine/embedders/openAi.js';
import { OllamaEmbedder } from '../../src/engine/embedders/ollama.js';
import { RestEmbedder } from '../../src/engine/embedders/rest.js';
import { CompositeEmbedder } from '../../src/engine/embedders/composite.js';
import { EmbeddingFailure } from '../../src/engine/embedders/types.js';
import { startFakeProvider, toyEmbedding, type FakeProvider } from './fake-provider.js';

let provider: FakeProvider;

beforeAll(async () => {
  process.env.SEARCH_EMBEDDER_RETRY_BASE_MS = '5';
  process.env.SEARCH_EMBEDDER_MAX_ATTEMPTS = '3';
  setOutboundPolicy(AddressPolicy.parse('127.0.0.1/32'));
  provider = await startFakeProvider(8);
});
afterAll(async () => {
  setOutboundPolicy(AddressPolicy.publicOnly());
  await provider.close();
});

const texts = ['a shark terrorises a beach town', 'two lovers in Paris', 'robots fight in space'];
const expected = texts.map((t) => Array.from(Float32Array.from(toyEmbedding(t))));

describe('openAi', () => {
  it('sends model, input and key, and orders vectors by index', async () => {
    provider.received.length = 0;
    const embedder = new OpenAiEmbedder({ url: `${provider.url}/v1/embeddings`, apiKey: 'sk-test-key', dimensions: 8, model: 'text-embedding-3-small' });
    const vectors = await embedder.embed(texts, 'indexing');
    expect(vectors.map((v) => Array.from(v))).toEqual(expected);
    const request = provider.received[0]!;
    expect(request.headers.authorization).toBe('Bearer sk-test-key');
    expect(request.body).toEqual({ model: 'text-embedding-3-small', input: texts, dimensions: 8 });
  });

  it('retries a 429 and a 503, then succeeds', async () => {
    provider.received.length = 0;
    provider.failures.push(429, 503);
    const embedder = new OpenAiEmbedder({ url: `${provider.url}/v1/embeddings`, apiKey: 'k', dimensions: 8 });
    const vectors = await embedder.embed(['hello'], 'indexing');
    expect(Array.from(vectors[0]!)).toEqual(toyEmbedding('hello'));
    expect(provider.received).toHaveLength(3);
  });

  it('gives up after a bounded number of attempts', async () => {
    provider.received.length = 0;
    provider.failures.push(500, 500, 500, 500);
    const embedder = new OpenAiEmbedder({ url: `${provider.url}/v1/embeddings`, dimensions: 8 });
    await expect(embedder.embed(['hello'], 'indexing')).rejects.toThrow(/answered 500.*gave up after 3 attempts/);
    expect(provider.received).toHaveLength(3);
    provider.failures.length = 0;
  });

  it('retries a search query at most once, so that hybrid search can fall back quickly', async () => {
    provider.received.length = 0;
    provider.failures.push(503, 503, 503);
    const embedder = new OpenAiEmbedder({ url: `${provider.url}/v1/embeddings`, dimensions: 8 });
    await expect(embedder.embed(['hello'], 'search')).rejects.toThrow(/gave up after 2 attempts/);
    expect(provider.received).toHaveLength(2);
    provider.failures.length = 0;
  });

  it('does not retry an authentication failure', async () => {
    provider.received.length = 0;
    provider.failures.push(401);
    const embedder = new OpenAiEmbedder({ url: `${provider.url}/v1/embeddings`, apiKey: 'bad', dimensions: 8 });
    await expect(embedder.embed(['hello'], 'search')).rejects.toThrow(/401.*apiKey/);
    expect(provider.received).toHaveLength(1);
  });

  it('rejects vectors of the wrong dimensions', async () => {
    const embedder = new OpenAiEmbedder({ url: `${provider.url}/v1/embeddings`, dimensions: 16 });
    await expect(embedder.embed(['hello'], 'indexing')).rejects.toThrow(/8 dimensions.*16/);
  });
});

describe('ollama', () => {
  it('batches through /api/embed and learns the dimensions', async () => {
    provider.received.length = 0;
    const embedder = new OllamaEmbedder({ model: 'nomic-embed-text', url: `${provider.url}/api/embed` });
    expect(embedder.dimensions()).toBeUndefined();
    const vectors = await embedder.embed(texts, 'indexing');
    expect(vectors.map((v) => Array.from(v))).toEqual(expected);
    expect(embedder.dimensions()).toBe(8);
    expect(provider.received).toHaveLength(1);
    expect(provider.received[0]!.body).toEqual({ model: 'nomic-embed-text', input: texts });
  });

  it('speaks the legacy /api/embeddings one text at a time', async () => {
    provider.received.length = 0;
    const embedder = new OllamaEmbedder({ model: 'm', url: `${provider.url}/api/embeddings` });
    const vectors = await embedder.embed(texts, 'indexing');
    expect(vectors.map((v) => Array.from(v))).toEqual(expected);
    expect(provider.received.map((r) => r.body.prompt)).toEqual(texts);
  });
});

describe('rest', () => {
  it('fills a batched request template and reads a batched response template', async () => {
    provider.received.length = 0;
    const embedder = new RestEmbedder({
      url: `${provider.url}/rest/batch`,
      request: { inputs: ['{{text}}', '{{..}}'], options: { truncate: true } },
      response: { results: [{ vec: '{{embedding}}' }, '{{..}}'] },
      headers: { 'x-custom': 'yes' },
      apiKey: 'secret',
    });
    const vectors = await embedder.embed(texts, 'indexing');
    expect(vectors.map((v) => Array.from(v))).toEqual(expected);
    const request = provider.received[0]!;
    expect(request.body).toEqual({ inputs: texts, options: { truncate: true } });
    expect(request.headers['x-custom']).toBe('yes');
    expect(request.headers.authorization).toBe('Bearer secret');
  });

  it('sends one request per text without a repeat marker', async () => {
    provider.received.length = 0;
    const embedder = new RestEmbedder({
      url: `${provider.url}/rest/single`,
      request: { query: { text: '{{text}}' } },
      response: { output: { vector: '{{embedding}}' } },
      dimensions: 8,
    });
    const vectors = await embedder.embed(texts, 'indexing');
    expect(vectors.map((v) => Array.from(v))).toEqual(expected);
    expect(provider.received).toHaveLength(3);
  });

  it('fails clearly when the response does not match the template', async () => {
    const embedder = new RestEmbedder({
      url: `${provider.url}/rest/single`,
      request: { query: { text: '{{text}}' } },
      response: { data: '{{embedding}}' },
    });
    const failure = await embedder.embed(['x'], 'search').catch((e) => e);
    expect(failure).toBeInstanceOf(EmbeddingFailure);
    expect(failure.message).toMatch(/expected an array of numbers/);
  });

  it('refuses a loopback provider unless the address policy allows it', async () => {
    setOutboundPolicy(AddressPolicy.publicOnly());
    try {
      const embedder = new RestEmbedder({ url: `${provider.url}/rest/single`, request: { query: { text: '{{text}}' } }, response: { output: { vector: '{{embedding}}' } } });
      await expect(embedder.embed(['x'], 'search')).rejects.toThrow(/Refusing to connect/);
    } finally {
      setOutboundPolicy(AddressPolicy.parse('127.0.0.1/32'));
    }
  });
});

describe('composite', () => {
  it('embeds documents with the indexing side and queries with the search side', async () => {
    provider.received.length = 0;
    const indexing = new OllamaEmbedder({ model: 'm', url: `${provider.url}/api/embed`, dimensions: 8 });
    const search = new RestEmbedder({ url: `${provider.url}/rest/single`, request: { query: { text: '{{text}}' } }, response: { output: { vector: '{{embedding}}' } }, dimensions: 8 });
    const composite = new CompositeEmbedder(indexing, search);
    await composite.embed(['doc text'], 'indexing');
    await composite.embed(['query text'], 'search');
    expect(provider.received.map((r) => r.path)).toEqual(['/api/embed', '/rest/single']);
  });
});
