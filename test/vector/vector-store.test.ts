import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { IndexStore, RoaringBitmap32 } from '../../src/engine/index/store.js';
import { dot, exactDistance, hammingFloat, normalized, squaredEuclidean } from '../../src/engine/vector/distance.js';
import { int8Scale } from '../../src/engine/vector/quantizer.js';
import { VectorStore, type VectorStoreConfig } from '../../src/engine/vector/store.js';
import { baseSubset, bruteForce, DIM, queries, recall } from './glove.js';

const dirs: string[] = [];
function tempStore(): IndexStore {
  const dir = mkdtempSync(join(tmpdir(), 'vector-store-'));
  dirs.push(dir);
  return new IndexStore(dir);
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const cosine = (a: Float32Array, b: Float32Array) => exactDistance('cosine', a, b);

function fill(vs: VectorStore, store: IndexStore, vectors: Float32Array[], ids?: number[], batch = 2500): void {
  const docids = ids ?? vectors.map((_, i) => i);
  for (let start = 0; start < docids.length; start += batch) {
    store.write(() => {
      for (let i = start; i < Math.min(docids.length, start + batch); i++) vs.upsert(docids[i]!, [vectors[docids[i]!]!]);
    });
  }
}

function meanRecall(vs: VectorStore, vectors: Float32Array[], qs: Float32Array[], k = 10, filter?: Set<number>): number {
  let total = 0;
  for (const q of qs) {
    const bitmap = filter ? new RoaringBitmap32([...filter]) : undefined;
    const found = vs.search(q, k, bitmap).map((h) => h.docid);
    const truth = bruteForce(vectors, q, k, cosine, filter ? (i) => filter.has(i) : undefined);
    total += recall(found, truth);
  }
  return total / qs.length;
}

describe('vector store on a GloVe-100 subset (cosine)', () => {
  // The whole committed GloVe subset (15,000 rows of the full set before).
  const N = 6_000;
  const vectors = baseSubset(N);
  const qs = queries(150);
  let store: IndexStore;
  let vs: VectorStore;

  beforeAll(() => {
    store = tempStore();
    vs = new VectorStore(store, 'default', { dimensions: DIM, distance: 'cosine' });
    fill(vs, store, vectors);
    store.write(() => vs.flush());
  });

  test('recall@10 against brute force is at least 0.95', () => {
    expect(vs.count()).toBe(N);
    expect(vs.docids().size).toBe(N);
    expect(meanRecall(vs, vectors, qs)).toBeGreaterThanOrEqual(0.95);
  });

  test('distances are exact and similarity is (1 + cos) / 2', () => {
    const q = qs[0]!;
    const hits = vs.search(q, 5);
    for (const h of hits) {
      const cos = dot(normalized(q), normalized(vectors[h.docid]!));
      expect(h.distance).toBeCloseTo(1 - cos, 5);
      expect(h.similarity).toBeCloseTo((1 + cos) / 2, 5);
    }
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.distance).toBeGreaterThanOrEqual(hits[i - 1]!.distance);
  });

  test('filtered recall holds at selectivities 50%, 10%, 1% and 0.1%', () => {
    for (const selectivity of [0.5, 0.1, 0.01, 0.001]) {
      const allowed = new Set<number>();
      // A deterministic pseudo-random subset, unrelated to vector position.
      for (let i = 0; i < N; i++) if (((i * 2654435761) >>> 0) % 100_000 < selectivity * 100_000) allowed.add(i);
      const r = meanRecall(vs, vectors, qs.slice(0, 60), 10, allowed);
      expect(r, `selectivity ${selectivity}`).toBeGreaterThanOrEqual(0.95);
      const bitmap = new RoaringBitmap32([...allowed]);
      for (const h of vs.search(qs[0]!, 10, bitmap)) expect(allowed.has(h.docid)).toBe(true);
    }
  });

  test('a write transaction that throws leaves the graph as it was', () => {
    // A fixed beam: the tuner's own state moves with every search (probes, timings), the graph must not.
    const walk = (q: Float32Array) => vs.search(q, 10, undefined, { ef: 64 });
    const before = qs.slice(0, 20).map(walk);
    const count = vs.count();
    expect(() =>
      store.write(() => {
        for (let i = 0; i < 3000; i++) vs.delete(i);
        for (let i = 0; i < 5000; i++) vs.upsert(N + i, [vectors[i]!]);
        vs.flush();
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(vs.count()).toBe(count);
    expect(vs.get(0)[0]).toEqual(vectors[0]);
    expect(vs.get(N + 1)).toEqual([]);
    expect(qs.slice(0, 20).map(walk)).toEqual(before);
  });
});

describe('churn, restart and multi-vector documents', () => {
  test('deleting 30% then re-inserting keeps recall within one point', () => {
    const N = 6_000;
    const vectors = baseSubset(N);
    const qs = queries(100);
    const store = tempStore();
    const vs = new VectorStore(store, 'churn', { dimensions: DIM, distance: 'cosine' });
    fill(vs, store, vectors);
    store.write(() => vs.flush());
    const before = meanRecall(vs, vectors, qs);
    const removed = vectors.map((_, i) => i).filter((i) => i % 10 < 3);
    store.write(() => {
      for (const i of removed) vs.delete(i);
    });
    expect(vs.count()).toBe(N - removed.length);
    // Nothing deleted is ever returned, and the survivors are still found.
    const survivors = vectors.map((_, i) => i).filter((i) => i % 10 >= 3);
    const vs2 = survivors.map((i) => vectors[i]!);
    let mid = 0;
    for (const q of qs) {
      const found = vs.search(q, 10).map((h) => h.docid);
      for (const d of found) expect(d % 10).toBeGreaterThanOrEqual(3);
      mid += recall(found, bruteForce(vs2, q, 10, cosine).map((i) => survivors[i]!));
    }
    expect(mid / qs.length).toBeGreaterThanOrEqual(before - 0.01);
    fill(vs, store, vectors, removed);
    store.write(() => vs.flush());
    expect(vs.count()).toBe(N);
    const after = meanRecall(vs, vectors, qs);
    expect(after).toBeGreaterThanOrEqual(before - 0.01);
  }, 120_000);

  test('a store in the per-slot layout of earlier versions is read, and rewritten as blocks by its next write', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vector-legacy-'));
    dirs.push(dir);
    let store = new IndexStore(dir);
    const vectors = baseSubset(1003);
    // What a version before the blocks wrote for 1,000 one-vector documents and one with two
    // vectors, none merged yet and, as before pending vectors had codes, without codes.
    const meta = store.openDB<unknown, string>('vectors:e:meta', { encoding: 'msgpack' });
    const vec = store.openDB<Buffer, number>('vectors:e:vec', { keyEncoding: 'uint32', encoding: 'binary' });
    const docs = store.openDB<Buffer, number>('vectors:e:docs', { keyEncoding: 'uint32', encoding: 'binary' });
    const bytes = (a: ArrayLike<number>, type: typeof Float32Array | typeof Uint32Array) => Buffer.from(new type(Array.from(a)).buffer);
    store.write(() => {
      for (let slot = 0; slot < 1002; slot++) {
        vec.putSync(slot, bytes(vectors[slot]!, Float32Array));
        meta.putSync(`pending:${slot}`, true);
      }
      for (let d = 0; d < 1000; d++) docs.putSync(d, bytes([d], Uint32Array));
      docs.putSync(1000, bytes([1001, 1000], Uint32Array));
      const state = { version: 1, dimensions: DIM, distance: 'cosine', binaryQuantized: false, M: 16, efConstruction: 64, gen: 0.5, entry: -1, maxLevel: -1, nextSlot: 1002, scale: int8Scale(vectors.slice(0, 1000), 'cosine'), vectors: 1002 };
      meta.putSync('state', state);
      meta.putSync('gen', 0.5);
    });
    let vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    const check = (count = 1003) => {
      expect(vs.count()).toBe(count);
      for (const i of [3, 500, 999]) expect(vs.search(vectors[i]!, 1)[0]!.docid).toBe(i);
      expect(vs.get(1000)).toEqual([vectors[1001], vectors[1000]]);
    };
    check(1002);
    store.write(() => vs.upsert(2000, [vectors[1002]!]));
    const legacy = ['codes', 'links', 'docs'].map((n) => store.openDB(`vectors:e:${n}`, { keyEncoding: 'uint32', encoding: 'binary' }));
    for (const db of legacy) expect(db.getCount()).toBe(0);
    expect([...meta.getKeys({ start: 'pending:', end: 'pending:\uffff' })]).toEqual([]);
    await store.close();
    store = new IndexStore(dir);
    vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    check();
    expect(vs.search(vectors[1002]!, 1)[0]!.docid).toBe(2000);
    store.write(() => vs.flush());
    check();
    await store.close();
  });

  test('closing and reopening the environment restores graph and pending vectors', async () => {
    const vectors = baseSubset(6000);
    const qs = queries(50);
    const dir = mkdtempSync(join(tmpdir(), 'vector-restart-'));
    dirs.push(dir);
    let store = new IndexStore(dir);
    let vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    fill(vs, store, vectors.slice(0, 5000), undefined);
    store.write(() => vs.flush());
    // These stay in the temporary index: below the merge threshold, never flushed.
    store.write(() => {
      for (let i = 5000; i < 6000; i++) vs.upsert(i, [vectors[i]!]);
    });
    // A fixed beam: the tuner decides by timings too, and it starts afresh at each open.
    const walk = (q: Float32Array) => vs.search(q, 10, undefined, { ef: 64 });
    const before = qs.map(walk);
    const pendingHit = vs.search(vectors[5500]!, 1)[0]!;
    expect(pendingHit.docid).toBe(5500);
    await store.close();

    store = new IndexStore(dir);
    vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    expect(vs.count()).toBe(6000);
    expect(vs.search(vectors[5500]!, 1)[0]!.docid).toBe(5500);
    expect(qs.map(walk)).toEqual(before);
    expect(meanRecall(vs, vectors, qs)).toBeGreaterThanOrEqual(0.95);
    await store.close();

    // Warming the pages at open changes nothing but the page cache.
    process.env.VECTORSTORE_READER_PREFETCH_MEMORY = 'true';
    try {
      store = new IndexStore(dir);
      vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
      expect(qs.map(walk)).toEqual(before);
      await store.close();
    } finally {
      delete process.env.VECTORSTORE_READER_PREFETCH_MEMORY;
    }
  });

  test('deletions committed before their repair ran survive a restart: never found, slots reused cleanly', async () => {
    const vectors = baseSubset(4000);
    const qs = queries(40);
    const dir = mkdtempSync(join(tmpdir(), 'vector-deleted-restart-'));
    dirs.push(dir);
    let store = new IndexStore(dir);
    let vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    fill(vs, store, vectors.slice(0, 3000));
    store.write(() => vs.flush());
    // the graph is repaired around deleted vectors at the next search or merge: none runs before the restart
    const gone = Array.from({ length: 3000 }, (_, i) => i).filter((i) => i % 7 === 0);
    store.write(() => {
      for (const i of gone) vs.delete(i);
    });
    await store.close();
    store = new IndexStore(dir);
    vs = new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' });
    expect(vs.count()).toBe(3000 - gone.length);
    for (const q of qs) for (const h of vs.search(q, 10)) expect(h.docid % 7 === 0 && h.docid < 3000).toBe(false);
    // new documents take the freed slots
    store.write(() => {
      for (let i = 3000; i < 4000; i++) vs.upsert(i, [vectors[i]!]);
      vs.flush();
    });
    const live = Array.from({ length: 4000 }, (_, i) => i).filter((i) => i >= 3000 || i % 7 !== 0);
    const liveVectors = live.map((i) => vectors[i]!);
    let total = 0;
    for (const q of qs) total += recall(vs.search(q, 10).map((h) => h.docid), bruteForce(liveVectors, q, 10, cosine).map((j) => live[j]!));
    expect(total / qs.length).toBeGreaterThanOrEqual(0.95);
    for (const i of [3000, 3500, 3999]) expect(vs.search(vectors[i]!, 1)[0]!.docid).toBe(i);
    await store.close();
  });

  test('a document with several vectors is found by its closest one, once', () => {
    const vectors = baseSubset(3000);
    const store = tempStore();
    const vs = new VectorStore(store, 'multi', { dimensions: DIM, distance: 'cosine' });
    store.write(() => {
      for (let d = 0; d < 1000; d++) vs.upsert(d, [vectors[d]!, vectors[1000 + d]!, vectors[2000 + d]!]);
      vs.flush();
    });
    expect(vs.count()).toBe(3000);
    expect(vs.docids().size).toBe(1000);
    expect(vs.get(7)).toEqual([vectors[7], vectors[1007], vectors[2007]]);
    const hits = vs.search(vectors[2042]!, 10);
    expect(hits[0]!.docid).toBe(42);
    expect(hits[0]!.distance).toBeCloseTo(0, 5);
    expect(new Set(hits.map((h) => h.docid)).size).toBe(hits.length);
    store.write(() => vs.upsert(42, [vectors[5]!]));
    expect(vs.count()).toBe(2998);
    expect(vs.search(vectors[2042]!, 1)[0]!.docid).not.toBe(42);
    store.write(() => vs.delete(5));
    expect(vs.get(5)).toEqual([]);
    expect(vs.docids().has(5)).toBe(false);
    store.write(() => vs.clear());
    expect(vs.count()).toBe(0);
    expect(vs.search(vectors[0]!, 3)).toEqual([]);
  });

  test('documents with more vectors than the re-rank reads still fill k distinct documents, closest first (pending and linked)', () => {
    // 100 documents of 10 vectors each, close to one another: the best 20 candidates of a query
    // belong to two or three documents, so the search reads further than the re-rank's 20
    const base = baseSubset(100);
    const docVectors = base.map((v, d) =>
      Array.from({ length: 10 }, (_, j) => Float32Array.from(v, (x, i) => x + 0.002 * Math.sin(d * 131 + j * 17 + i))),
    );
    const closest = (q: Float32Array) =>
      docVectors
        .map((vs, d) => ({ d, dist: Math.min(...vs.map((v) => cosine(q, v))) }))
        .sort((a, b) => a.dist - b.dist || a.d - b.d)
        .slice(0, 10)
        .map((x) => x.d);
    const store = tempStore();
    const vs = new VectorStore(store, 'many', { dimensions: DIM, distance: 'cosine' });
    const check = () => {
      let found = 0;
      for (const q of queries(30)) {
        const hits = vs.search(q, 10);
        expect(hits).toHaveLength(10);
        expect(new Set(hits.map((h) => h.docid)).size).toBe(10);
        for (let i = 1; i < hits.length; i++) expect(hits[i]!.distance).toBeGreaterThanOrEqual(hits[i - 1]!.distance);
        const truth = new Set(closest(q));
        found += hits.filter((h) => truth.has(h.docid)).length;
      }
      expect(found / 300).toBeGreaterThanOrEqual(0.95);
    };
    store.write(() => {
      for (let d = 0; d < 100; d++) vs.upsert(d, docVectors[d]!);
    });
    check(); // pending vectors, scanned
    store.write(() => vs.flush());
    check(); // linked into a graph of 1,000 vectors, scanned
  });

  test('documents of one vector each, reopened and then given several, keep their vectors in order across restarts', async () => {
    const vectors = baseSubset(700);
    const dir = mkdtempSync(join(tmpdir(), 'vector-positions-'));
    dirs.push(dir);
    const open = () => {
      const store = new IndexStore(dir);
      return { store, vs: new VectorStore(store, 'e', { dimensions: DIM, distance: 'cosine' }) };
    };
    let { store, vs } = open();
    fill(vs, store, vectors.slice(0, 600));
    store.write(() => vs.flush());
    await store.close();
    // reopened with one vector per document, then documents get several
    ({ store, vs } = open());
    store.write(() => {
      vs.upsert(7, [vectors[600]!, vectors[601]!, vectors[602]!]);
      vs.upsert(8, [vectors[603]!, vectors[8]!]);
    });
    expect(vs.get(7)).toEqual([vectors[600], vectors[601], vectors[602]]);
    await store.close();
    ({ store, vs } = open());
    expect(vs.get(7)).toEqual([vectors[600], vectors[601], vectors[602]]);
    expect(vs.get(8)).toEqual([vectors[603], vectors[8]]);
    expect(vs.get(9)).toEqual([vectors[9]]);
    expect(vs.count()).toBe(600 + 2 + 1);
    expect(vs.search(vectors[601]!, 1)[0]!.docid).toBe(7);
    store.write(() => vs.upsert(7, [vectors[7]!]));
    await store.close();
    ({ store, vs } = open());
    expect(vs.get(7)).toEqual([vectors[7]]);
    expect(vs.get(8)).toEqual([vectors[603], vectors[8]]);
    await store.close();
  });

  test('a vector of the wrong dimension is refused', () => {
    const store = tempStore();
    const vs = new VectorStore(store, 'dims', { dimensions: 4, distance: 'cosine' });
    expect(() => store.write(() => vs.upsert(1, [new Float32Array(3)]))).toThrow(/4 dimensions/);
    expect(() => vs.search(new Float32Array(5), 1)).toThrow(/4 dimensions/);
  });

  test('vectors stored under another configuration read as empty and are dropped by the next write', () => {
    const store = tempStore();
    const four = new VectorStore(store, 'conf', { dimensions: 4, distance: 'cosine' });
    store.write(() => four.upsert(1, [Float32Array.of(1, 0, 0, 0)]));
    const three = new VectorStore(store, 'conf', { dimensions: 3, distance: 'cosine' });
    expect(three.count()).toBe(0);
    expect(three.search(Float32Array.of(1, 0, 0), 5)).toEqual([]);
    store.write(() => three.upsert(2, [Float32Array.of(0, 1, 0)]));
    const again = new VectorStore(store, 'conf', { dimensions: 3, distance: 'cosine' });
    expect(again.count()).toBe(1);
    expect(again.get(1)).toEqual([]);
    expect(again.search(Float32Array.of(0, 1, 0), 5).map((h) => h.docid)).toEqual([2]);
  });
});

describe('metrics', () => {
  const vectors = baseSubset(4000);
  const qs = queries(60);
  const cases: Array<[VectorStoreConfig, (a: Float32Array, b: Float32Array) => number, number]> = [
    [{ dimensions: DIM, distance: 'euclidean' }, (a, b) => Math.sqrt(squaredEuclidean(a, b)), 0.95],
    [{ dimensions: DIM, distance: 'dot' }, (a, b) => -dot(a, b), 0.95],
    [{ dimensions: DIM, distance: 'hamming' }, hammingFloat, 0.8],
    [{ dimensions: DIM, distance: 'cosine', binaryQuantized: true }, hammingFloat, 0.8],
  ];
  for (const [config, distance, minRecall] of cases) {
    test(`${config.distance}${config.binaryQuantized ? ' (binary quantized)' : ''}`, () => {
      // Scale the vectors so that euclidean and dot differ from cosine in order.
      const scaled = vectors.map((v, i) => v.map((x) => x * (1 + (i % 7) / 3)));
      const store = tempStore();
      const vs = new VectorStore(store, config.distance, config);
      fill(vs, store, scaled);
      store.write(() => vs.flush());
      let total = 0;
      for (const q of qs) {
        const hits = vs.search(q, 10);
        // Ties in hamming distance make several top-10 sets equally right: compare distances.
        const truth = bruteForce(scaled, q, 10, distance);
        const truthWorst = distance(q, scaled[truth[truth.length - 1]!]!);
        total += hits.filter((h) => h.distance <= truthWorst + 1e-6).length / 10;
        for (const h of hits) {
          expect(h.distance).toBeCloseTo(distance(q, scaled[h.docid]!), 3);
          expect(h.similarity).toBeGreaterThanOrEqual(0);
          expect(h.similarity).toBeLessThanOrEqual(1);
        }
      }
      expect(total / qs.length).toBeGreaterThanOrEqual(minRecall);
      if (config.binaryQuantized) {
        // One bit per dimension is stored: vectors come back as signs.
        const back = vs.get(3)[0]!;
        expect([...back].every((x) => x === 1 || x === -1)).toBe(true);
        expect([...back].map((x) => x > 0)).toEqual([...scaled[3]!].map((x) => x > 0));
        const raw = store.openDB<Buffer, number>(`vectors:${config.distance}:vec`, { keyEncoding: 'uint32', encoding: 'binary' }).getBinary(3)!;
        expect(raw.length).toBe(Math.ceil(DIM / 8));
      }
    });
  }
});
