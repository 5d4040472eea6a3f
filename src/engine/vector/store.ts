/**
 * One embedder's vector store inside an index's LMDB environment.
 *
 * Databases (all written in the caller's write transaction, `store.write(() => ...)`):
 *   vectors:<e>:meta    'state' -> {gen, entry, maxLevel, nextSlot, scale, ...}; 'gen' -> gen;
 *                       'pending:<slot>' -> true for vectors not yet linked in the graph
 *   vectors:<e>:vec     slot -> exact vector (f32 LE, or packed bits when binary quantized)
 *   vectors:<e>:codes   slot -> compact code the graph is traversed on (pending vectors' too)
 *   vectors:<e>:links   slot * 16 + layer -> neighbour slots (u32 LE)
 *   vectors:<e>:docs    docid -> slots of the document's vectors (u32 LE)
 *
 * RAM holds the codes and the neighbour lists as contiguous arrays (see graph.ts): they are
 * loaded from the databases when the store opens and kept equal to what is committed. Each
 * mutation writes a fresh generation token ('gen'); when the committed token differs from
 * the one in RAM (a write transaction threw and rolled back), RAM is reloaded from the store,
 * so an aborted transaction leaves the graph exactly as it was.
 *
 * New vectors are persisted at once, with their codes, and marked pending; searches scan their
 * codes exactly (pending.ts); they are linked into the graph when they reach a threshold (or on
 * `flush`), touching only the neighbourhoods they join. Deleted vectors leave
 * the graph in one repair pass before the next search or merge (their neighbours are re-linked
 * among their surviving neighbours), so searches never see them and no tombstone is kept.
 *
 * Searching: the query is coded like the vectors, the graph (or an exact scan of the codes, for
 * a small filter, a small graph, or a graph the walk serves badly: tuner.ts) and the scan of the
 * pending codes yield candidates by code distance, and the best of them are re-ranked with the
 * exact vectors read from the store.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'lmdb';
import { SearchError } from '../errors.js';
import { RoaringBitmap32, type Bitmap, type IndexStore } from '../index/store.js';
import { exactDistance, norm, similarity, type Distance } from './distance.js';
import { DocSlots } from './doc-slots.js';
import { Graph, type Scored } from './graph.js';
import { BUILD, efSearch, mergeThreshold, preferScan, rerankCount } from './params.js';
import { PendingSlots } from './pending.js';
import { int8Scale, packBits, Quantizer, unpackBits } from './quantizer.js';
import { QUERY_PTR } from './simd.js';
import { BeamTuner } from './tuner.js';

export interface VectorStoreConfig {
  dimensions: number;
  distance: Distance;
  binaryQuantized?: boolean;
}

export interface VectorHit {
  docid: number;
  distance: number;
  similarity: number;
}

interface State {
  version: 1;
  dimensions: number;
  distance: Distance;
  binaryQuantized: boolean;
  M: number;
  efConstruction: number;
  gen: number;
  entry: number;
  maxLevel: number;
  nextSlot: number;
  scale: number | null;
  /**
   * How many vectors the int8 scale was fitted on. The first batch fixes a provisional scale
   * (pending codes need one at once); the first merge refits it on a full sample. Absent in
   * stores written before: their scale is final.
   */
  scaleSample?: number;
  vectors: number;
}

/** Vectors the int8 scale is fitted on. */
const SCALE_SAMPLE = 2000;

const PENDING = 'pending:';
const LAYERS = 16;

function bytesOf(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Two closest-first candidate lists as one. */
function mergeScored(a: Scored | null, b: Scored | null): Scored {
  if (!a) return b ?? { ids: [], dists: [] };
  if (!b) return a;
  const ids: number[] = [];
  const dists: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.ids.length || j < b.ids.length) {
    if (j >= b.ids.length || (i < a.ids.length && a.dists[i]! <= b.dists[j]!)) {
      ids.push(a.ids[i]!);
      dists.push(a.dists[i++]!);
    } else {
      ids.push(b.ids[j]!);
      dists.push(b.dists[j++]!);
    }
  }
  return { ids, dists };
}

/** Environments whose pages were read ahead in this process. */
const prefetched = new Set<string>();

/**
 * Read the index environment's file ahead, in the background: the reads run on libuv's thread
 * pool and only fill the page cache that LMDB's memory map is served from, so the first searches
 * find the graph's pages resident, and neither startup nor searches wait for it. Once per
 * environment and process.
 */
function prefetch(dir: string): void {
  if (prefetched.has(dir)) return;
  prefetched.add(dir);
  const stream = createReadStream(join(dir, 'data.mdb'), { highWaterMark: 1 << 20 });
  stream.on('data', () => {});
  stream.on('error', () => {}); // a missing or unreadable file only means no read-ahead
}

function u32s(buf: Uint8Array): Uint32Array {
  const copy = new Uint8Array(buf.length);
  copy.set(buf);
  return new Uint32Array(copy.buffer, 0, buf.length >> 2);
}

export class VectorStore {
  readonly dimensions: number;
  readonly distance: Distance;
  readonly binaryQuantized: boolean;
  private readonly bits: boolean;
  private readonly meta: Database<any, string>;
  private readonly vec: Database<Buffer, number>;
  private readonly codes: Database<Buffer, number>;
  private readonly links: Database<Buffer, number>;
  private readonly docs: Database<Buffer, number>;

  // RAM mirror, rebuilt by `reload`
  private gen = -1;
  private state!: State;
  private quantizer!: Quantizer;
  private graph!: Graph;
  private pending!: PendingSlots;
  private readonly tuner = new BeamTuner();
  /** Slots of the current batch whose codes are not written yet (see `codeFresh`). */
  private uncoded: number[] = [];
  private docSlots = new DocSlots();
  private docBitmap: Bitmap = new RoaringBitmap32();
  private free: number[] = [];
  private limbo: number[] = [];
  /** Removed from their documents, still in the graph until `settle` repairs around them. */
  private doomed: number[] = [];
  /** The databases hold vectors of another configuration (see `reload`). */
  private stale = false;
  /** Stale by the distance alone: the vectors stay, the graph is linked again (see `relink`). */
  private relinkable = false;
  /** Inside `batch`: the merge check and the generation token wait for its end. */
  private batching = false;
  /** Pending slots added in the current batch, with their vectors (their pending keys are written at its end, if they stay pending). */
  private fresh = new Map<number, Float32Array>();
  private readonly scratch: Float32Array;
  private readonly scratchBytes: Uint8Array;

  constructor(
    private readonly store: IndexStore,
    readonly embedder: string,
    config: VectorStoreConfig,
  ) {
    this.dimensions = config.dimensions;
    this.distance = config.distance;
    this.binaryQuantized = config.binaryQuantized ?? false;
    this.bits = this.binaryQuantized || this.distance === 'hamming';
    const prefix = `vectors:${embedder}:`;
    this.meta = store.openDB(`${prefix}meta`, { encoding: 'msgpack' });
    this.vec = store.openDB(`${prefix}vec`, { keyEncoding: 'uint32', encoding: 'binary' });
    this.codes = store.openDB(`${prefix}codes`, { keyEncoding: 'uint32', encoding: 'binary' });
    this.links = store.openDB(`${prefix}links`, { keyEncoding: 'uint32', encoding: 'binary' });
    this.docs = store.openDB(`${prefix}docs`, { keyEncoding: 'uint32', encoding: 'binary' });
    this.scratch = new Float32Array(this.dimensions);
    this.scratchBytes = new Uint8Array(this.scratch.buffer);
    this.sync();
    if (process.env.VECTORSTORE_READER_PREFETCH_MEMORY === 'true') prefetch(store.path);
  }

  // --- public API -----------------------------------------------------------------------------

  /** Number of vectors stored (a document may have several). */
  count(): number {
    this.sync();
    return this.state.vectors;
  }

  /** Documents that have at least one vector. Shared: clone before mutating. */
  docids(): Bitmap {
    this.sync();
    return this.docBitmap;
  }

  get(docid: number): Float32Array[] {
    this.sync();
    return (this.docSlots.get(docid) ?? []).map((slot) => this.exact(slot));
  }

  /**
   * Run `fn`, a series of `upsert` and `delete` calls, as one update (call inside
   * `store.write`): the new vectors are merged into the graph once at the end, when they reach
   * the threshold, rather than as each one arrives; the vectors in hand are coded without being
   * read back, and those merged get no pending key.
   */
  batch(fn: () => void): void {
    if (this.batching) return fn();
    this.sync();
    this.dropStale();
    this.batching = true;
    try {
      fn();
      this.batching = false;
      this.codeFresh();
      if (this.pending.size >= mergeThreshold(this.graph.size)) this.merge();
      for (const slot of this.fresh.keys()) this.meta.putSync(PENDING + slot, true);
      this.fresh.clear();
      this.commitRam();
    } catch (error) {
      // RAM no longer matches what the transaction holds: reload on next use (and leave the
      // new vectors pending, should the caller commit what was written).
      this.batching = false;
      try {
        for (const slot of this.fresh.keys()) this.meta.putSync(PENDING + slot, true);
      } catch {
        // the transaction is failing anyway
      }
      this.fresh.clear();
      this.uncoded = [];
      this.gen = -3;
      throw error;
    }
  }

  /** Replace the vectors of `docid` (none removes it). Call inside `store.write`. */
  upsert(docid: number, vectors: Float32Array[]): void {
    if (!this.batching) return this.batch(() => this.upsert(docid, vectors));
    for (const v of vectors) this.checkDimensions(v);
    const old = this.docSlots.get(docid);
    if (old && this.sameVectors(old, vectors)) return;
    if (old) this.removeSlots(docid, old);
    const slots: number[] = [];
    for (const v of vectors) {
      const slot = this.allocate();
      this.vec.putSync(slot, this.encodeExact(v));
      this.fresh.set(slot, v);
      this.uncoded.push(slot);
      this.pending.add(slot);
      slots.push(slot);
    }
    if (slots.length > 0) {
      this.docs.putSync(docid, bytesOf(Uint32Array.from(slots)));
      this.docSlots.set(docid, slots);
      this.docBitmap.add(docid);
    }
    this.state.vectors += slots.length;
  }

  /** Remove every vector of `docid`. Call inside `store.write`. */
  delete(docid: number): void {
    if (!this.batching) return this.batch(() => this.delete(docid));
    const old = this.docSlots.get(docid);
    if (!old) return;
    this.removeSlots(docid, old);
  }

  /** Link every pending vector into the graph now (otherwise done at a threshold). */
  flush(): void {
    if (this.batching) return this.merge();
    this.sync();
    this.dropStale();
    this.merge();
    this.commitRam();
  }

  private dropStale(): void {
    if (!this.stale) return;
    if (this.relinkable) this.relink();
    else this.clear();
  }

  /**
   * The vectors were linked under another distance: keep them (and their documents), drop the
   * graph, and link them again with this one (they become pending and merge as new vectors do).
   */
  private relink(): void {
    const saved = this.meta.get('state') as State;
    for (const db of [this.codes, this.links, this.meta]) db.clearSync();
    const state = this.emptyState();
    state.nextSlot = saved.nextSlot;
    state.vectors = saved.vectors;
    this.reload(state);
    for (const { value } of this.docs.getRange()) {
      for (const slot of u32s(value)) {
        this.pending.add(slot);
        this.fresh.set(slot, this.exact(slot));
        this.uncoded.push(slot);
      }
    }
  }

  /** Drop every vector. Call inside `store.write`. */
  clear(): void {
    // clearSync joins the caller's write transaction (rolled back with it).
    for (const db of [this.vec, this.codes, this.links, this.docs, this.meta]) db.clearSync();
    this.gen = -1;
    this.sync();
  }

  /**
   * The `k` documents closest to `query`, restricted to `filter` when given. Distances are
   * exact; `similarity` maps them to [0, 1].
   */
  search(query: Float32Array, k: number, filter?: Bitmap, tuning: { ef?: number; rerank?: number } = {}): VectorHit[] {
    this.sync();
    this.checkDimensions(query);
    this.settle();
    if (k <= 0 || this.state.vectors === 0) return [];
    const graph = this.graph;
    const fixed = tuning.ef !== undefined;
    const ef = Math.max(k, tuning.ef ?? this.tuner.ef(efSearch(k, this.state.vectors)));
    let mask: Uint8Array | null = null;
    let allowedInGraph = 0;
    let scanList: number[] | undefined;
    if (filter) {
      mask = new Uint8Array(graph.cap);
      // Most documents have one vector: the filter's size predicts the choice, so the slots to
      // scan are collected in the same pass when a scan is likely.
      if (preferScan(filter.size, graph.size, ef, graph.M0)) scanList = [];
      allowedInGraph = this.docSlots.mark(filter.toUint32Array(), mask, graph.levels, scanList);
    }
    const qNorm = norm(query);
    const keep = tuning.rerank ?? rerankCount(k, ef);
    this.encodeQuery(query);
    const pending = this.pendingCandidates(ef, mask);
    const rank = (found: Scored | null) => this.rank(query, qNorm, k, keep, found, pending);
    let found: Scored | null = null;
    if (graph.size > 0 && (!mask || allowedInGraph > 0)) {
      if (mask) {
        found = preferScan(allowedInGraph, graph.size, ef, graph.M0)
          ? graph.scan(scanList ? Uint32Array.from(scanList) : this.maskedGraphSlots(mask, allowedInGraph), ef)
          : graph.search(ef, mask);
      } else if (preferScan(graph.size, graph.size, ef, graph.M0) || (!fixed && this.tuner.scans(graph.size))) {
        found = graph.scan(this.graphSlots(), ef);
      } else if (!fixed && this.tuner.probe(graph.size)) {
        return this.probe(ef, rank);
      } else {
        found = graph.search(ef);
      }
    }
    return rank(found);
  }

  /** Answer by the walk and by an exact scan, tell the tuner how the walk did, return the scan's answer. */
  private probe(ef: number, rank: (found: Scored | null) => VectorHit[]): VectorHit[] {
    const t0 = performance.now();
    const walked = rank(this.graph.search(ef));
    const t1 = performance.now();
    const exact = rank(this.graph.scan(this.graphSlots(), ef));
    const t2 = performance.now();
    const truth = new Set(exact.map((h) => h.docid));
    let found = 0;
    for (const h of walked) if (truth.has(h.docid)) found++;
    this.tuner.record(found, truth.size, t1 - t0, t2 - t1);
    return exact;
  }

  /** The best pending candidates by code distance (the query must be coded). */
  private pendingCandidates(ef: number, mask: Uint8Array | null): Scored | null {
    if (this.pending.size === 0) return null;
    let slots = this.pending.list();
    if (mask) slots = slots.filter((s) => mask[s] === 1);
    return slots.length === 0 ? null : this.graph.scan(slots, ef);
  }

  /**
   * The `k` best documents among code-ranked candidates: the best `keep` of them (graph and
   * pending together) re-ranked with exact vectors, further ones only while documents with
   * several vectors leave fewer than `k` distinct documents.
   */
  private rank(query: Float32Array, qNorm: number, k: number, keep: number, found: Scored | null, pending: Scored | null): VectorHit[] {
    const best = new Map<number, number>();
    const all = mergeScored(found, pending);
    if (this.bits) {
      // Bit codes are the stored vectors: their hamming distances are already exact.
      for (let i = 0; i < all.ids.length; i++) this.offer(best, all.ids[i]!, all.dists[i]!);
    } else {
      let i = 0;
      for (; i < all.ids.length && i < keep; i++) this.offer(best, all.ids[i]!, this.exactDistanceTo(query, qNorm, all.ids[i]!));
      for (; i < all.ids.length && best.size < k; i++) this.offer(best, all.ids[i]!, this.exactDistanceTo(query, qNorm, all.ids[i]!));
    }
    const similarityMetric: Distance = this.bits ? 'hamming' : this.distance;
    return [...best]
      .sort((a, b) => a[1] - b[1] || a[0] - b[0])
      .slice(0, k)
      .map(([docid, distance]) => ({ docid, distance, similarity: similarity(similarityMetric, distance, this.dimensions) }));
  }

  /** Every slot linked in the graph (cached per reload: the graph changes only in writes). */
  private linked: Uint32Array | null = null;
  private graphSlots(): Uint32Array {
    if (this.linked && this.linked.length === this.graph.size) return this.linked;
    const out = new Uint32Array(this.graph.size);
    let n = 0;
    for (let s = 0; s < this.graph.cap && n < out.length; s++) if (this.graph.has(s)) out[n++] = s;
    this.linked = out;
    return out;
  }

  // --- search helpers -------------------------------------------------------------------------

  private maskedGraphSlots(mask: Uint8Array, count: number): Uint32Array {
    const out = new Uint32Array(count);
    let n = 0;
    for (let s = 0; s < mask.length && n < count; s++) if (mask[s] && this.graph.has(s)) out[n++] = s;
    return out;
  }

  private encodeQuery(query: Float32Array): void {
    const bytes = this.graph.kernels.bytes;
    this.quantizer.encode(query, bytes, QUERY_PTR);
    this.graph.coded(QUERY_PTR);
  }

  /** Keep the best distance per document. */
  private offer(best: Map<number, number>, slot: number, distance: number): void {
    const docid = this.docSlots.docOf(slot);
    const prev = best.get(docid);
    if (prev === undefined || distance < prev) best.set(docid, distance);
  }

  private exactDistanceTo(query: Float32Array, qNorm: number, slot: number): number {
    const raw = this.vec.getBinaryFast(slot);
    if (!raw) return Infinity;
    if (this.binaryQuantized) {
      const q = new Uint8Array(Math.ceil(this.dimensions / 8));
      packBits(query, q);
      let h = 0;
      for (let i = 0; i < q.length; i++) {
        let x = q[i]! ^ raw[i]!;
        while (x) {
          x &= x - 1;
          h++;
        }
      }
      return h;
    }
    // getBinaryFast's buffer is reused by the next read and may be unaligned: copy to scratch.
    this.scratchBytes.set(raw.subarray(0, this.scratchBytes.length));
    return exactDistance(this.distance, query, this.scratch, qNorm);
  }

  private exact(slot: number): Float32Array {
    const raw = this.vec.getBinary(slot);
    if (!raw) return new Float32Array(this.dimensions);
    if (this.binaryQuantized) return unpackBits(raw, this.dimensions);
    const out = new Float32Array(this.dimensions);
    new Uint8Array(out.buffer).set(raw.subarray(0, this.dimensions * 4));
    return out;
  }

  private encodeExact(v: Float32Array): Buffer {
    if (this.binaryQuantized) {
      const out = Buffer.alloc(Math.ceil(this.dimensions / 8));
      packBits(v, out);
      return out;
    }
    return Buffer.from(new Float32Array(v).buffer);
  }

  private checkDimensions(v: Float32Array): void {
    if (v.length !== this.dimensions) {
      throw new SearchError(
        'invalid_vector_dimensions',
        `Expected a vector of ${this.dimensions} dimensions for embedder \`${this.embedder}\`, got ${v.length}.`,
      );
    }
  }

  private sameVectors(slots: number[], vectors: Float32Array[]): boolean {
    if (slots.length !== vectors.length) return false;
    for (let i = 0; i < slots.length; i++) {
      const stored = this.vec.getBinary(slots[i]!);
      if (!stored || !stored.equals(this.encodeExact(vectors[i]!))) return false;
    }
    return true;
  }

  // --- mutations ------------------------------------------------------------------------------

  private allocate(): number {
    const slot = this.free.pop() ?? this.state.nextSlot++;
    this.graph.ensure(slot + 1);
    return slot;
  }

  private removeSlots(docid: number, slots: number[]): void {
    const linked: number[] = [];
    for (const slot of slots) {
      this.vec.removeSync(slot);
      if (this.pending.has(slot)) {
        this.pending.remove(slot);
        if (!this.fresh.delete(slot)) this.meta.removeSync(PENDING + slot);
        this.codes.removeSync(slot);
        this.free.push(slot);
      } else {
        this.codes.removeSync(slot);
        linked.push(slot);
      }
    }
    this.doomed.push(...linked);
    this.docs.removeSync(docid);
    this.docSlots.delete(docid);
    this.docBitmap.remove(docid);
    this.state.vectors -= slots.length;
  }

  /** Link every pending vector into the graph, then recycle the slots of deleted vectors. */
  private merge(): void {
    this.settle();
    this.codeFresh();
    const slots = this.pending.slots().sort((a, b) => a - b);
    if (slots.length > 0) {
      this.refitScale(slots);
      for (const slot of slots) if (!this.fresh.has(slot)) this.meta.removeSync(PENDING + slot);
      this.graph.insertMany(slots);
      this.pending.clear();
      this.fresh.clear();
      this.linked = null;
    }
    this.graph.consolidate();
    this.free.push(...this.limbo);
    this.limbo = [];
  }

  /** Write the codes of the vectors added in this batch (fixing a provisional scale on the first). */
  private codeFresh(): void {
    if (this.uncoded.length === 0) return;
    if (this.state.scale === null) {
      const sample = this.uncoded.slice(0, SCALE_SAMPLE).map((slot) => this.fresh.get(slot)!);
      this.setScale(sample);
    }
    for (const slot of this.uncoded) if (this.fresh.has(slot)) this.writeCode(slot, this.fresh.get(slot)!);
    this.uncoded = [];
  }

  /**
   * Before the first merge: a scale fitted on a small first batch is refitted on a full sample,
   * and the pending codes rewritten with it, so the graph is built on codes of the final scale.
   */
  private refitScale(pending: number[]): void {
    const fitted = this.state.scaleSample;
    if (this.bits || this.graph.size > 0 || fitted === undefined || fitted >= SCALE_SAMPLE || pending.length <= fitted) return;
    const vector = (slot: number) => this.fresh.get(slot) ?? this.exact(slot);
    this.setScale(pending.slice(0, SCALE_SAMPLE).map(vector));
    for (const slot of pending) this.writeCode(slot, vector(slot));
  }

  private setScale(sample: Float32Array[]): void {
    this.state.scale = this.bits ? 1 : int8Scale(sample, this.distance);
    this.state.scaleSample = sample.length;
    this.quantizer.scale = this.state.scale;
  }

  /** Code `v` into the arena at `slot` and persist the code. */
  private writeCode(slot: number, v: Float32Array): void {
    const bytes = this.graph.kernels.bytes;
    const p = this.graph.kernels.codePtr(slot);
    this.quantizer.encode(v, bytes, p);
    this.graph.coded(p);
    this.codes.putSync(slot, Buffer.from(bytes.subarray(p, p + this.quantizer.stride)));
  }

  /**
   * Repair the graph around every vector removed since the last repair, in one pass: a batch
   * that deletes many documents repairs each affected neighbourhood once, not once per document.
   * Runs before any search or merge, so no search ever sees a removed vector; lists it changes
   * outside a write transaction are persisted by the next write.
   */
  private settle(): void {
    if (this.doomed.length === 0) return;
    this.graph.remove(this.doomed);
    this.linked = null;
    this.limbo.push(...this.doomed);
    this.doomed = [];
  }

  /** Persist the lists that changed and a new generation token (same transaction). */
  private commitRam(): void {
    const g = this.graph;
    for (const slot of g.dirty) {
      const level = g.levelFor(slot);
      if (g.has(slot)) {
        // copied: layer-0 lists are views of the kernels' shared memory, which LMDB cannot address
        for (let l = 0; l <= level; l++) this.links.putSync(slot * LAYERS + l, Buffer.from(bytesOf(g.links(slot, l))));
      } else {
        for (let l = 0; l <= level; l++) this.links.removeSync(slot * LAYERS + l);
      }
    }
    g.dirty.clear();
    this.state.entry = g.entry;
    this.state.maxLevel = g.maxLevel;
    this.state.gen = this.gen = Math.random();
    this.meta.putSync('state', this.state);
    this.meta.putSync('gen', this.gen);
  }

  // --- loading --------------------------------------------------------------------------------

  /** Reload RAM when the committed generation is not the one RAM was built from. */
  private sync(): void {
    // The token alone is read on every call (one small get); the state only on a mismatch.
    const gen = this.meta.get('gen') as number | undefined;
    if (gen === this.gen || (gen === undefined && this.gen === -2)) return;
    this.reload(this.meta.get('state') as State | undefined);
  }

  private emptyState(): State {
    return {
      version: 1,
      dimensions: this.dimensions,
      distance: this.distance,
      binaryQuantized: this.binaryQuantized,
      M: BUILD.M,
      efConstruction: BUILD.efConstruction,
      gen: -2,
      entry: -1,
      maxLevel: -1,
      nextSlot: 0,
      scale: null,
      vectors: 0,
    };
  }

  private reload(saved: State | undefined): void {
    // Vectors stored under another configuration (dimensions, distance, quantization) cannot be
    // searched with this one: the store reads as empty and the next write drops them.
    this.stale = !!saved && (saved.dimensions !== this.dimensions || saved.distance !== this.distance || saved.binaryQuantized !== this.binaryQuantized);
    this.relinkable = this.stale && saved!.dimensions === this.dimensions && saved!.binaryQuantized === this.binaryQuantized;
    if (this.stale) saved = undefined;
    const state: State = saved ? { ...saved } : this.emptyState();
    this.state = state;
    this.gen = this.stale ? (this.meta.get('gen') as number) : state.gen;
    this.quantizer = new Quantizer(this.distance, this.dimensions, this.binaryQuantized, state.scale ?? 1);
    const graph = new Graph(this.quantizer.stride, this.quantizer.metric, { M: state.M, efConstruction: state.efConstruction });
    graph.ensure(state.nextSlot);
    this.graph = graph;
    this.pending = new PendingSlots();
    this.linked = null;
    for (const key of this.meta.getKeys({ start: PENDING, end: PENDING + '\uffff' })) this.pending.add(Number((key as string).slice(PENDING.length)));
    this.docSlots = new DocSlots();
    this.docSlots.reserve(0, state.nextSlot);
    this.docBitmap = new RoaringBitmap32();
    const used = new Uint8Array(state.nextSlot);
    for (const { key, value } of this.docs.getRange()) {
      const slots = Array.from(u32s(value));
      this.docSlots.set(key, slots);
      this.docBitmap.add(key);
      for (const s of slots) used[s] = 1;
    }
    const stride = this.quantizer.stride;
    const coded = new Uint8Array(state.nextSlot);
    for (const { key, value } of this.codes.getRange()) {
      const p = graph.kernels.codePtr(key);
      graph.kernels.bytes.set(value.subarray(0, stride), p);
      graph.coded(p);
      coded[key] = 1;
      if (!this.pending.has(key)) graph.place(key, graph.levelFor(key));
    }
    // Stores written before pending vectors had codes: code them here (persisted by their merge).
    for (const slot of this.pending.slots()) {
      if (coded[slot]) continue;
      const p = graph.kernels.codePtr(slot);
      this.quantizer.encode(this.exact(slot), graph.kernels.bytes, p);
      graph.coded(p);
    }
    const orphans = new Set<number>();
    for (const { key, value } of this.links.getRange()) {
      const slot = Math.floor(key / LAYERS);
      if (graph.has(slot)) graph.setLinks(slot, key % LAYERS, u32s(value));
      else orphans.add(slot);
    }
    graph.entry = state.entry;
    graph.maxLevel = state.maxLevel;
    graph.dirty.clear();
    // Lists of vectors deleted before a repair ran are removed by the next write.
    for (const slot of orphans) graph.dirty.add(slot);
    if (!graph.has(graph.entry)) graph.electEntry();
    // Links to vectors deleted since the last merge must go before their slots are reused;
    // the lists changed here are persisted by the next write.
    graph.consolidate();
    this.fresh.clear();
    this.uncoded = [];
    this.free = [];
    for (let s = state.nextSlot - 1; s >= 0; s--) if (!used[s]) this.free.push(s);
    this.limbo = [];
    this.doomed = [];
  }

  /** RAM held by the graph, its codes and the pending index, in bytes (for stats and benchmarks). */
  get memoryBytes(): number {
    return this.graph.byteLength + this.docSlots.byteLength;
  }
}
