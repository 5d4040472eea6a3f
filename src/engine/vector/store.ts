/**
 * One embedder's vector store inside an index's LMDB environment.
 *
 * Databases (all written in the caller's write transaction, `store.write(() => ...)`):
 *   vectors:<e>:meta    'state' -> {gen, entry, maxLevel, nextSlot, scale, layout, ...}; 'gen' -> gen
 *   vectors:<e>:vec     slot -> exact vector (f32 LE, or packed bits when binary quantized)
 *   vectors:<e>:segments  segment -> codes and layer-0 lists of a fixed range of slots, one
 *                       value of >= 16 MiB each (segments.ts), read in place through the map
 *   vectors:<e>:blocks  block * 4 + kind -> the records of BLOCK consecutive slots:
 *                         CODES   the slots' compact codes (pending vectors' too), arena rows  } the overlay:
 *                         LINKS   layer-0 neighbour counts (u8 each), then lists (M0 u32 each) } newer than the segment
 *                         UPPER   for each slot of the block with upper layers: slot, level,
 *                                 then its lists (count + M u32 per layer)
 *                         OWNERS  per slot: docid (u32, 0xffffffff when free), position in the
 *                                 document's vectors (u16), flags (u16: 1 = pending)
 * Layout 2 (before the segments) kept every block's CODES and LINKS; stores written before the
 * blocks (no `layout`) kept one key per slot in `codes`, `links` (slot * 16 + layer), `docs`
 * (docid -> slots) and 'pending:<slot>' keys in meta. Both are read as they are and rewritten by
 * their next write.
 *
 * Two ways to hold the graph, one per side:
 * - Searching (`view`, mapped-graph.ts): codes and lists are viewed in the segments under a held
 *   read snapshot (lmdb-js views values of >= 16 MiB in the map instead of copying them; the
 *   pages stay valid while the snapshot is held, even when a writer replaces them), the overlay
 *   blocks are copied; levels come from the owners. Anonymous memory does not grow with the
 *   codes and lists, and opening reads a few values per thousand vectors.
 * - Writing (`graph`, graph.ts): codes and lists in WebAssembly memory, where merges (with a
 *   helper thread) and repairs run; loaded by the first write, dropped after ARENA_IDLE_MS.
 * Each write persists the blocks it changed (the overlay grows) and, past a threshold, folds the
 * overlay into fresh segments; the state and a fresh generation token ('gen') go in the same
 * transaction. Either side reloads when the committed token differs from its own (a commit by
 * the other side, or a write transaction that threw and rolled back), so an aborted transaction
 * leaves the graph exactly as it was.
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
import type { Database, Transaction } from 'lmdb';

/** Reads through a held snapshot. */
type ReadOptions = { transaction: Transaction };
/** lmdb-js reads `transaction` in the options of every get (its typings declare it for `get` only). */
type BinaryReads = { getBinaryFast(id: number, options?: ReadOptions): Buffer | undefined; getBinary(id: number, options?: ReadOptions): Buffer | undefined };
const reads = (db: Database<Buffer, number>) => db as unknown as BinaryReads;
import { SearchError } from '../errors.js';
import { RoaringBitmap32, type Bitmap, type IndexStore } from '../index/store.js';
import { exactDistance, norm, similarity, type Distance } from './distance.js';
import { DocSlots, NO_OWNER, SlotOwners } from './doc-slots.js';
import { arenaStrideFor, Graph, levelMult, levelOf, type Scored } from './graph.js';
import { MappedGraph } from './mapped-graph.js';
import { BUILD, efSearch, mergeThreshold, preferScan, rerankCount } from './params.js';
import { PendingSlots } from './pending.js';
import { int8Scale, packBits, Quantizer, unpackBits } from './quantizer.js';
import { QUERY_PTR } from './simd.js';
import { BLOCK, blockBytes, blocksFor, segmentFrom, segmentLayout, SHIFT } from './segments.js';
import { BeamTuner } from './tuner.js';

export interface VectorStoreConfig {
  dimensions: number;
  distance: Distance;
  binaryQuantized?: boolean;
  /** Store size (codes and lists, bytes) from which the overlay is folded into segments: tests lower it (default FOLD_MIN_TOTAL). */
  foldMinBytes?: number;
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
  /**
   * 3: codes and layer-0 lists in segments plus an overlay of blocks, owners and upper layers in
   * blocks; 2: everything in blocks; absent: one key per slot (see the header).
   */
  layout?: 2 | 3;
  /** Slots per segment (layout 3), and how many segments are written (they cover [0, segments * segSlots)). */
  segSlots?: number;
  segments?: number;
  /** Bytes per slot in a CODES block (the arena's row: the code, and its norm for l2). */
  codeStride?: number;
  /** False when lists may name absent slots (a removal not repaired yet): swept at load. */
  clean?: boolean;
}

/** Searches `warm` runs to compile the search code before the first real one. */
const WARM_SEARCHES = 16;

/** Vectors the int8 scale is fitted on. */
const SCALE_SAMPLE = 2000;

/** Legacy layout: 'pending:<slot>' keys in meta. */
const PENDING = 'pending:';
/** Legacy layout: links keyed slot * LAYERS + layer. */
const LAYERS = 16;

const CODES = 0;
const LINKS = 1;
const UPPER = 2;
const OWNERS = 3;
const OWNER_BYTES = 8;
const FLAG_PENDING = 1;
const blockKey = (block: number, kind: number) => block * 4 + kind;
const align8 = (n: number) => Math.ceil(n / 8) * 8;

/** Stores smaller than this (codes and lists) keep them in blocks only: read into memory, they cost less than a segment. */
const FOLD_MIN_TOTAL = 4 << 20;
/** The overlay is folded into segments when it holds more than this, or more than 1/8 of the store. */
const FOLD_MAX = 16 << 20;
/** The writer drops its arena after this long without a write (a serving process's memory must not grow with the index). */
const ARENA_IDLE_MS = 5000;
/** How often a reader holding a snapshot checks for a newer one (a held snapshot keeps LMDB from reusing the pages freed since). */
const SNAPSHOT_CHECK_MS = 1000;

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
  private readonly blocks: Database<Buffer, number>;
  private readonly segments: Database<Buffer, number>;
  private readonly prefix: string;
  /** Blocks changed since the last commit, by kind (links and upper layers: `graph.dirty`). */
  private readonly dirtyCodes = new Set<number>();
  private readonly dirtyOwners = new Set<number>();
  /** RAM was loaded from the legacy layout: the next write rewrites everything as blocks. */
  private relayout = false;

  // RAM mirror, rebuilt by `reload`
  private gen = -1;
  private state!: State;
  private quantizer!: Quantizer;
  /** The writer's graph, in the WebAssembly arena: loaded for writes, dropped when idle. */
  private graph: Graph | null = null;
  /** The searching side's graph, read through the memory map under `snapshot` (when `graph` is not loaded). */
  private view: MappedGraph | null = null;
  /** The read transaction that keeps the view's pages valid. */
  private snapshot: { done(): void } | null = null;
  /** Bytes of the overlay blocks the view copied into memory. */
  private viewBytes = 0;
  private snapshotTimer: NodeJS.Timeout | null = null;
  /** A write wants the arena: `sync` loads it rather than the view. */
  private arenaWanted = false;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Writer: blocks whose codes / lists are in the overlay (keys in `blocks`) rather than only in a segment. */
  private readonly overlayCodes = new Set<number>();
  private readonly overlayLinks = new Set<number>();
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
  private readonly foldMinBytes: number;
  private readonly scratchBytes: Uint8Array;

  constructor(
    private readonly store: IndexStore,
    readonly embedder: string,
    config: VectorStoreConfig,
  ) {
    this.dimensions = config.dimensions;
    this.distance = config.distance;
    this.binaryQuantized = config.binaryQuantized ?? false;
    this.foldMinBytes = config.foldMinBytes ?? FOLD_MIN_TOTAL;
    this.bits = this.binaryQuantized || this.distance === 'hamming';
    const prefix = (this.prefix = `vectors:${embedder}:`);
    this.meta = store.openDB(`${prefix}meta`, { encoding: 'msgpack' });
    this.vec = store.openDB(`${prefix}vec`, { keyEncoding: 'uint32', encoding: 'binary' });
    this.blocks = store.openDB(`${prefix}blocks`, { keyEncoding: 'uint32', encoding: 'binary' });
    this.segments = store.openDB(`${prefix}segments`, { keyEncoding: 'uint32', encoding: 'binary' });
    this.scratch = new Float32Array(this.dimensions);
    this.scratchBytes = new Uint8Array(this.scratch.buffer);
    this.sync();
    if (process.env.VECTORSTORE_READER_PREFETCH_MEMORY === 'true') prefetch(store.path);
  }

  // --- public API -----------------------------------------------------------------------------

  /**
   * Load the codes and the graph now if a commit changed them since (the first search would),
   * then run the search code on a few stored vectors: a fresh process compiles the walk, the
   * scan and the kernels at their first use, which would otherwise land on the first search.
   * Reads only: the beam tuner learns nothing from these. Returns a stored vector, for a search
   * through the whole search path (see IndexExtension.warm).
   */
  warm(): Float32Array | undefined {
    this.sync();
    const g = this.walker;
    if (g.size === 0) return undefined;
    // stored vectors spread over the slots (the first in the graph from a few places)
    const sample = (i: number): number => {
      for (let s = (i * 7919) % g.cap, n = 0; n < g.cap; n++, s = (s + 1) % g.cap) if (g.has(s)) return s;
      return 0;
    };
    const ef = efSearch(10, this.state.vectors);
    for (let i = 0; i < WARM_SEARCHES; i++) this.search(this.exact(sample(i)), 10, undefined, { ef });
    this.scanGraph(ef);
    this.unprobed = 1;
    return this.exact(sample(0));
  }

  /** Searches to come that the tuner does not count: the engine's warm-up search (see `warm`). */
  private unprobed = 0;

  /**
   * True when searches read the codes and lists through the memory map (segments and overlay),
   * false while the writer's arena is loaded (for tests and benchmarks).
   */
  get mapped(): boolean {
    this.sync();
    return this.graph === null;
  }

  /** Segments written (each at least 16 MiB, read in place by searches). */
  get segmentCount(): number {
    this.sync();
    return this.state.segments ?? 0;
  }

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
    this.wantArena();
    this.sync();
    this.dropStale();
    this.batching = true;
    try {
      fn();
      this.batching = false;
      this.codeFresh();
      if (this.pending.size >= mergeThreshold(this.arena.size)) this.merge();
      this.fresh.clear();
      this.commitRam();
      this.idleSoon();
    } catch (error) {
      // RAM no longer matches what the transaction holds: reload on next use (and persist what
      // RAM holds, marked for a sweep at load, should the caller commit what was written).
      this.batching = false;
      try {
        this.codeFresh();
        this.commitRam(false);
      } catch {
        // the transaction is failing anyway
      }
      this.fresh.clear();
      this.uncoded = [];
      this.gen = -3;
      this.idleSoon();
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
      this.dirtyOwners.add(slot >>> SHIFT);
      this.fresh.set(slot, v);
      this.uncoded.push(slot);
      this.pending.add(slot);
      slots.push(slot);
    }
    if (slots.length > 0) {
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
    this.wantArena();
    this.sync();
    this.dropStale();
    this.merge();
    this.commitRam();
    this.idleSoon();
  }

  /** The writer's graph (loaded by `wantArena` then `sync`). */
  private get arena(): Graph {
    return this.graph!;
  }

  /** The graph searches walk: the arena while the writer holds it, else the view of the map. */
  private get walker(): Graph | MappedGraph {
    return this.graph ?? this.view!;
  }

  /** Writes need the arena: load it (at the next `sync`) if it is not. */
  private wantArena(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.arenaWanted && this.graph) return;
    this.arenaWanted = true;
    this.gen = Number.NaN;
  }

  /**
   * Drop the arena after a while without writes: what the writer loaded for its merges (codes and
   * lists of every vector) is not kept by an idle process; the next use reads the map again.
   */
  private idleSoon(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.batching) return;
      this.arenaWanted = false;
      this.graph = null;
      this.gen = Number.NaN;
    }, ARENA_IDLE_MS);
    this.idleTimer.unref();
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
    const owners = saved.layout === 2 || saved.layout === 3 ? this.readOwners(saved.nextSlot) : this.readLegacyOwners(saved.nextSlot);
    this.blocks.clearSync();
    this.segments.clearSync();
    this.meta.clearSync();
    if (saved.layout !== 2 && saved.layout !== 3) this.dropLegacy();
    const state = this.emptyState();
    state.nextSlot = saved.nextSlot;
    state.vectors = saved.vectors;
    this.reload(state);
    this.adoptOwners(owners.owner, owners.position, saved.nextSlot);
    for (let slot = 0; slot < saved.nextSlot; slot++) {
      if (owners.owner.get(slot) === NO_OWNER) continue;
      this.pending.add(slot);
      this.fresh.set(slot, this.exact(slot));
      this.uncoded.push(slot);
      this.dirtyOwners.add(slot >>> SHIFT);
    }
  }

  /** Drop every vector. Call inside `store.write`. */
  clear(): void {
    // clearSync joins the caller's write transaction (rolled back with it).
    const saved = this.meta.get('state') as State | undefined;
    if (saved && saved.layout !== 2 && saved.layout !== 3) this.dropLegacy();
    for (const db of [this.vec, this.blocks, this.segments, this.meta]) db.clearSync();
    this.wantArena();
    this.sync();
    this.idleSoon();
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
    const graph = this.walker;
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
    // Exact scans keep only the candidates the re-rank reads, not ef of them: keeping the best
    // ef of 50,000 codes (a heap of ef, then its drain) cost as much as scoring them once the
    // tuner had widened the beam. Bit codes re-rank every candidate (their distances are exact).
    // Should documents with several vectors leave fewer than k documents among them, the search
    // runs again with scans of ef, as before: the answers are the same either way.
    const hits = this.answer(graph, k, ef, this.bits ? ef : keep, fixed, mask, allowedInGraph, scanList, query, qNorm, keep);
    if (!this.truncated || !this.rankedPastKeep) return hits;
    return this.answer(graph, k, ef, ef, fixed, mask, allowedInGraph, scanList, query, qNorm, keep);
  }

  /** Set by `answer`: one of its scans stopped at its depth, short of ef. */
  private truncated = false;
  /** Set by `rank`: the best `keep` candidates held fewer than k documents, so it read further. */
  private rankedPastKeep = false;

  /** The candidates of `search` (scans kept to `depth`), ranked. */
  private answer(
    graph: Graph | MappedGraph,
    k: number,
    ef: number,
    depth: number,
    fixed: boolean,
    mask: Uint8Array | null,
    allowedInGraph: number,
    scanList: number[] | undefined,
    query: Float32Array,
    qNorm: number,
    keep: number,
  ): VectorHit[] {
    this.truncated = false;
    const scanned = (s: Scored): Scored => {
      if (depth < ef && s.ids.length >= depth) this.truncated = true;
      return s;
    };
    const pending = this.pendingCandidates(depth, mask);
    if (pending) scanned(pending);
    const rank = (found: Scored | null) => this.rank(query, qNorm, k, keep, found, pending);
    let found: Scored | null = null;
    if (graph.size > 0 && (!mask || allowedInGraph > 0)) {
      if (mask) {
        found = preferScan(allowedInGraph, graph.size, ef, graph.M0)
          ? scanned(graph.scan(scanList ? Uint32Array.from(scanList) : this.maskedGraphSlots(mask, allowedInGraph), depth))
          : graph.search(ef, mask);
      } else if (preferScan(graph.size, graph.size, ef, graph.M0)) {
        found = scanned(this.scanGraph(depth));
      } else if (!fixed && this.tuner.scans(graph.size)) {
        if (this.tuner.probe(graph.size)) return this.probe(ef, depth, rank, scanned);
        found = scanned(this.scanGraph(depth));
      } else if (this.unprobed > 0) {
        this.unprobed--;
        found = graph.search(ef);
      } else if (!fixed && this.tuner.probe(graph.size)) {
        return this.probe(ef, depth, rank, scanned);
      } else {
        found = graph.search(ef);
      }
    }
    return rank(found);
  }

  /** Answer by the walk and by an exact scan, tell the tuner how the walk did, return the scan's answer. */
  private probe(ef: number, depth: number, rank: (found: Scored | null) => VectorHit[], scanned: (s: Scored) => Scored): VectorHit[] {
    const t0 = performance.now();
    const walked = rank(this.walker.search(ef));
    const t1 = performance.now();
    const exact = rank(scanned(this.scanGraph(depth)));
    const t2 = performance.now();
    const truth = new Set(exact.map((h) => h.docid));
    let found = 0;
    for (const h of walked) if (truth.has(h.docid)) found++;
    this.tuner.record(found, truth.size, t1 - t0, t2 - t1);
    return exact;
  }

  /** The best `depth` pending candidates by code distance (the query must be coded). */
  private pendingCandidates(depth: number, mask: Uint8Array | null): Scored | null {
    if (this.pending.size === 0) return null;
    let slots = this.pending.list();
    if (mask) slots = slots.filter((s) => mask[s] === 1);
    return slots.length === 0 ? null : this.walker.scan(slots, depth);
  }

  /**
   * The `k` best documents among code-ranked candidates: the best `keep` of them (graph and
   * pending together) re-ranked with exact vectors, further ones only while documents with
   * several vectors leave fewer than `k` distinct documents.
   */
  private rank(query: Float32Array, qNorm: number, k: number, keep: number, found: Scored | null, pending: Scored | null): VectorHit[] {
    this.rankedPastKeep = false;
    const best = new Map<number, number>();
    const all = mergeScored(found, pending);
    if (this.bits) {
      // Bit codes are the stored vectors: their hamming distances are already exact.
      for (let i = 0; i < all.ids.length; i++) this.offer(best, all.ids[i]!, all.dists[i]!);
    } else {
      let i = 0;
      for (; i < all.ids.length && i < keep; i++) this.offer(best, all.ids[i]!, this.exactDistanceTo(query, qNorm, all.ids[i]!));
      this.rankedPastKeep = best.size < k;
      for (; i < all.ids.length && best.size < k; i++) this.offer(best, all.ids[i]!, this.exactDistanceTo(query, qNorm, all.ids[i]!));
    }
    const similarityMetric: Distance = this.bits ? 'hamming' : this.distance;
    return [...best]
      .sort((a, b) => a[1] - b[1] || a[0] - b[0])
      .slice(0, k)
      .map(([docid, distance]) => ({ docid, distance, similarity: similarity(similarityMetric, distance, this.dimensions) }));
  }

  /** Exact scan of every slot in the graph: the view scans its blocks, the arena its slots. */
  private scanGraph(ef: number): Scored {
    return this.graph ? this.graph.scan(this.graphSlots(), ef) : this.view!.scanAll(ef);
  }

  /** Every slot linked in the graph (cached per reload: the graph changes only in writes). */
  private linked: Uint32Array | null = null;
  private graphSlots(): Uint32Array {
    const g = this.walker;
    if (this.linked && this.linked.length === g.size) return this.linked;
    const out = new Uint32Array(g.size);
    let n = 0;
    for (let s = 0; s < g.cap && n < out.length; s++) if (g.has(s)) out[n++] = s;
    this.linked = out;
    return out;
  }

  // --- search helpers -------------------------------------------------------------------------

  private maskedGraphSlots(mask: Uint8Array, count: number): Uint32Array {
    const out = new Uint32Array(count);
    let n = 0;
    const g = this.walker;
    for (let s = 0; s < mask.length && n < count; s++) if (mask[s] && g.has(s)) out[n++] = s;
    return out;
  }

  private encodeQuery(query: Float32Array): void {
    if (!this.graph) {
      this.quantizer.encode(query, this.view!.queryCode, 0);
      this.view!.queryCoded();
      return;
    }
    this.quantizer.encode(query, this.graph.kernels.bytes, QUERY_PTR);
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
    // a view: the put copies it (the vectors come parsed into arrays of their own)
    return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
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
    // whole blocks, so that a block is always one contiguous piece of the arena
    this.arena.ensure(blocksFor(slot + 1) * BLOCK);
    return slot;
  }

  private removeSlots(docid: number, slots: number[]): void {
    const linked: number[] = [];
    for (const slot of slots) {
      this.vec.removeSync(slot);
      this.dirtyOwners.add(slot >>> SHIFT);
      if (this.pending.has(slot)) {
        this.pending.remove(slot);
        this.fresh.delete(slot);
        this.free.push(slot);
      } else {
        linked.push(slot);
      }
    }
    this.doomed.push(...linked);
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
      for (const slot of slots) this.dirtyOwners.add(slot >>> SHIFT);
      this.arena.insertMany(slots);
      this.pending.clear();
      this.fresh.clear();
      this.linked = null;
    }
    this.arena.consolidate();
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
    if (this.bits || this.arena.size > 0 || fitted === undefined || fitted >= SCALE_SAMPLE || pending.length <= fitted) return;
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
    const bytes = this.arena.kernels.bytes;
    const p = this.arena.kernels.codePtr(slot);
    this.quantizer.encode(v, bytes, p);
    this.arena.coded(p);
    this.dirtyCodes.add(slot >>> SHIFT);
  }

  /**
   * Repair the graph around every vector removed since the last repair, in one pass: a batch
   * that deletes many documents repairs each affected neighbourhood once, not once per document.
   * Runs before any search or merge, so no search ever sees a removed vector; lists it changes
   * outside a write transaction are persisted by the next write.
   */
  private settle(): void {
    if (this.doomed.length === 0 || !this.graph) return;
    this.graph.remove(this.doomed);
    this.linked = null;
    this.limbo.push(...this.doomed);
    this.doomed = [];
  }

  /**
   * Persist the blocks that changed, the state and a new generation token (same transaction).
   * Changed codes and lists go to the overlay (one small value per block); when it has grown,
   * it is folded into fresh segments (`fold`), in the same transaction.
   * `clean`: false when RAM may be mid-operation (a failing batch): the next load sweeps lists.
   */
  private commitRam(clean = true): void {
    const g = this.arena;
    const links = new Set<number>();
    const uppers = new Set<number>();
    for (const slot of g.dirty) {
      links.add(slot >>> SHIFT);
      if (g.levelFor(slot) > 0) uppers.add(slot >>> SHIFT);
    }
    g.dirty.clear();
    if (this.relayout) {
      // loaded from another layout: everything is written again, the old keys go
      this.dropLegacy();
      this.segments.clearSync();
      this.state.segments = 0;
      for (let b = 0; b < blocksFor(this.state.nextSlot); b++) {
        this.dirtyCodes.add(b);
        this.dirtyOwners.add(b);
        links.add(b);
        uppers.add(b);
      }
      this.relayout = false;
    }
    for (const b of this.dirtyCodes) {
      this.blocks.putSync(blockKey(b, CODES), this.codeBlock(b));
      this.overlayCodes.add(b);
    }
    for (const b of links) {
      this.blocks.putSync(blockKey(b, LINKS), this.linkBlock(b));
      this.overlayLinks.add(b);
    }
    for (const b of uppers) {
      const value = this.upperBlock(b);
      if (value) this.blocks.putSync(blockKey(b, UPPER), value);
      else this.blocks.removeSync(blockKey(b, UPPER));
    }
    for (const b of this.dirtyOwners) this.blocks.putSync(blockKey(b, OWNERS), this.ownerBlock(b));
    this.dirtyCodes.clear();
    this.dirtyOwners.clear();
    this.fold();
    this.state.layout = 3;
    this.state.codeStride = g.arenaStride;
    this.state.clean = clean && this.doomed.length === 0 && g.isClean;
    this.state.entry = g.entry;
    this.state.maxLevel = g.maxLevel;
    this.state.gen = this.gen = Math.random();
    this.meta.putSync('state', this.state);
    this.meta.putSync('gen', this.gen);
  }

  /**
   * Fold the overlay into segments when it holds more than FOLD_MAX or 1/8 of the store: every
   * segment with an overlay block is written again from the arena and its overlay keys go.
   * Stores under FOLD_MIN_TOTAL keep blocks only (a reader copies them: a few MiB at most).
   */
  private fold(): void {
    const g = this.arena;
    const lay = segmentLayout(g.arenaStride, g.M0);
    const sizes = blockBytes(lay.row, lay.M0);
    const total = this.state.nextSlot * (sizes.codes + sizes.links) / BLOCK;
    if (total < this.foldMinBytes) return;
    const overlay = this.overlayCodes.size * sizes.codes + this.overlayLinks.size * sizes.links;
    if (overlay <= Math.min(FOLD_MAX, total / 8)) return;
    const per = lay.slots / BLOCK;
    const touched = new Set<number>();
    for (const b of this.overlayCodes) touched.add(Math.floor(b / per));
    for (const b of this.overlayLinks) touched.add(Math.floor(b / per));
    let segments = this.state.segments ?? 0;
    for (const seg of touched) {
      this.segments.putSync(seg, segmentFrom(g, seg, lay));
      segments = Math.max(segments, seg + 1);
    }
    for (const b of this.overlayCodes) this.blocks.removeSync(blockKey(b, CODES));
    for (const b of this.overlayLinks) this.blocks.removeSync(blockKey(b, LINKS));
    this.overlayCodes.clear();
    this.overlayLinks.clear();
    this.state.segSlots = lay.slots;
    this.state.segments = segments;
  }

  // --- blocks ---------------------------------------------------------------------------------

  /** The arena rows of a block's slots (copied: LMDB cannot address the kernels' memory). */
  private codeBlock(b: number): Buffer {
    const k = this.arena.kernels;
    const start = k.codePtr(b * BLOCK);
    return Buffer.from(k.bytes.subarray(start, start + BLOCK * this.arena.arenaStride));
  }

  private linkBlock(b: number): Buffer {
    const g = this.arena;
    const out = Buffer.allocUnsafe(BLOCK + BLOCK * g.M0 * 4);
    out.set(g.l0n.subarray(b * BLOCK, (b + 1) * BLOCK), 0);
    out.set(new Uint8Array(g.l0.buffer, g.l0.byteOffset + b * BLOCK * g.M0 * 4, BLOCK * g.M0 * 4), BLOCK);
    return out;
  }

  /** The upper-layer lists of the block's slots, or null when none has any. */
  private upperBlock(b: number): Buffer | null {
    const g = this.arena;
    const parts: number[] = [];
    for (let s = b * BLOCK; s < (b + 1) * BLOCK; s++) {
      if (!g.has(s) || g.levels[s]! <= 0) continue;
      parts.push(s, g.levels[s]!, ...g.upper[s]!);
    }
    return parts.length === 0 ? null : bytesOf(Uint32Array.from(parts));
  }

  private ownerBlock(b: number): Buffer {
    const out = Buffer.alloc(BLOCK * OWNER_BYTES);
    for (let i = 0; i < BLOCK; i++) {
      const s = b * BLOCK + i;
      const owner = this.docSlots.ownerOf(s);
      out.writeUInt32LE(owner, i * OWNER_BYTES);
      if (owner === NO_OWNER) continue;
      out.writeUInt16LE(this.docSlots.positionOf(s), i * OWNER_BYTES + 4);
      out.writeUInt16LE(this.pending.has(s) ? FLAG_PENDING : 0, i * OWNER_BYTES + 6);
    }
    return out;
  }

  /**
   * Owner and position of every slot below `slots`, and the pending slots, from the OWNERS
   * blocks, read in place (lmdb-js's reused buffer: no copy per block). What is made is what is
   * kept: the owners by blocks (SlotOwners: one offset for a block of consecutive documents), the
   * positions only once one is not 0 (else empty, see DocSlots.load). Temporary arrays of a few
   * bytes per vector, made and dropped at every open, were what the allocator kept of a serving
   * process's open at 500,000 vectors (bench/README.md).
   */
  private readOwners(slots: number, read?: ReadOptions): { owner: SlotOwners; position: Uint16Array; pending: number[] } {
    const blocks = blocksFor(slots);
    const owner = new SlotOwners(blocks);
    const one = new Uint32Array(BLOCK);
    let position = new Uint16Array(0);
    const pending: number[] = [];
    for (let b = 0; b < blocks; b++) {
      const raw = reads(this.blocks).getBinaryFast(blockKey(b, OWNERS), read);
      if (!raw) {
        owner.markFree(b);
        continue;
      }
      for (let i = 0, at = 0; i < BLOCK; i++, at += OWNER_BYTES) {
        const s = b * BLOCK + i;
        // little-endian fields, byte by byte: the buffer may sit at any offset
        const o = (raw[at]! | (raw[at + 1]! << 8) | (raw[at + 2]! << 16) | (raw[at + 3]! << 24)) >>> 0;
        one[i] = o;
        if (o === NO_OWNER) continue;
        const p = raw[at + 4]! | (raw[at + 5]! << 8);
        if (p !== 0) {
          if (position.length === 0) position = new Uint16Array(blocks * BLOCK);
          position[s] = p;
        }
        if ((raw[at + 6]! & FLAG_PENDING) !== 0) pending.push(s);
      }
      owner.setBlock(b, one);
    }
    return { owner, position, pending };
  }

  /** The documents' lists, the bitmap and the free slots from the slots' owners. */
  private adoptOwners(owner: SlotOwners, position: Uint16Array, slots: number): void {
    this.docSlots = new DocSlots();
    this.docSlots.load(owner, position, slots);
    this.docBitmap = this.docSlots.documents(new RoaringBitmap32());
    this.free = [];
    for (let s = slots - 1; s >= 0; s--) if (owner.get(s) === NO_OWNER) this.free.push(s);
  }

  // --- legacy layout (one key per slot) --------------------------------------------------------

  private legacy(name: 'codes' | 'links' | 'docs'): Database<Buffer, number> {
    return this.store.openDB(`${this.prefix}${name}`, { keyEncoding: 'uint32', encoding: 'binary' });
  }

  /** Remove the legacy layout's keys (inside a write). */
  private dropLegacy(): void {
    for (const name of ['codes', 'links', 'docs'] as const) this.legacy(name).clearSync();
    for (const key of [...this.meta.getKeys({ start: PENDING, end: PENDING + '\uffff' })]) this.meta.removeSync(key as string);
  }

  private readLegacyOwners(slots: number): { owner: SlotOwners; position: Uint16Array } {
    const owner = new Uint32Array(blocksFor(slots) * BLOCK).fill(NO_OWNER);
    const position = new Uint16Array(owner.length);
    for (const { key, value } of this.legacy('docs').getRange()) {
      u32s(value).forEach((s, i) => {
        owner[s] = key;
        position[s] = i;
      });
    }
    return { owner: SlotOwners.fromFlat(owner), position };
  }

  // --- loading --------------------------------------------------------------------------------

  /** Reload RAM when the committed generation is not the one RAM was built from. */
  private sync(): void {
    // The token alone is read on every call (one small get); the state only on a mismatch.
    const gen = this.meta.get('gen') as number | undefined;
    if (gen === this.gen || (gen === undefined && this.gen === -2)) return;
    // Inside a write transaction, reads see its pages, not a snapshot's: views of them would not
    // outlive it, so the arena is loaded (and dropped again when idle).
    const writing = !!(this.store.env as unknown as { env?: { writeTxn?: unknown } }).env?.writeTxn;
    if (this.arenaWanted || writing) {
      this.releaseView();
      this.reload(this.meta.get('state') as State | undefined);
      if (!this.arenaWanted) this.idleSoon();
      return;
    }
    // Searching: the state, the blocks and the segments are read from one snapshot, held while
    // the view serves (its pages stay valid even when a writer replaces them).
    this.releaseView();
    const txn = this.store.env.useReadTransaction();
    this.snapshot = txn;
    this.reload(this.meta.get('state', { transaction: txn }) as State | undefined, { transaction: txn });
  }

  /** Let go of the view and of the snapshot that pins its pages. */
  private releaseView(): void {
    this.view = null;
    this.viewBytes = 0;
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer);
    this.snapshotTimer = null;
    const txn = this.snapshot;
    this.snapshot = null;
    try {
      txn?.done();
    } catch {
      // the environment is closed: nothing is pinned any more
    }
  }

  /**
   * While a snapshot is held, check now and then whether a newer generation was committed: a
   * held snapshot keeps LMDB from reusing the pages written over since, so an idle reader lets
   * it go (the next search opens the new one).
   */
  private watchSnapshot(): void {
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = null;
      if (!this.snapshot) return;
      let gen: number | undefined;
      try {
        gen = this.meta.get('gen') as number | undefined;
      } catch {
        this.releaseView();
        this.gen = Number.NaN;
        return;
      }
      if (gen === this.gen) return this.watchSnapshot();
      this.releaseView();
      this.gen = Number.NaN;
    }, SNAPSHOT_CHECK_MS);
    this.snapshotTimer.unref();
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
      layout: 3,
    };
  }

  /** `read`: the snapshot to read through (searching side); absent: the writer, which loads the arena. */
  private reload(saved: State | undefined, read?: ReadOptions): void {
    // Vectors stored under another configuration (dimensions, distance, quantization) cannot be
    // searched with this one: the store reads as empty and the next write drops them.
    this.stale = !!saved && (saved.dimensions !== this.dimensions || saved.distance !== this.distance || saved.binaryQuantized !== this.binaryQuantized);
    this.relinkable = this.stale && saved!.dimensions === this.dimensions && saved!.binaryQuantized === this.binaryQuantized;
    if (this.stale) saved = undefined;
    const state: State = saved ? { ...saved } : this.emptyState();
    this.state = state;
    this.gen = this.stale ? (this.meta.get('gen', read) as number) : state.gen;
    this.quantizer = new Quantizer(this.distance, this.dimensions, this.binaryQuantized, state.scale ?? 1);
    this.pending = new PendingSlots();
    this.linked = null;
    this.dirtyCodes.clear();
    this.dirtyOwners.clear();
    this.overlayCodes.clear();
    this.overlayLinks.clear();
    this.relayout = false;
    this.fresh.clear();
    this.uncoded = [];
    this.limbo = [];
    this.doomed = [];
    const row = arenaStrideFor(this.quantizer.stride, this.quantizer.metric);
    const blocked = !saved || saved.layout === 2 || saved.layout === 3;
    if (read && blocked && (!saved || saved.nextSlot === 0 || saved.codeStride === row)) {
      this.graph = null;
      this.openView(state, row, read);
      return;
    }
    // the writer, or a layout the view cannot read (the next write rewrites it)
    this.releaseView();
    const graph = new Graph(this.quantizer.stride, this.quantizer.metric, { M: state.M, efConstruction: state.efConstruction });
    graph.ensure(blocksFor(state.nextSlot) * BLOCK);
    this.graph = graph;
    if (blocked) this.loadBlocks(state);
    else this.loadLegacy(state);
    graph.entry = state.entry;
    graph.maxLevel = state.maxLevel;
    if (!graph.has(graph.entry)) graph.electEntry();
  }

  /**
   * The searching side's graph: codes and lists viewed in the segments (pages of the map, under
   * the held snapshot), overlay blocks copied; levels from the owners; upper layers copied.
   */
  private openView(state: State, row: number, read: ReadOptions): void {
    const slots = state.nextSlot;
    const nBlocks = blocksFor(slots);
    const { owner, position, pending } = this.readOwners(slots, read);
    this.adoptOwners(owner, position, slots);
    const mult = levelMult(state.M);
    const levels = new Int8Array(nBlocks * BLOCK).fill(-1);
    let size = 0;
    for (let s = 0; s < slots; s++) {
      if (owner.get(s) === NO_OWNER) continue;
      levels[s] = levelOf(s, mult);
      size++;
    }
    // pending vectors are not in the graph
    // (readOwners lists them ascending)
    this.pending.load(pending);
    for (let i = 0; i < pending.length; i++) {
      levels[pending[i]!] = -1;
      size--;
    }
    const M0 = state.M * 2;
    const lay = segmentLayout(row, M0);
    const per = lay.slots / BLOCK;
    const segs: Array<Uint8Array | undefined> = [];
    const segCount = state.segSlots === lay.slots ? (state.segments ?? 0) : 0;
    const segment = (b: number): Uint8Array | undefined => {
      const k = Math.floor(b / per);
      if (k >= segCount) return undefined;
      if (!(k in segs)) segs[k] = reads(this.segments).getBinaryFast(k, read);
      return segs[k];
    };
    // Where each block's rows and lists lie: a segment in the map, or one buffer ("side") holding
    // the overlay copies, then an empty block. A first pass finds which blocks need a place in it
    // (overlay blocks, and segment parts off an 8-byte boundary, which the 64-bit copies of the
    // walk cannot view), so that the side buffer is made once, at its size; no object is made
    // per block (see mapped-graph.ts).
    const codeBytes = BLOCK * row;
    const linkBytes = align8(BLOCK) + BLOCK * M0 * 4;
    const SIDE = 0;
    const buffers: ArrayBufferLike[] = [new ArrayBuffer(0)];
    const bufferOf = (buffer: ArrayBufferLike): number => {
      let i = buffers.indexOf(buffer);
      if (i < 0) i = buffers.push(buffer) - 1;
      return i;
    };
    const codesIn = new Uint8Array(nBlocks);
    const codesAt = new Uint32Array(nBlocks);
    const linksIn = new Uint8Array(nBlocks);
    const countsAt = new Uint32Array(nBlocks);
    const listsAt = new Uint32Array(nBlocks);
    // per block: 1 its codes, 2 its lists go to the side buffer
    const toSide = new Uint8Array(nBlocks);
    let sideBytes = codeBytes + linkBytes;
    for (let b = 0; b < nBlocks; b++) {
      const at = (b % per) * BLOCK;
      const seg = segment(b);
      if (reads(this.blocks).getBinaryFast(blockKey(b, CODES), read) || (seg && (seg.byteOffset + at * row) % 8 !== 0)) {
        toSide[b]! |= 1;
        sideBytes += codeBytes;
      } else if (seg) {
        codesIn[b] = bufferOf(seg.buffer);
        codesAt[b] = seg.byteOffset + at * row;
      }
      if (reads(this.blocks).getBinaryFast(blockKey(b, LINKS), read) || (seg && (seg.byteOffset + lay.l0 + at * M0 * 4) % 8 !== 0)) {
        toSide[b]! |= 2;
        sideBytes += linkBytes;
      } else if (seg) {
        linksIn[b] = bufferOf(seg.buffer);
        countsAt[b] = seg.byteOffset + lay.l0n + at;
        listsAt[b] = seg.byteOffset + lay.l0 + at * M0 * 4;
      }
    }
    if (buffers.length > 256) throw new Error(`vector store: ${buffers.length} buffers in the map, more than a view can name`);
    const side = new Uint8Array(sideBytes);
    buffers[SIDE] = side.buffer;
    // the empty block (zero rows, no neighbours) first, at 0: blocks with nothing stored point there
    const emptyCodes = 0;
    const emptyLinks = codeBytes;
    let next = codeBytes + linkBytes;
    let copied = 0;
    for (let b = 0; b < nBlocks; b++) {
      const at = (b % per) * BLOCK;
      if (toSide[b]! & 1) {
        const raw = reads(this.blocks).getBinaryFast(blockKey(b, CODES), read) ?? segment(b)!.subarray(at * row, (at + BLOCK) * row);
        side.set(raw.subarray(0, codeBytes), next);
        codesAt[b] = next;
        next += codeBytes;
        copied += codeBytes;
      } else if (!segment(b)) codesAt[b] = emptyCodes;
      if (toSide[b]! & 2) {
        const raw = reads(this.blocks).getBinaryFast(blockKey(b, LINKS), read);
        const seg = raw ? undefined : segment(b)!;
        side.set(raw ? raw.subarray(0, BLOCK) : seg!.subarray(lay.l0n + at, lay.l0n + at + BLOCK), next);
        side.set(raw ? raw.subarray(BLOCK, BLOCK + BLOCK * M0 * 4) : seg!.subarray(lay.l0 + at * M0 * 4, lay.l0 + (at + BLOCK) * M0 * 4), next + align8(BLOCK));
        countsAt[b] = next;
        listsAt[b] = next + align8(BLOCK);
        next += linkBytes;
        copied += linkBytes;
      } else if (!segment(b)) {
        countsAt[b] = emptyLinks;
        listsAt[b] = emptyLinks + align8(BLOCK);
      }
    }
    // Upper layers (one vector in M has some): the UPPER blocks list their slots in ascending
    // order, and blocks are read in order, so two passes fill flat arrays already sorted, with no
    // object per node (a serving process keeps its heap small). Each pass reads the blocks in
    // place (one reused array, no copy per block).
    let nodes = 0;
    let words = 0;
    for (let b = 0; b < nBlocks; b++) {
      const list = this.upperWords(b, read);
      if (!list) continue;
      for (let i = 0; i < list.length; ) {
        const level = list[i + 1]!;
        const length = level * (state.M + 1);
        if (levels[list[i]!] === level && level > 0) {
          nodes++;
          words += length;
        }
        i += 2 + length;
      }
    }
    const upperSlots = new Uint32Array(nodes);
    const upperStart = new Uint32Array(nodes);
    const upperData = new Uint32Array(words);
    let node = 0;
    let at = 0;
    let sorted = true;
    for (let b = 0; b < nBlocks; b++) {
      const list = this.upperWords(b, read);
      if (!list) continue;
      for (let i = 0; i < list.length; ) {
        const s = list[i]!;
        const level = list[i + 1]!;
        const length = level * (state.M + 1);
        if (levels[s] === level && level > 0) {
          if (node > 0 && s <= upperSlots[node - 1]!) sorted = false;
          upperSlots[node] = s;
          upperStart[node++] = at;
          upperData.set(list.subarray(i + 2, i + 2 + length), at);
          at += length;
        }
        i += 2 + length;
      }
    }
    if (!sorted) {
      // not written by this version's writer: order the index (the walk looks slots up by bisection)
      const order = Array.from(upperSlots.keys()).sort((x, y) => upperSlots[x]! - upperSlots[y]!);
      const starts = Uint32Array.from(order, (i) => upperStart[i]!);
      upperSlots.set(Uint32Array.from(order, (i) => upperSlots[i]!));
      upperStart.set(starts);
    }
    this.view = new MappedGraph(this.quantizer.metric, this.quantizer.stride, row, state.M, this.bits ? Math.ceil(this.dimensions / 8) : this.dimensions, {
      buffers,
      codesIn,
      codesAt,
      linksIn,
      countsAt,
      listsAt,
      levels,
      upperSlots,
      upperStart,
      upperData,
      entry: state.entry,
      maxLevel: state.maxLevel,
      size,
    });
    this.viewBytes = copied;
    this.watchSnapshot();
    if (process.env.VECTORSTORE_READER_PREFETCH_MEMORY === 'true') this.touchAhead(segs.filter((v): v is Uint8Array => v !== undefined));
  }

  /** Where `upperWords` copies a block's words (grown as needed, kept: a few KiB). */
  private upperScratch = new Uint32Array(0);

  /**
   * The words of block `b`'s UPPER record (see the header), copied into a reused array: valid
   * until the next call. lmdb-js's buffer for small values is reused by the next read and may
   * sit at any byte offset.
   */
  private upperWords(b: number, read: ReadOptions): Uint32Array | undefined {
    const raw = reads(this.blocks).getBinaryFast(blockKey(b, UPPER), read);
    if (!raw) return undefined;
    const count = raw.length >> 2;
    if (this.upperScratch.length < count) this.upperScratch = new Uint32Array(Math.max(count, this.upperScratch.length * 2, 1024));
    new Uint8Array(this.upperScratch.buffer, 0, count * 4).set(raw.subarray(0, count * 4));
    return this.upperScratch.subarray(0, count);
  }

  /**
   * Map the segments' pages ahead, in the background: one byte per 4 KiB page is read, a slice of
   * at most about a millisecond per turn of the event loop, so that neither startup nor a search
   * waits for it; the first searches then find the pages mapped (page cache, not anonymous
   * memory). Stops when the view is replaced.
   */
  private touchAhead(views: Uint8Array[]): void {
    const view = this.view;
    let v = 0;
    let at = 0;
    let sink = 0;
    const step = () => {
      if (this.view !== view || v >= views.length) return;
      const until = performance.now() + 1;
      while (v < views.length && performance.now() < until) {
        const bytes = views[v]!;
        for (let i = 0; i < 256 && at < bytes.length; i++, at += 4096) sink ^= bytes[at]!;
        if (at >= bytes.length) {
          v++;
          at = 0;
        }
      }
      this.touched = sink;
      if (v < views.length) setImmediate(step).unref();
    };
    setImmediate(step).unref();
  }

  /** Where `touchAhead` leaves what it read (so that the reads are not optimised away). */
  private touched = 0;

  /** The writer's arena from the segments and the overlay: a few copies per 256 slots. */
  private loadBlocks(state: State): void {
    const graph = this.arena;
    const slots = state.nextSlot;
    const { owner, position, pending } = this.readOwners(slots);
    this.adoptOwners(owner, position, slots);
    const bytes = graph.kernels.bytes;
    const rows = graph.arenaStride;
    const lay = segmentLayout(rows, graph.M0);
    const per = lay.slots / BLOCK;
    const segCount = state.segments ?? 0;
    // segments of another shape (written with another row): rewritten by the next write
    if (segCount > 0 && state.segSlots !== lay.slots) this.relayout = true;
    const segment = (b: number): Buffer | undefined => {
      const k = Math.floor(b / per);
      return k < segCount && state.segSlots === lay.slots ? this.segments.getBinaryFast(k) : undefined;
    };
    for (let b = 0; b < blocksFor(slots); b++) {
      let raw = this.blocks.getBinaryFast(blockKey(b, CODES));
      if (raw) this.overlayCodes.add(b);
      else {
        const seg = segment(b);
        raw = seg?.subarray((b % per) * BLOCK * rows, ((b % per) + 1) * BLOCK * rows);
      }
      if (!raw) continue;
      if (state.codeStride === rows) {
        bytes.set(raw.subarray(0, BLOCK * rows), graph.kernels.codePtr(b * BLOCK));
        continue;
      }
      // written with another row layout: code by code
      const from = state.codeStride ?? this.quantizer.stride;
      for (let i = 0; i < BLOCK; i++) {
        const p = graph.kernels.codePtr(b * BLOCK + i);
        bytes.set(raw.subarray(i * from, i * from + this.quantizer.stride), p);
        graph.coded(p);
      }
    }
    for (const s of pending) this.pending.add(s);
    for (let s = 0; s < slots; s++) {
      if (owner.get(s) === NO_OWNER || this.pending.has(s)) continue;
      graph.place(s, graph.levelFor(s));
    }
    const M0 = graph.M0;
    const l0bytes = new Uint8Array(graph.l0.buffer, graph.l0.byteOffset, graph.l0.byteLength);
    for (let b = 0; b < blocksFor(slots); b++) {
      const raw = this.blocks.getBinaryFast(blockKey(b, LINKS));
      let counts: Uint8Array | undefined;
      let lists: Uint8Array | undefined;
      if (raw) {
        this.overlayLinks.add(b);
        counts = raw.subarray(0, BLOCK);
        lists = raw.subarray(BLOCK, BLOCK + BLOCK * M0 * 4);
      } else {
        const seg = segment(b);
        const at = (b % per) * BLOCK;
        counts = seg?.subarray(lay.l0n + at, lay.l0n + at + BLOCK);
        lists = seg?.subarray(lay.l0 + at * M0 * 4, lay.l0 + (at + BLOCK) * M0 * 4);
      }
      if (!counts || !lists) continue;
      for (let i = 0; i < BLOCK; i++) graph.l0n[b * BLOCK + i] = graph.has(b * BLOCK + i) ? counts[i]! : 0;
      l0bytes.set(lists, b * BLOCK * M0 * 4);
    }
    for (let b = 0; b < blocksFor(slots); b++) {
      const raw = this.blocks.getBinary(blockKey(b, UPPER));
      if (!raw) continue;
      const words = u32s(raw);
      for (let i = 0; i < words.length; ) {
        const s = words[i]!;
        const level = words[i + 1]!;
        const size = level * (graph.M + 1);
        if (graph.has(s) && graph.levels[s] === level) graph.upper[s]!.set(words.subarray(i + 2, i + 2 + size));
        i += 2 + size;
      }
    }
    graph.dirty.clear();
    // Lists may name slots removed before a repair ran: dropped here, persisted by the next write.
    if (state.clean !== true) graph.consolidate();
  }

  /** Load RAM from the legacy layout (one key per slot); the next write rewrites it as blocks. */
  private loadLegacy(state: State): void {
    const graph = this.arena;
    const codes = this.legacy('codes');
    const links = this.legacy('links');
    for (const key of this.meta.getKeys({ start: PENDING, end: PENDING + '\uffff' })) this.pending.add(Number((key as string).slice(PENDING.length)));
    const { owner, position } = this.readLegacyOwners(state.nextSlot);
    this.adoptOwners(owner, position, state.nextSlot);
    const stride = this.quantizer.stride;
    const coded = new Uint8Array(state.nextSlot);
    for (const { key, value } of codes.getRange()) {
      const p = graph.kernels.codePtr(key);
      graph.kernels.bytes.set(value.subarray(0, stride), p);
      graph.coded(p);
      coded[key] = 1;
      if (!this.pending.has(key)) graph.place(key, graph.levelFor(key));
    }
    // Stores written before pending vectors had codes: code them here.
    for (const slot of this.pending.slots()) {
      if (coded[slot]) continue;
      const p = graph.kernels.codePtr(slot);
      this.quantizer.encode(this.exact(slot), graph.kernels.bytes, p);
      graph.coded(p);
    }
    for (const { key, value } of links.getRange()) {
      const slot = Math.floor(key / LAYERS);
      if (graph.has(slot)) graph.setLinks(slot, key % LAYERS, u32s(value));
    }
    graph.entry = state.entry;
    graph.maxLevel = state.maxLevel;
    graph.dirty.clear();
    if (!graph.has(graph.entry)) graph.electEntry();
    // Links to vectors deleted since the last merge must go before their slots are reused.
    graph.consolidate();
    this.relayout = true;
  }

  /** RAM held by the graph, its codes and the pending index, in bytes (for stats and benchmarks). */
  get memoryBytes(): number {
    this.sync();
    const graph = this.graph ? this.graph.byteLength : this.view!.byteLength + this.viewBytes;
    return graph + this.docSlots.byteLength;
  }
}
