/**
 * Searches read the codes and layer-0 lists through the memory map (segments of >= 16 MiB and
 * an overlay of changed blocks) while the writer keeps its WebAssembly arena: both must answer
 * the same neighbours at the same distances, before and after the overlay is folded, and stores
 * written before the segments must still open.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { IndexStore, RoaringBitmap32 } from '../../src/engine/index/store.js';
import type { Distance } from '../../src/engine/vector/distance.js';
import { VectorStore, type VectorStoreConfig } from '../../src/engine/vector/store.js';
import { baseSubset, DIM, queries } from './glove.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vector-mapped-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function fill(vs: VectorStore, store: IndexStore, vectors: Float32Array[], from = 0, batch = 1500): void {
  for (let start = from; start < vectors.length; start += batch) {
    store.write(() =>
      vs.batch(() => {
        for (let i = start; i < Math.min(vectors.length, start + batch); i++) vs.upsert(i, [vectors[i]!]);
      }),
    );
  }
}

/**
 * Fixed beam (the tuner learns from timings and starts afresh per instance); a filtered search
 * too, a beam wide enough that the store answers by an exact scan of every code, and the 10
 * best by code distance re-ranked no further (any error in a code the walk copies shows there).
 */
function answers(vs: VectorStore, qs: Float32Array[]): unknown[] {
  const filter = new RoaringBitmap32(Array.from({ length: 3000 }, (_, i) => i * 2));
  return qs.flatMap((q) => [
    vs.search(q, 10, undefined, { ef: 80 }),
    vs.search(q, 5, filter, { ef: 80 }),
    vs.search(q, 10, undefined, { ef: 400 }),
    vs.search(q, 10, undefined, { ef: 80, rerank: 10 }),
  ]);
}

describe('searches through the memory map', () => {
  const vectors = baseSubset(6000);
  const qs = queries(60);

  test('a reopened store answers as the writer did, without loading the arena', async () => {
    const dir = tempDir();
    let store = new IndexStore(dir);
    const config: VectorStoreConfig = { dimensions: DIM, distance: 'cosine', foldMinBytes: 0 };
    let vs = new VectorStore(store, 'e', config);
    fill(vs, store, vectors.slice(0, 5000));
    store.write(() => vs.flush());
    // pending vectors (scanned exactly) are read through the map as well
    fill(vs, store, vectors.slice(0, 5600), 5000);
    expect(vs.mapped).toBe(false);
    expect(vs.segmentCount).toBeGreaterThan(0);
    const before = answers(vs, qs);
    await store.close();

    store = new IndexStore(dir);
    // unfiltered searches first: the documents' lists are built at their first use, after them
    vs = new VectorStore(store, 'e', config);
    const unfiltered = (v: VectorStore) => qs.map((q) => v.search(q, 10, undefined, { ef: 400 }));
    expect(unfiltered(vs)).toEqual(unfiltered(new VectorStore(store, 'e', config)));
    expect(vs.get(5599)).toEqual([vectors[5599]]);
    expect(vs.docids().size).toBe(5600);
    expect(answers(vs, qs)).toEqual(before);
    expect(vs.mapped).toBe(true);
    expect(vs.search(vectors[5500]!, 1)[0]!.docid).toBe(5500);
    // anonymous memory of the view: levels, marks, upper layers and owners, not codes and lists
    expect(vs.memoryBytes).toBeLessThan(5600 * 40);
    await store.close();
  });

  test('documents with several vectors keep their lists after a reopen (built at first use): get, filter, delete', async () => {
    const dir = tempDir();
    let store = new IndexStore(dir);
    const config: VectorStoreConfig = { dimensions: DIM, distance: 'cosine', foldMinBytes: 0 };
    let vs = new VectorStore(store, 'e', config);
    // documents 0..999 with two vectors each, then every third with three: their slots interleave
    store.write(() => vs.batch(() => { for (let d = 0; d < 1000; d++) vs.upsert(d, [vectors[d]!, vectors[1000 + d]!]); }));
    store.write(() => vs.batch(() => { for (let d = 0; d < 1000; d += 3) vs.upsert(d, [vectors[2000 + d]!, vectors[d]!, vectors[3000 + d]!]); }));
    store.write(() => vs.flush());
    await store.close();
    store = new IndexStore(dir);
    vs = new VectorStore(store, 'e', config);
    expect(vs.search(vectors[3000 + 300]!, 1, undefined, { ef: 80 })[0]!.docid).toBe(300);
    expect(vs.get(300)).toEqual([vectors[2300], vectors[300], vectors[3300]]);
    expect(vs.get(301)).toEqual([vectors[301], vectors[1301]]);
    expect(vs.search(vectors[1301]!, 1, new RoaringBitmap32([301, 302]), { ef: 80 })[0]!.docid).toBe(301);
    store.write(() => vs.delete(300));
    expect(vs.get(300)).toEqual([]);
    expect(vs.docids().has(300)).toBe(false);
    expect(vs.search(vectors[3300]!, 3, undefined, { ef: 200 }).map((h) => h.docid)).not.toContain(300);
    await store.close();
  });

  test('the overlay of changed blocks, and its fold into segments, keep the answers', () => {
    const store = new IndexStore(tempDir());
    const config: VectorStoreConfig = { dimensions: DIM, distance: 'cosine', foldMinBytes: 0 };
    const writer = new VectorStore(store, 'e', config);
    fill(writer, store, vectors.slice(0, 5000));
    store.write(() => writer.flush());
    const folds = new Set<number>();
    // small batches: some leave their blocks in the overlay, some fold it
    for (let round = 0; round < 6; round++) {
      store.write(() =>
        writer.batch(() => {
          for (let i = round * 37; i < 5000; i += 211) writer.upsert(i, [vectors[(i + 1000 * (round + 1)) % 6000]!]);
          for (let i = 100 + round; i < 5000; i += 997) writer.delete(i);
        }),
      );
      // the writer repairs the graph around deletions at its next search or merge, in RAM until
      // its next write: merge now, so that what readers see is what the writer searches
      store.write(() => writer.flush());
      folds.add(writer.segmentCount);
      const reader = new VectorStore(store, 'e', config);
      expect(reader.mapped).toBe(true);
      expect(answers(reader, qs.slice(0, 20))).toEqual(answers(writer, qs.slice(0, 20)));
    }
    expect(folds.has(0)).toBe(false);
  });

  test.each<[Distance, boolean]>([
    ['euclidean', false],
    ['dot', false],
    ['hamming', false],
    ['cosine', true],
  ])('%s (binary quantized: %s): the view scores as the kernels do', (distance, binaryQuantized) => {
    const store = new IndexStore(tempDir());
    const config: VectorStoreConfig = { dimensions: DIM, distance, binaryQuantized, foldMinBytes: 0 };
    const writer = new VectorStore(store, 'e', config);
    // more than 4,096 vectors: fewer are scanned, not walked (params.ts, preferScan)
    fill(writer, store, vectors.slice(0, 5000));
    store.write(() => writer.flush());
    fill(writer, store, vectors.slice(0, 5300), 5000);
    const reader = new VectorStore(store, 'e', config);
    expect(reader.mapped).toBe(true);
    expect(answers(reader, qs.slice(0, 20))).toEqual(answers(writer, qs.slice(0, 20)));
  });

  // The view copies only the bytes of a row that a code uses, and touches the cache lines they
  // lie on: codes shorter than one line, and longer than two (an odd number of bytes, and rows
  // with a norm), must score as the arena's kernels do.
  test.each<[Distance, number]>([
    ['euclidean', 37],
    ['cosine', 260],
    ['dot', 260],
    ['hamming', 300],
  ])('%s with %i dimensions: the view scores as the kernels do', (distance, dimensions) => {
    const reshape = (v: Float32Array, i: number) => Float32Array.from({ length: dimensions }, (_, d) => v[d % DIM]! * (1 + ((i + d) % 7) / 10));
    const store = new IndexStore(tempDir());
    const config: VectorStoreConfig = { dimensions, distance, foldMinBytes: 0 };
    const writer = new VectorStore(store, 'e', config);
    fill(writer, store, vectors.slice(0, 5000).map(reshape));
    store.write(() => writer.flush());
    const reader = new VectorStore(store, 'e', config);
    expect(reader.mapped).toBe(true);
    const queried = qs.slice(0, 20).map(reshape);
    expect(answers(reader, queried)).toEqual(answers(writer, queried));
  });

  test('a store of blocks only (written before the segments) opens, and its next write folds it', async () => {
    const dir = tempDir();
    let store = new IndexStore(dir);
    // default fold size: 3,000 vectors stay in blocks, as every store was written before
    let vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    fill(vs, store, vectors.slice(0, 3000));
    store.write(() => vs.flush());
    const meta = store.openDB<Record<string, unknown>, string>('vectors:e:meta', { encoding: 'msgpack' });
    store.write(() => {
      const state = meta.get('state')!;
      delete state.segments;
      delete state.segSlots;
      meta.putSync('state', { ...state, layout: 2 });
    });
    const before = answers(vs, qs.slice(0, 20));
    await store.close();
    store = new IndexStore(dir);
    vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    expect(answers(vs, qs.slice(0, 20))).toEqual(before);
    expect(vs.mapped).toBe(true);
    await store.close();
    store = new IndexStore(dir);
    vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine', foldMinBytes: 0 });
    store.write(() => vs.upsert(3000, [vectors[3000]!]));
    expect(vs.segmentCount).toBeGreaterThan(0);
    const reader = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    expect(answers(reader, qs.slice(0, 20))).toEqual(answers(vs, qs.slice(0, 20)));
    expect(reader.search(vectors[3000]!, 1)[0]!.docid).toBe(3000);
    await store.close();
  });
});
