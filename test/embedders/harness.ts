/**
 * Test harness: an index store with the vectors extension, driven through the engine's document
 * pipeline (ChangeSet, prepare, one write transaction), and an exact brute-force vector store
 * with the VectorStore interface (test-only stand-in for the HNSW store).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ChangeSet, fullReindexChanges, prepareExtensions } from '../../src/engine/index/pipeline.js';
import { IndexStore, RoaringBitmap32, type Bitmap } from '../../src/engine/index/store.js';
import { defaultSettings, type Settings } from '../../src/engine/settings/types.js';
import type { Document } from '../../src/engine/types.js';
import { VectorsExtension, type VectorHit, type VectorStoreLike } from '../../src/engine/vector/extension.js';

export class BruteForceStore implements VectorStoreLike {
  constructor(private readonly vectors: Map<number, Float32Array[]>) {}
  upsert(docid: number, vectors: Float32Array[]): void {
    this.vectors.set(docid, vectors);
  }
  delete(docid: number): void {
    this.vectors.delete(docid);
  }
  get(docid: number): Float32Array[] | undefined {
    return this.vectors.get(docid);
  }
  search(query: Float32Array, k: number, filter?: Bitmap): VectorHit[] {
    const hits: VectorHit[] = [];
    for (const [docid, vectors] of this.vectors) {
      if (filter && !filter.has(docid)) continue;
      const distance = Math.min(...vectors.map((v) => 1 - cosine(query, v)));
      hits.push({ docid, distance, similarity: 1 - distance / 2 });
    }
    return hits.sort((a, b) => a.distance - b.distance).slice(0, k);
  }
  clear(): void {
    this.vectors.clear();
  }
  count(): number {
    let n = 0;
    for (const v of this.vectors.values()) n += v.length;
    return n;
  }
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! ** 2; nb += b[i]! ** 2; }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export function bruteForceExtension(): VectorsExtension {
  const data = new Map<string, Map<number, Float32Array[]>>();
  return new VectorsExtension((store, embedder) => {
    const key = `${store.path}/${embedder}`;
    if (!data.has(key)) data.set(key, new Map());
    return new BruteForceStore(data.get(key)!);
  });
}

export class Harness {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'vectors-'));
  readonly store = new IndexStore(this.dir);
  constructor(readonly extension: VectorsExtension = bruteForceExtension()) {
    extension.open(this.store);
    this.store.write(() => this.store.setPrimaryKey('id'));
  }

  get settings(): Settings {
    return this.store.settings;
  }

  async add(documents: Document[], method: 'replace' | 'update' = 'replace'): Promise<void> {
    const changes = new ChangeSet(this.store);
    changes.addDocuments(documents, method, 'id');
    await this.commit(changes);
  }

  async remove(ids: string[]): Promise<void> {
    const changes = new ChangeSet(this.store);
    changes.deleteExternalIds(ids);
    await this.commit(changes);
  }

  private async commit(changes: ChangeSet): Promise<void> {
    const settings = this.settings;
    const prepared = await prepareExtensions([this.extension], changes.list(), settings, this.store);
    this.store.write(() => changes.commit([this.extension], settings, prepared));
  }

  /** A settings task: re-extract every document when the extension asks for it. */
  async setEmbedders(embedders: Settings['embedders']): Promise<void> {
    const before = this.settings;
    const after = { ...before, embedders };
    if (!this.extension.needsReindex(before, after)) {
      this.store.write(() => this.store.setSettings(after));
      return;
    }
    const changes = fullReindexChanges(this.store);
    const prepared = await this.extension.prepare(changes, after, this.store);
    this.store.write(() => {
      this.store.setSettings(after);
      this.extension.clear(this.store);
      this.extension.apply(changes, { store: this.store, settings: after, prepared });
    });
  }

  docid(id: string): number {
    return this.store.docidOf(id)!;
  }

  get index() {
    const store = this.store;
    return { store, get settings() { return store.settings; } };
  }

  all(): Bitmap {
    return new RoaringBitmap32(this.store.docids());
  }

  async close(): Promise<void> {
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export { defaultSettings };
