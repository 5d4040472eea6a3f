/**
 * `huggingFace` models in the hub's own layout (tokenizer.json, config.json, ONNX weights), run with
 * onnxruntime-node: from a folder, from the hub's cache, downloaded on first use (from a local
 * server standing in for the hub), and over HTTP in a hybrid search. The model is written by the
 * test (tiny-hub-model.ts): words of one topic share a direction, so a text and its paraphrase
 * embed close together.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HuggingFaceEmbedder } from '../../src/engine/embedders/huggingFace.js';
import { downloadHubModel, HubDownloadFailure } from '../../src/engine/embedders/hub-download.js';
import { LocalModelThread } from '../../src/engine/embedders/local-model-thread.js';
import { hubRepoDir, locateModel } from '../../src/engine/embedders/model-location.js';
import { OnnxSentenceModel } from '../../src/engine/embedders/onnx-model.js';
import { EmbeddingFailure } from '../../src/engine/embedders/types.js';
import { startHarness, type Harness } from '../http/harness.js';
import { DIMENSIONS, hubFiles, writeHubModel } from './tiny-hub-model.js';

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! ** 2; nb += b[i]! ** 2; }
  return dot / Math.sqrt(na * nb);
};
const norm = (a: Float32Array) => Math.sqrt(a.reduce((s, v) => s + v * v, 0));

let root: string;
const threads: LocalModelThread[] = [];
const thread = () => {
  const t = new LocalModelThread();
  threads.push(t);
  return t;
};

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'search-hub-model-'));
});
afterAll(async () => {
  await Promise.all(threads.map((t) => t.terminate()));
  rmSync(root, { recursive: true, force: true });
});

describe('a hub-layout model run with onnxruntime', () => {
  it('embeds texts by meaning: a paraphrase is closer than another topic, vectors normalised as the model asks', async () => {
    const model = await OnnxSentenceModel.load(writeHubModel(path.join(root, 'mean')), 'useModel');
    const [car, automobile, puppy, unknown] = await model.embed(['My car is fast', 'the new automobile', 'a puppy', 'zzz qqq']);
    expect(car).toHaveLength(DIMENSIONS);
    expect(cosine(car!, automobile!)).toBeGreaterThan(0.9);
    expect(cosine(car!, puppy!)).toBeLessThan(0.3);
    expect(norm(car!)).toBeCloseTo(1, 5); // modules.json has a Normalize module
    expect(unknown!.every(Number.isFinite)).toBe(true);
  });

  it('pools as the model configuration says, unless `pooling` forces mean or CLS', async () => {
    const dir = writeHubModel(path.join(root, 'cls'), 'cls');
    const byModel = await OnnxSentenceModel.load(dir, 'useModel');
    // CLS pooling: the first token's vector, the same for every text with this model
    const [a, b] = await byModel.embed(['my car', 'a puppy']);
    expect(cosine(a!, b!)).toBeCloseTo(1, 5);
    const forcedMean = await OnnxSentenceModel.load(dir, 'forceMean');
    const [c, d] = await forcedMean.embed(['my car', 'a puppy']);
    expect(cosine(c!, d!)).toBeLessThan(0.9);
    const forcedCls = await OnnxSentenceModel.load(path.join(root, 'mean'), 'forceCls');
    const [e, f] = await forcedCls.embed(['my car', 'a puppy']);
    expect(cosine(e!, f!)).toBeCloseTo(1, 5);
  });

  it('embeds a batch of texts of different lengths like the same texts one by one (padding is masked)', async () => {
    const model = await OnnxSentenceModel.load(path.join(root, 'mean'), 'useModel');
    const texts = ['car', 'the big old truck is in the rain', 'pizza'];
    const batch = await model.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [alone] = await model.embed([text]);
      expect(cosine(batch[i]!, alone!)).toBeCloseTo(1, 5);
    }
  });
});

describe('where a hub model is found', () => {
  it('in a folder given as `model`, and under SEARCH_MODELS_DIR by repository id', () => {
    const dir = path.join(root, 'mean');
    expect(locateModel(dir)).toEqual({ kind: 'hub', dir, pooling: 'useModel' });
    const models = path.join(root, 'models');
    writeHubModel(path.join(models, 'acme', 'tiny-embed'));
    expect(locateModel('acme/tiny-embed', { env: { SEARCH_MODELS_DIR: models }, pooling: 'forceMean' })).toEqual({
      kind: 'hub',
      dir: path.join(models, 'acme', 'tiny-embed'),
      pooling: 'forceMean',
    });
  });

  it("in the hub's cache layout, at the commit the revision's ref names, or at a commit given as revision", () => {
    const cache = path.join(root, 'hf-cache');
    const repoDir = hubRepoDir(cache, 'acme/tiny-embed');
    const commit = 'a'.repeat(40);
    writeHubModel(path.join(repoDir, 'snapshots', commit));
    mkdirSync(path.join(repoDir, 'refs'), { recursive: true });
    writeFileSync(path.join(repoDir, 'refs', 'main'), commit);
    const snapshot = path.join(repoDir, 'snapshots', commit);
    expect(locateModel('acme/tiny-embed', { env: { HF_HUB_CACHE: cache } })).toMatchObject({ kind: 'hub', dir: snapshot });
    expect(locateModel('acme/tiny-embed', { env: { HF_HOME: path.join(root, 'nowhere'), HF_HUB_CACHE: cache }, revision: commit })).toMatchObject({ kind: 'hub', dir: snapshot });
    // another revision is not in the cache: to be downloaded
    expect(locateModel('acme/tiny-embed', { env: { HF_HUB_CACHE: cache }, revision: 'v2' })).toEqual({
      kind: 'download',
      repo: 'acme/tiny-embed',
      revision: 'v2',
      cacheDir: cache,
      pooling: 'useModel',
    });
  });

  it('a path that holds no model fails at once, naming where it looked', () => {
    expect(() => new HuggingFaceEmbedder(path.join(root, 'empty-folder'))).toThrow(EmbeddingFailure);
    expect(() => new HuggingFaceEmbedder(path.join(root, 'empty-folder'))).toThrow(/could not find the files of model .*tokenizer\.json/);
  });
});

describe('downloaded on first use', () => {
  let hub: Server;
  let endpoint: string;
  const requests: string[] = [];
  const commit = 'b'.repeat(40);

  beforeAll(async () => {
    const files = hubFiles();
    hub = createServer((req, res) => {
      requests.push(req.url!);
      const match = /^\/acme\/tiny-embed\/resolve\/main\/(.+)$/.exec(req.url!);
      const content = match ? files[decodeURIComponent(match[1]!)] : undefined;
      if (content === undefined) return res.writeHead(404).end('Entry not found');
      res.writeHead(200, { 'x-repo-commit': commit, 'content-length': Buffer.byteLength(content) }).end(content);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => hub.close(() => resolve())));

  it("fetches the model's files into the hub cache layout, with progress lines, then finds them there", async () => {
    const cache = path.join(root, 'download-cache');
    const lines: string[] = [];
    const snapshot = await downloadHubModel({ repo: 'acme/tiny-embed', revision: 'main', cacheDir: cache, env: { HF_ENDPOINT: endpoint }, progress: (l) => lines.push(l) });
    expect(snapshot).toBe(path.join(hubRepoDir(cache, 'acme/tiny-embed'), 'snapshots', commit));
    for (const file of Object.keys(hubFiles())) expect(existsSync(path.join(snapshot, file))).toBe(true);
    expect(readFileSync(path.join(hubRepoDir(cache, 'acme/tiny-embed'), 'refs', 'main'), 'utf8')).toBe(commit);
    expect(lines[0]).toMatch(/downloading model acme\/tiny-embed@main/);
    expect(lines.some((l) => l.includes('onnx/model.onnx'))).toBe(true);
    expect(locateModel('acme/tiny-embed', { env: { HF_HUB_CACHE: cache } })).toMatchObject({ kind: 'hub', dir: snapshot });
  });

  it('an embedder configured with a hub id downloads on its first call, on the model thread, and embeds', async () => {
    const cache = path.join(root, 'thread-cache');
    const saved = { ...process.env };
    process.env.HF_ENDPOINT = endpoint; // the model thread takes its environment from this one
    process.env.HF_HUB_CACHE = cache;
    try {
      const embedder = new HuggingFaceEmbedder('acme/tiny-embed', thread());
      expect(embedder.dimensions()).toBeUndefined();
      const [car, truck] = await embedder.embed(['car', 'truck'], 'indexing');
      expect(cosine(car!, truck!)).toBeGreaterThan(0.9);
      expect(embedder.dimensions()).toBe(DIMENSIONS);
      expect(existsSync(path.join(hubRepoDir(cache, 'acme/tiny-embed'), 'snapshots', commit, 'onnx/model.onnx'))).toBe(true);
    } finally {
      process.env = saved;
    }
  });

  it('without network, the error names the folder to fill', async () => {
    const cache = path.join(root, 'offline-cache');
    const request = { repo: 'acme/other-model', revision: 'main', cacheDir: cache, env: { HF_ENDPOINT: 'http://127.0.0.1:9' }, progress: () => {} };
    const failure = await downloadHubModel(request).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(HubDownloadFailure);
    expect((failure as Error).message).toContain(path.join(hubRepoDir(cache, 'acme/other-model'), 'snapshots', 'main'));
    expect((failure as Error).message).toMatch(/onnx\/model\.onnx/);
    const offline = await downloadHubModel({ ...request, env: { HF_HUB_OFFLINE: '1' } }).catch((e: unknown) => e);
    expect((offline as Error).message).toMatch(/HF_HUB_OFFLINE/);
    // nothing half-written counts as the model afterwards
    expect(locateModel('acme/other-model', { env: { HF_HUB_CACHE: cache } }).kind).toBe('download');
  });
});

describe('over HTTP: a hybrid search with a hub model finds a paraphrase keyword search misses', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    const docs = [
      { id: 1, text: 'My car is fast' },
      { id: 2, text: 'A puppy and a kitten' },
      { id: 3, text: 'Pizza for dinner' },
      { id: 4, text: 'Rain and wind in the forecast' },
    ];
    await h.wait((await h.request('POST', '/indexes/notes/documents', { json: docs })).body.taskUid);
    const settings = await h.request('PATCH', '/indexes/notes/settings', {
      json: { embedders: { tiny: { source: 'huggingFace', model: path.join(root, 'mean'), pooling: 'useModel', documentTemplate: '{{doc.text}}' } } },
    });
    expect(settings.status).toBe(202);
    const task = await h.wait(settings.body.taskUid);
    expect(task.error).toBeNull();
  }, 120_000);
  afterAll(() => h?.stop());

  it('ranks the paraphrased document first', async () => {
    const keyword = await h.request('POST', '/indexes/notes/search', { json: { q: 'automobile' } });
    expect(keyword.body.hits).toHaveLength(0);
    const hybrid = await h.request('POST', '/indexes/notes/search', { json: { q: 'automobile', hybrid: { embedder: 'tiny', semanticRatio: 1 }, limit: 2 } });
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.hits[0].id).toBe(1);
    const storm = await h.request('POST', '/indexes/notes/search', { json: { q: 'a storm with snow', hybrid: { embedder: 'tiny', semanticRatio: 1 }, limit: 1 } });
    expect(storm.body.hits[0].id).toBe(4);
  });

  it('stores vectors of the model\'s dimensions', async () => {
    const doc = await h.request('GET', '/indexes/notes/documents/3?retrieveVectors=true');
    expect(doc.body._vectors.tiny.embeddings[0]).toHaveLength(DIMENSIONS);
    expect(doc.body._vectors.tiny.regenerate).toBe(true);
  });
});
