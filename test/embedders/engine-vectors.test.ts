/** The vectors module through the Engine's tasks: settings, documents, failures, redaction. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { AddressPolicy, setOutboundPolicy } from '../../src/engine/net/index.js';
import { startFakeProvider, type FakeProvider } from './fake-provider.js';

describe('vectors through the engine', () => {
  let dir: string;
  let engine: Engine;
  let provider: FakeProvider;
  const done = async (p: Promise<{ taskUid: number }>) => engine.waitForTask((await p).taskUid, { timeoutMs: 30_000 });

  beforeAll(async () => {
    process.env.SEARCH_EMBEDDER_RETRY_BASE_MS = '5';
    process.env.SEARCH_EMBEDDER_MAX_ATTEMPTS = '2';
    setOutboundPolicy(AddressPolicy.parse('127.0.0.1/32'));
    provider = await startFakeProvider(4);
    dir = mkdtempSync(join(tmpdir(), 'search-engine-vectors-'));
    engine = await Engine.open({ dbPath: dir, logLevel: 'off' });
    await done(engine.createIndex('docs', { primaryKey: 'id' }));
  });
  afterAll(async () => {
    await engine?.close();
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
    setOutboundPolicy(AddressPolicy.publicOnly());
  });

  it('redacts API keys in settings and task details, keeps them for the provider', async () => {
    const task = await done(
      engine.updateSettings('docs', {
        embedders: {
          remote: {
            source: 'openAi',
            url: `${provider.url}/v1/embeddings`,
            apiKey: 'sk-very-secret-key-123',
            model: 'text-embedding-3-small',
            dimensions: 4,
            documentTemplate: '{{doc.text}}',
          },
        },
      } as never),
    );
    expect(task.status).toBe('succeeded');
    expect(JSON.stringify(task.details)).not.toContain('very-secret');
    const settings = engine.getSettings('docs');
    expect(settings.embedders.remote!.apiKey).toBe('sk-XXXXX...');
    expect(settings.embedders.remote!.documentTemplateMaxBytes).toBe(400);
    provider.received.length = 0;
    expect((await done(engine.addDocuments('docs', [{ id: 1, text: 'hello world' }], { method: 'replace' }))).status).toBe('succeeded');
    expect(provider.received[0]!.headers.authorization).toBe('Bearer sk-very-secret-key-123');
    expect(engine.indexStats('docs').numberOfEmbeddings).toBe(1);
  });

  it('fails a document task on provider errors, naming the documents, and writes nothing', async () => {
    provider.failures.push(500, 500);
    const task = await done(engine.addDocuments('docs', [{ id: 2, text: 'two' }, { id: 3, text: 'three' }], { method: 'replace' }));
    expect(task.status).toBe('failed');
    expect(task.error!.code).toBe('vector_embedding_error');
    expect(task.error!.message).toMatch(/`2`, `3`/);
    expect(engine.indexStats('docs').numberOfDocuments).toBe(1);
    expect(engine.indexStats('docs').numberOfEmbeddings).toBe(1);
  });

  it('fails a settings task whose embedder lacks a mandatory field', async () => {
    const task = await done(engine.updateSettings('docs', { embedders: { manual: { source: 'userProvided' } } } as never));
    expect(task.status).toBe('failed');
    expect(task.error!.code).toBe('invalid_settings_embedders');
    expect(task.error!.message).toBe('`.embedders.manual`: Missing field `dimensions` (note: this field is mandatory for source `userProvided`)');
    expect(engine.getSettings('docs').embedders.manual).toBeUndefined();
  });

  it('stores user-provided vectors, rejects wrong dimensions, searches them', async () => {
    expect((await done(engine.updateSettings('docs', { embedders: { manual: { source: 'userProvided', dimensions: 2 } } } as never))).status).toBe('succeeded');
    const bad = await done(engine.addDocuments('docs', [{ id: 4, text: 'x', _vectors: { manual: [1, 2, 3] } }], { method: 'replace' }));
    expect(bad.status).toBe('failed');
    expect(bad.error).toMatchObject({ code: 'invalid_vector_dimensions', message: 'Invalid vector dimensions: expected: `2`, found: `3`.' });
    const ok = await done(
      engine.addDocuments('docs', [
        { id: 5, text: 'east', _vectors: { manual: [1, 0] } },
        { id: 6, text: 'north', _vectors: { manual: [0, 1] } },
      ], { method: 'replace' }),
    );
    expect(ok.status).toBe('succeeded');
    const result = await engine.search('docs', { vector: [0.9, 0.1], hybrid: { embedder: 'manual', semanticRatio: 1 }, retrieveVectors: true, showRankingScore: true });
    expect(result.hits.map((h) => h.id)).toEqual([5, 6]);
    expect(result.hits[0]!._vectors).toMatchObject({ manual: { embeddings: [[1, 0]], regenerate: false } });
    expect(result.semanticHitCount).toBe(2);
    const missing = await engine.search('docs', { vector: [1, 0] }).catch((e) => e);
    expect(missing.code).toBe('missing_search_hybrid');
  });
});
