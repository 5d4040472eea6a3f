/**
 * The HNSW graph over compact codes, as contiguous typed arrays.
 *
 * Nodes are slots (u32). Layer-0 neighbour lists live in one Uint32Array (M0 entries per slot,
 * count in `l0n`), upper layers in a small per-slot array (few nodes have them). Codes live in
 * the SIMD kernels' memory, so one wasm call scores a whole neighbour list.
 *
 * Every slot whose lists change is added to `dirty`; the store persists exactly those.
 * Deletion repairs the neighbourhood of every node that pointed to a deleted node (candidates:
 * its surviving neighbours plus the deleted node's neighbours, pruned by the HNSW heuristic), so
 * the graph keeps no tombstones.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../worker-script.js';
import { Heap } from './heap.js';
import { HELPER_IDS_PTR, Kernels, QUERY_BYTES, QUERY_PTR, type Layout } from './simd.js';
import type { CodeMetric } from './quantizer.js';

/** The first node of the highest level among the first `cap` slots (-1, -1 when none is present). */
export function highestNode(levels: Int8Array, cap: number): { entry: number; level: number } {
  let entry = -1;
  let level = -1;
  for (let s = 0; s < cap; s++) {
    const l = levels[s]!;
    if (l > level) {
      level = l;
      entry = s;
    }
  }
  return { entry, level };
}

export interface GraphParams {
  M: number;
  efConstruction: number;
}

const ABSENT = -1;

/** Merges of fewer slots, or into smaller graphs, are linked sequentially. */
const PARALLEL_MIN = 4096;
/** Kept neighbours a candidate of the selection heuristic is compared with first (see `dominated`). */
const SELECT_FIRST = 4;
/**
 * Slots per round of a parallel merge. Each node is offered the nodes of the previous round and
 * the earlier ones of its own (`mates`, scored exactly), which the searches could not see: the
 * work a parallel merge adds over a sequential one grows with the round. On 30,000 GloVe-100
 * codes (CPU of both threads, 2026-11-25): 256 took 3.62-3.78 s, 128 3.21 s, 64 3.11 s, one
 * thread 2.74 s; recall on codes 0.8515 / 0.854 / 0.854 / 0.8465.
 */
const ROUND = 128;
// The control block shared with the helper (i32 indexes): a header, then two job areas, so that
// the searches of the next round run while this thread links the current one (see insertMany).
const H_SEQ = 0;
const H_DONE = 1;
const H_READY = 2;
const H_QUIT = 3;
const H_CAP = 4;
const H_L0 = 5;
const H_L0N = 6;
const H_LEVELS = 7;
const H_VISITED = 8;
const H_VISITED2 = 9;
const H_END = 10;
const H_CLEAN = 11;
const H_EF = 12;
/** Index of the job area of the posted round. */
const H_AREA = 13;
/** Jobs in the posted round. */
const H_JOBS = 14;
/** The next job of the posted round to take: both threads take jobs with Atomics.add. */
const H_NEXT = 15;
const HEADER = 16;
// Within an area: per job (slot, entry node, entry distance), then its result count (-1 until
// done), its result ids and its result distances.
const A_COUNTS = ROUND * 3;
const A_IDS = A_COUNTS + ROUND;
function areaSize(ef: number): number {
  return A_IDS + 2 * ROUND * ef;
}
function areaAt(which: 0 | 1, ef: number): number {
  return HEADER + which * areaSize(ef);
}
function controlSize(ef: number): number {
  return HEADER + 2 * areaSize(ef);
}
const WALKER = new URL('./walker.js', import.meta.url);

/** A worker thread that runs layer-0 searches on a graph's shared memory (see `insertMany`). */
class Helper {
  private constructor(
    private readonly worker: Worker,
    readonly ctrl: Int32Array,
  ) {}

  private seq = 0;
  private alive = true;

  static start(graph: Graph): Helper | null {
    let path: string;
    try {
      path = fileURLToPath(WALKER);
    } catch {
      return null;
    }
    if (!existsSync(path)) return null;
    const ctrl = new Int32Array(new SharedArrayBuffer(controlSize(graph.efConstruction) * 4));
    const worker = startWorker(WALKER, {
      workerData: { memory: graph.kernels.memory, ctrl: ctrl.buffer, stride: graph.stride, metric: graph.metric, M: graph.M, efConstruction: graph.efConstruction },
    });
    worker.unref();
    worker.on('error', () => {});
    if (Atomics.wait(ctrl, H_READY, 0, 10_000) === 'timed-out' && Atomics.load(ctrl, H_READY) === 0) {
      void worker.terminate();
      return null;
    }
    return new Helper(worker, ctrl);
  }

  /** Start taking the posted round's jobs on the helper. */
  run(): boolean {
    if (!this.alive) return false;
    this.seq++;
    Atomics.store(this.ctrl, H_SEQ, this.seq);
    Atomics.notify(this.ctrl, H_SEQ);
    return true;
  }

  /** Wait for the helper's jobs; false if it did not finish them (then it is abandoned). */
  wait(): boolean {
    for (;;) {
      const done = Atomics.load(this.ctrl, H_DONE);
      if (done === this.seq) return true;
      if (Atomics.wait(this.ctrl, H_DONE, done, 30_000) === 'timed-out') {
        this.alive = false;
        return false;
      }
    }
  }

  stop(): void {
    Atomics.store(this.ctrl, H_QUIT, 1);
    Atomics.store(this.ctrl, H_SEQ, ++this.seq);
    Atomics.notify(this.ctrl, H_SEQ);
    void this.worker.terminate();
  }
}

/** The helper thread's loop (walker.ts): run each batch of jobs the owner posts. */
export function helperLoop(graph: Graph, ctrl: Int32Array): void {
  Atomics.store(ctrl, H_READY, 1);
  Atomics.notify(ctrl, H_READY);
  let seen = 0;
  for (;;) {
    Atomics.wait(ctrl, H_SEQ, seen);
    seen = Atomics.load(ctrl, H_SEQ);
    if (Atomics.load(ctrl, H_QUIT) === 1) return;
    graph.runJobs(ctrl);
    Atomics.store(ctrl, H_DONE, seen);
    Atomics.notify(ctrl, H_DONE);
  }
}

/** Deterministic level of a slot (so a rebuild after restart finds the same layers). */
export function levelOf(slot: number, mult: number): number {
  let h = (slot + 0x9e3779b9) | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  const u = ((h >>> 0) + 1) / 4294967297;
  return Math.min(15, Math.floor(-Math.log(u) * mult));
}

/** Bytes per slot in the arena for codes of `stride` bytes: the code, then (l2) its squared norm as an i32 in 16 bytes. */
export function arenaStrideFor(stride: number, metric: CodeMetric): number {
  // The query's norm goes after its code at QUERY_PTR: only when it fits there.
  return metric === 'l2' && stride + 16 <= QUERY_BYTES ? stride + 16 : stride;
}

/** The level multiplier of graphs with `M` links per upper layer. */
export const levelMult = (M: number) => 1 / Math.log(M);

export interface Scored {
  ids: number[];
  dists: number[];
}

/** Empty a result heap (farthest on top, keyed by negated distance) into closest-first arrays. */
export function drainClosestFirst(res: Heap): Scored {
  const count = res.size;
  const ids = new Array<number>(count);
  const dists = new Array<number>(count);
  for (let i = count - 1; i >= 0; i--) {
    dists[i] = -res.topKey;
    ids[i] = res.pop();
  }
  return { ids, dists };
}

/** `found` without `slot`: a slot may be in the arena already linked by a previous life, and must never link to itself. */
function without(found: Scored, slot: number): Scored {
  if (!found.ids.includes(slot)) return found;
  const ids: number[] = [];
  const dists: number[] = [];
  for (let i = 0; i < found.ids.length; i++) {
    if (found.ids[i] !== slot) {
      ids.push(found.ids[i]!);
      dists.push(found.dists[i]!);
    }
  }
  return { ids, dists };
}

export class Graph {
  readonly M: number;
  readonly M0: number;
  readonly efConstruction: number;
  readonly kernels: Kernels;
  private readonly mult: number;
  private readonly kernel: (q: number, base: number, stride: number, ids: number, n: number, out: number, len: number) => void;
  private readonly negate: boolean;
  /** Bytes per slot in the arena: the code, then (l2) its squared norm as an i32 in 16 bytes. */
  readonly arenaStride: number;
  private readonly withNorms: boolean;
  /** False from a removal until the next sweep: lists may then name absent nodes. */
  private clean = true;
  cap = 0;
  levels = new Int8Array(0);
  l0 = new Uint32Array(0);
  l0n = new Uint8Array(0);
  upper: Array<Uint32Array | undefined> = [];
  entry = -1;
  maxLevel = -1;
  size = 0;
  readonly dirty = new Set<number>();
  private visited = new Uint8Array(0);
  private epoch = 0;
  private readonly cand = new Heap();
  private readonly res = new Heap();

  /** `helper`: the shared memory of the graph a helper thread walks for its owner (see `Helper`). */
  constructor(
    readonly stride: number,
    readonly metric: CodeMetric,
    params: GraphParams,
    helper?: Kernels['memory'],
  ) {
    this.M = params.M;
    this.M0 = params.M * 2;
    this.efConstruction = params.efConstruction;
    this.mult = levelMult(params.M);
    this.arenaStride = arenaStrideFor(stride, metric);
    this.withNorms = this.arenaStride !== stride;
    this.kernels = new Kernels(this.arenaStride, this.M0, helper);
    this.kernel = metric === 'l2' ? (this.withNorms ? this.kernels.l2i8n : this.kernels.l2i8) : metric === 'dot' ? this.kernels.doti8 : this.kernels.hamming;
    this.negate = metric === 'dot';
    this.isHelper = helper !== undefined;
    if (!helper) this.ensure(1024);
  }

  private readonly isHelper: boolean;
  /** Rounds of `insertMany` whose searches a helper thread shared (for tests and benchmarks). */
  helperRounds = 0;

  private bind(layout: Layout): void {
    const buf = this.kernels.bytes.buffer as ArrayBuffer;
    const cap = layout.cap;
    this.levels = new Int8Array(buf, layout.levels, cap);
    this.l0 = new Uint32Array(buf, layout.l0, cap * this.M0);
    this.l0n = new Uint8Array(buf, layout.l0n, cap);
    this.visited = new Uint8Array(buf, this.isHelper ? layout.visited2 : layout.visited, cap);
    this.epoch = 0;
    this.cap = cap;
  }

  // --- storage ----------------------------------------------------------------------------------

  ensure(slots: number): void {
    if (slots <= this.cap) return;
    const cap = Math.max(slots, Math.ceil(this.cap * 1.5), 1024);
    this.bind(this.kernels.resize(cap));
  }

  has(slot: number): boolean {
    return slot >= 0 && slot < this.cap && this.levels[slot]! !== ABSENT;
  }

  levelFor(slot: number): number {
    return levelOf(slot, this.mult);
  }

  /** Neighbours of `slot` at `level` (a view: copy before mutating the graph). */
  links(slot: number, level: number): Uint32Array {
    if (level === 0) return this.l0.subarray(slot * this.M0, slot * this.M0 + this.l0n[slot]!);
    const up = this.upper[slot]!;
    const base = (level - 1) * (this.M + 1);
    return up.subarray(base + 1, base + 1 + up[base]!);
  }

  setLinks(slot: number, level: number, ids: ArrayLike<number>): void {
    if (level === 0) {
      const n = Math.min(ids.length, this.M0);
      const base = slot * this.M0;
      for (let i = 0; i < n; i++) this.l0[base + i] = ids[i]!;
      this.l0n[slot] = n;
    } else {
      const up = this.upper[slot]!;
      const base = (level - 1) * (this.M + 1);
      const n = Math.min(ids.length, this.M);
      up[base] = n;
      for (let i = 0; i < n; i++) up[base + 1 + i] = ids[i]!;
    }
    this.dirty.add(slot);
  }

  /** Declare a node (its code must already be written) without linking it: used when loading. */
  place(slot: number, level: number): void {
    this.ensure(slot + 1);
    if (this.levels[slot] === ABSENT) this.size++;
    this.levels[slot] = level;
    this.l0n[slot] = 0;
    this.upper[slot] = level > 0 ? new Uint32Array(level * (this.M + 1)) : undefined;
  }

  /**
   * Call after writing a code at `ptr` (a slot's, or the query's at QUERY_PTR): stores what the
   * kernels need beside it (the squared norm, for l2).
   */
  coded(ptr: number): void {
    if (!this.withNorms) return;
    const b = this.kernels.bytes;
    let n = 0;
    for (let i = ptr, end = ptr + this.stride; i < end; i++) {
      const x = (b[i]! << 24) >> 24;
      n += x * x;
    }
    this.kernels.i32[(ptr + this.stride) >> 2] = n;
  }

  codeView(slot: number): Uint8Array {
    const p = this.kernels.codePtr(slot);
    return this.kernels.bytes.subarray(p, p + this.stride);
  }

  // --- distances ------------------------------------------------------------------------------

  /** Distances from the code at `qPtr` to the `n` slots in the kernels' ids buffer (from its `from`th), into `out`. */
  private score(qPtr: number, n: number, from = 0): Int32Array {
    this.kernel(qPtr, this.kernels.codePtr(0), this.arenaStride, this.kernels.idsPtr + from * 4, n, this.kernels.outPtr, this.stride);
    const out = this.kernels.out;
    if (this.negate) for (let i = 0; i < n; i++) out[i] = -out[i]!;
    return out;
  }

  private distOne(qPtr: number, slot: number): number {
    this.kernels.ids[0] = slot;
    return this.score(qPtr, 1)[0]!;
  }

  /** Distances from the code at `qPtr` to each slot of `slots` (any length). */
  scoreMany(qPtr: number, slots: ArrayLike<number>, into: Float64Array | number[]): void {
    const ids = this.kernels.ids;
    for (let start = 0; start < slots.length; start += this.kernels.batch) {
      const n = Math.min(this.kernels.batch, slots.length - start);
      for (let i = 0; i < n; i++) ids[i] = slots[start + i]!;
      const out = this.score(qPtr, n);
      for (let i = 0; i < n; i++) into[start + i] = out[i]!;
    }
  }

  // --- search ---------------------------------------------------------------------------------

  private nextEpoch(): number {
    if (this.epoch >= 0xff) {
      this.visited.fill(0);
      this.epoch = 0;
    }
    return ++this.epoch;
  }

  /** Greedy descent from the entry point down to `level + 1`, returning the closest node and its distance. */
  private descend(qPtr: number, toLevel: number): { node: number; dist: number } {
    let cur = this.entry;
    let curDist = this.distOne(qPtr, cur);
    const ids = this.kernels.ids;
    for (let level = this.maxLevel; level > toLevel; level--) {
      let changed = true;
      while (changed) {
        changed = false;
        const list = this.links(cur, level);
        let n = 0;
        for (let i = 0; i < list.length; i++) if (this.levels[list[i]!] !== ABSENT) ids[n++] = list[i]!;
        const out = this.score(qPtr, n);
        let best = cur;
        for (let i = 0; i < n; i++) {
          if (out[i]! < curDist) {
            curDist = out[i]!;
            best = ids[i]!;
          }
        }
        if (best !== cur) {
          cur = best;
          changed = true;
        }
      }
    }
    return { node: cur, dist: curDist };
  }

  /**
   * Beam search of one layer. With `mask`, only masked slots enter the results, but every node
   * is traversed, so the walk crosses regions the filter excludes.
   */
  private searchLayer(qPtr: number, ep: number, epDist: number, ef: number, level: number, mask: Uint8Array | null): Scored {
    this.walk(qPtr, ep, epDist, ef, level, mask);
    return drainClosestFirst(this.res);
  }

  /** `searchLayer` leaving the results in the result heap. */
  private walk(qPtr: number, ep: number, epDist: number, ef: number, level: number, mask: Uint8Array | null): void {
    const epoch = this.nextEpoch();
    const visited = this.visited;
    const cand = this.cand;
    const res = this.res;
    cand.clear();
    res.clear();
    visited[ep] = epoch;
    cand.push(epDist, ep);
    if (!mask || mask[ep]) res.push(-epDist, ep);
    const ids = this.kernels.ids;
    const M0 = this.M0;
    const levels = this.levels;
    const gather = this.clean ? this.kernels.gatherAll : this.kernels.gather;
    const lay = this.kernels.layout;
    while (cand.size > 0) {
      const cd = cand.topKey;
      if (res.size >= ef && cd > -res.topKey) break;
      const c = cand.pop();
      let n = 0;
      if (level === 0) {
        n = gather(lay.l0, lay.l0n, lay.levels, this.isHelper ? lay.visited2 : lay.visited, M0, c, epoch, this.kernels.idsPtr);
      } else {
        // read in place (no view per node: upper-layer searches of a merge visit many)
        const up = this.upper[c]!;
        const base = (level - 1) * (this.M + 1);
        for (let i = base + 1, end = base + 1 + up[base]!; i < end; i++) {
          const nb = up[i]!;
          if (visited[nb] !== epoch && levels[nb] !== ABSENT) {
            visited[nb] = epoch;
            ids[n++] = nb;
          }
        }
      }
      if (n === 0) continue;
      const out = this.score(qPtr, n);
      for (let i = 0; i < n; i++) {
        const d = out[i]!;
        if (res.size < ef || d < -res.topKey) {
          const nb = ids[i]!;
          cand.push(d, nb);
          if (!mask || mask[nb]) {
            res.push(-d, nb);
            if (res.size > ef) res.pop();
          }
        }
      }
    }
  }

  /** The `ef` closest slots to the code at QUERY_PTR (restricted to `mask` when given), closest first. */
  search(ef: number, mask: Uint8Array | null = null): Scored {
    if (this.entry < 0) return { ids: [], dists: [] };
    const { node, dist } = this.descend(QUERY_PTR, 0);
    return this.searchLayer(QUERY_PTR, node, dist, ef, 0, mask);
  }

  /** Exact scan of `slots` on codes: the `keep` closest, closest first. */
  scan(slots: Uint32Array, keep: number): Scored {
    const res = this.res;
    res.clear();
    const ids = this.kernels.ids;
    for (let start = 0; start < slots.length; start += this.kernels.batch) {
      const n = Math.min(this.kernels.batch, slots.length - start);
      for (let i = 0; i < n; i++) ids[i] = slots[start + i]!;
      const out = this.score(QUERY_PTR, n);
      for (let i = 0; i < n; i++) {
        const d = out[i]!;
        if (res.size < keep || d < -res.topKey) {
          res.push(-d, ids[i]!);
          if (res.size > keep) res.pop();
        }
      }
    }
    return drainClosestFirst(this.res);
  }

  // --- insertion ------------------------------------------------------------------------------

  /**
   * The HNSW neighbour-selection heuristic: walk candidates closest first and keep one only if
   * it is closer to the base than to every neighbour kept so far (keeps links diverse).
   */
  private select(ids: number[], dists: number[], max: number): number[] {
    const kept: number[] = [];
    // the kept nodes stay in the kernels' ids buffer (nothing else scores during a selection)
    const kids = this.kernels.ids;
    for (let i = 0; i < ids.length && kept.length < max; i++) {
      const e = ids[i]!;
      const de = dists[i]!;
      if (kept.length > 0 && this.dominated(this.kernels.codePtr(e), kept.length, de)) continue;
      kids[kept.length] = e;
      kept.push(e);
    }
    return kept;
  }

  /**
   * Whether one of the first `n` nodes of the ids buffer is closer than `d` to the code at
   * `qPtr`. Most candidates of a selection are rejected, and mostly by the closest nodes kept
   * (the first ones): those are scored first, the others only when they did not decide.
   */
  private dominated(qPtr: number, n: number, d: number): boolean {
    const first = Math.min(n, SELECT_FIRST);
    let out = this.score(qPtr, first);
    for (let j = 0; j < first; j++) if (out[j]! < d) return true;
    if (n === first) return false;
    out = this.score(qPtr, n - first, first);
    for (let j = 0; j < n - first; j++) if (out[j]! < d) return true;
    return false;
  }

  /** Re-choose the list of `slot` at `level` among `candidates` (distinct, not `slot`). */
  private relink(slot: number, level: number, candidates: number[]): void {
    const dists = new Array<number>(candidates.length);
    this.scoreMany(this.kernels.codePtr(slot), candidates, dists);
    const order = candidates.map((_, i) => i).sort((a, b) => dists[a]! - dists[b]!);
    const ids = order.map((i) => candidates[i]!);
    const ds = order.map((i) => dists[i]!);
    this.setLinks(slot, level, this.select(ids, ds, level === 0 ? this.M0 : this.M));
  }

  /** Add `to` to the list of `from` at `level`, pruning by the heuristic when full. */
  private addLink(from: number, level: number, to: number): void {
    const list = this.links(from, level);
    const max = level === 0 ? this.M0 : this.M;
    for (let i = 0; i < list.length; i++) if (list[i] === to) return;
    if (list.length < max) {
      if (level === 0) {
        this.l0[from * this.M0 + list.length] = to;
        this.l0n[from]!++;
      } else {
        const up = this.upper[from]!;
        const base = (level - 1) * (this.M + 1);
        up[base + 1 + up[base]!] = to;
        up[base]!++;
      }
      this.dirty.add(from);
      return;
    }
    const candidates = Array.from(list);
    candidates.push(to);
    this.relink(from, level, candidates);
  }

  /** Link a slot whose code is already in the arena. */
  insert(slot: number): void {
    const level = this.levelFor(slot);
    const start = this.linkAbove(slot, level);
    if (!start) return;
    const { ids, dists } = without(this.searchLayer(this.kernels.codePtr(slot), start.node, start.dist, this.efConstruction, 0, null), slot);
    this.linkAt(slot, 0, ids, dists);
    this.raiseEntry(slot, level);
  }

  /**
   * Place `slot` and link it in its layers above 0. Returns where its layer-0 search starts, or
   * null when it is the first node (then it is the entry point, with nothing to link).
   */
  private linkAbove(slot: number, level: number): { node: number; dist: number } | null {
    this.place(slot, level);
    this.dirty.add(slot);
    if (this.entry < 0) {
      this.entry = slot;
      this.maxLevel = level;
      return null;
    }
    const qPtr = this.kernels.codePtr(slot);
    let { node, dist } = this.descend(qPtr, level);
    for (let l = Math.min(level, this.maxLevel); l >= 1; l--) {
      const { ids, dists } = without(this.searchLayer(qPtr, node, dist, this.efConstruction, l, null), slot);
      this.linkAt(slot, l, ids, dists);
      if (ids.length > 0) {
        node = ids[0]!;
        dist = dists[0]!;
      }
    }
    return { node, dist };
  }

  /** Choose the neighbours of `slot` at `level` among candidates (closest first), and link back. */
  private linkAt(slot: number, level: number, ids: number[], ds: number[]): void {
    const chosen = this.select(ids, ds, this.M);
    this.setLinks(slot, level, chosen);
    for (const nb of chosen) this.addLink(nb, level, slot);
  }

  private raiseEntry(slot: number, level: number): void {
    if (level > this.maxLevel) {
      this.entry = slot;
      this.maxLevel = level;
    }
  }

  // --- bulk insertion with a helper thread --------------------------------------------------------

  /**
   * Link many slots (codes already in the arena), in this order. Large merges run in rounds of
   * ROUND slots whose layer-0 searches are shared with a helper thread reading the same memory
   * (see `linkInRounds`); all writes happen on this thread. Without a helper (no worker script
   * next to this module, as under the TypeScript test runner) every slot is inserted
   * sequentially.
   */
  insertMany(slots: readonly number[]): void {
    let i = 0;
    const n = slots.length;
    if (n < PARALLEL_MIN || this.arenaStride + 16 > HELPER_IDS_PTR - QUERY_PTR) {
      for (; i < n; i++) this.insert(slots[i]!);
      return;
    }
    while (i < n && this.size < PARALLEL_MIN) this.insert(slots[i++]!);
    const helper = i < n ? Helper.start(this) : null;
    try {
      if (!helper) {
        for (; i < n; i++) this.insert(slots[i]!);
        return;
      }
      this.linkInRounds(slots.slice(i), helper);
    } finally {
      helper?.stop();
    }
  }

  /**
   * The rounds of a parallel merge, pipelined: while this thread links round r, the helper runs
   * the layer-0 searches of round r+1 on the graph as it stands; this thread then takes what is
   * left of them (both take jobs from one atomic counter, so neither waits on the other's
   * share). A search of round r+1 may miss nodes of round r linked after it passed, and it
   * cannot see the nodes of its own round linked before it: each node is offered both sets
   * (`mates`) before its neighbours are chosen, so the result is the sequential algorithm's up
   * to that visibility. Nodes with upper layers search those layers here, while linking.
   * The helper reads layer-0 lists this thread may be rewriting: a list's entries are written
   * before its count and every entry names a placed node, so a torn read only changes the
   * path a search takes, never what memory it reads.
   */
  private linkInRounds(slots: readonly number[], helper: Helper): void {
    const c = helper.ctrl;
    let which: 0 | 1 = 0;
    let round = slots.slice(0, ROUND);
    let next = round.length;
    this.finishRound(c, helper, which, this.postRound(c, helper, which, round));
    let previous: number[] = [];
    while (round.length > 0) {
      const upcoming = slots.slice(next, next + ROUND);
      next += upcoming.length;
      const other: 0 | 1 = which === 0 ? 1 : 0;
      const posted = upcoming.length > 0 && this.postRound(c, helper, other, upcoming);
      this.linkRound(c, which, round, previous);
      if (upcoming.length > 0) this.finishRound(c, helper, other, posted);
      previous = round;
      round = upcoming;
      which = other;
    }
  }

  /** Describe the round's searches in area `which` and start the helper on them; false if it is gone. */
  private postRound(c: Int32Array, helper: Helper, which: 0 | 1, round: readonly number[]): boolean {
    const ef = this.efConstruction;
    const area = areaAt(which, ef);
    for (let j = 0; j < round.length; j++) {
      const slot = round[j]!;
      const { node, dist } = this.descend(this.kernels.codePtr(slot), 0);
      const at = area + j * 3;
      c[at] = slot;
      c[at + 1] = node;
      c[at + 2] = dist;
      c[area + A_COUNTS + j] = -1;
    }
    const lay = this.kernels.layout;
    c[H_CAP] = lay.cap;
    c[H_L0] = lay.l0;
    c[H_L0N] = lay.l0n;
    c[H_LEVELS] = lay.levels;
    c[H_VISITED] = lay.visited;
    c[H_VISITED2] = lay.visited2;
    c[H_END] = lay.end;
    c[H_CLEAN] = this.clean ? 1 : 0;
    c[H_EF] = ef;
    c[H_AREA] = area;
    c[H_JOBS] = round.length;
    Atomics.store(c, H_NEXT, 0);
    const started = helper.run();
    if (started) this.helperRounds++;
    return started;
  }

  /** Take the posted round's remaining searches, then wait for the helper's last one. */
  private finishRound(c: Int32Array, helper: Helper, which: 0 | 1, posted: boolean): void {
    this.runJobs(c);
    if (!posted || helper.wait()) return;
    // The helper stopped answering: redo the searches it took and did not finish.
    const area = areaAt(which, this.efConstruction);
    for (let j = 0; j < c[H_JOBS]!; j++) if (Atomics.load(c, area + A_COUNTS + j) < 0) this.runJob(c, area, this.efConstruction, j);
  }

  /** Link the nodes of a round whose searches are done (area `which`), in round order. */
  private linkRound(c: Int32Array, which: 0 | 1, round: readonly number[], previous: readonly number[]): void {
    const ef = this.efConstruction;
    const area = areaAt(which, ef);
    const ids = area + A_IDS;
    const dists = ids + ROUND * ef;
    const mates = previous.slice();
    const cIds: number[] = [];
    const cDs: number[] = [];
    let mateDists = new Array<number>(0);
    for (let j = 0; j < round.length; j++) {
      const slot = round[j]!;
      const level = this.levelFor(slot);
      if (level > 0) {
        this.linkAbove(slot, level);
      } else {
        this.place(slot, 0);
        this.dirty.add(slot);
      }
      const count = c[area + A_COUNTS + j]!;
      cIds.length = 0;
      cDs.length = 0;
      for (let k = 0; k < count; k++) {
        cIds.push(c[ids + j * ef + k]!);
        cDs.push(c[dists + j * ef + k]!);
      }
      if (mates.length > 0) {
        if (mateDists.length < mates.length) mateDists = new Array<number>(mates.length + ROUND);
        this.scoreMany(this.kernels.codePtr(slot), mates, mateDists);
        for (let m = 0; m < mates.length; m++) {
          const d = mateDists[m]!;
          if (cIds.length >= ef && d >= cDs[cDs.length - 1]!) continue;
          // a node of the previous round may have been found by the search as well
          if (cIds.includes(mates[m]!)) continue;
          let at = cDs.length;
          while (at > 0 && cDs[at - 1]! > d) at--;
          cIds.splice(at, 0, mates[m]!);
          cDs.splice(at, 0, d);
          if (cIds.length > ef) {
            cIds.pop();
            cDs.pop();
          }
        }
      }
      this.linkAt(slot, 0, cIds, cDs);
      this.raiseEntry(slot, level);
      mates.push(slot);
    }
  }

  /**
   * Take jobs of the posted round until none is left (both threads run this), writing each
   * one's closest nodes, closest first and without the node itself, to its results.
   */
  runJobs(c: Int32Array): void {
    if (this.isHelper) {
      const lay: Layout = { cap: c[H_CAP]!, l0: c[H_L0]!, l0n: c[H_L0N]!, levels: c[H_LEVELS]!, visited: c[H_VISITED]!, visited2: c[H_VISITED2]!, end: c[H_END]! };
      const cur = this.kernels.layout;
      if (cur.cap !== lay.cap || cur.l0 !== lay.l0 || this.kernels.bytes.byteLength < lay.end) {
        this.kernels.attach(lay);
        this.bind(lay);
      }
      this.clean = c[H_CLEAN] === 1;
    }
    const ef = c[H_EF]!;
    const area = c[H_AREA]!;
    const jobs = c[H_JOBS]!;
    for (;;) {
      const j = Atomics.add(c, H_NEXT, 1);
      if (j >= jobs) return;
      this.runJob(c, area, ef, j);
    }
  }

  private runJob(c: Int32Array, area: number, ef: number, j: number): void {
    const at = area + j * 3;
    const slot = c[at]!;
    this.walk(this.kernels.codePtr(slot), c[at + 1]!, c[at + 2]!, ef, 0, null);
    const res = this.res;
    const ids = area + A_IDS;
    const dists = ids + ROUND * ef;
    const base = j * ef;
    // drained farthest first: written from the back, then moved to the front
    const size = res.size;
    let w = size;
    let count = 0;
    while (res.size > 0) {
      const d = -res.topKey;
      const id = res.pop();
      if (id === slot) continue;
      w--;
      c[ids + base + w] = id;
      c[dists + base + w] = d;
      count++;
    }
    if (w > 0) {
      c.copyWithin(ids + base, ids + base + w, ids + base + size);
      c.copyWithin(dists + base, dists + base + w, dists + base + size);
    }
    // last: a count >= 0 says the results are complete
    Atomics.store(c, area + A_COUNTS + j, count);
  }

  // --- deletion -------------------------------------------------------------------------------

  /**
   * Remove slots and repair the lists that pointed to them. In-links are looked for within two
   * hops of each removed node (where HNSW's mostly symmetric links put nearly all of them); the
   * rare remaining ones are dropped by `consolidate` before a removed slot is reused, and the
   * search never follows a link to an absent node meanwhile.
   */
  remove(dead: readonly number[]): void {
    const gone = dead.filter((s) => this.has(s));
    if (gone.length === 0) return;
    this.clean = false;
    const mark = new Uint8Array(this.cap);
    for (const s of gone) mark[s] = 1;
    const top = gone.reduce((m, s) => Math.max(m, this.levels[s]!), 0);
    for (let level = 0; level <= top; level++) {
      const suspects = new Set<number>();
      for (const x of gone) {
        if (this.levels[x]! < level) continue;
        for (const nb of this.links(x, level)) {
          if (mark[nb] || this.levels[nb]! < level) continue;
          suspects.add(nb);
          for (const nb2 of this.links(nb, level)) if (!mark[nb2] && this.levels[nb2]! >= level) suspects.add(nb2);
        }
      }
      for (const p of suspects) {
        if (this.levels[p]! < level) continue;
        const list = this.links(p, level);
        for (let i = 0; i < list.length; i++) {
          if (mark[list[i]!]) {
            this.repair(p, level, mark);
            break;
          }
        }
      }
    }
    for (const s of gone) {
      this.levels[s] = ABSENT;
      this.l0n[s] = 0;
      this.upper[s] = undefined;
      this.size--;
      this.dirty.add(s);
    }
    if (mark[this.entry]) this.electEntry();
  }

  /** Drop every link to an absent node (full sweep); returns how many lists changed. */
  consolidate(): number {
    let changed = 0;
    for (let p = 0; p < this.cap; p++) {
      const top = this.levels[p]!;
      for (let level = 0; level <= top; level++) {
        const list = this.links(p, level);
        let stale = false;
        for (let i = 0; i < list.length; i++) if (this.levels[list[i]!] === ABSENT) { stale = true; break; }
        if (!stale) continue;
        this.setLinks(p, level, Array.from(list).filter((nb) => this.levels[nb] !== ABSENT));
        changed++;
      }
    }
    this.clean = true;
    return changed;
  }

  private repair(p: number, level: number, mark: Uint8Array): void {
    const seen = new Set<number>([p]);
    const candidates: number[] = [];
    // Links to nodes absent since an earlier removal are dropped here as well.
    for (const nb of this.links(p, level)) {
      if (this.levels[nb]! < level) continue;
      if (!mark[nb]) {
        if (!seen.has(nb)) { seen.add(nb); candidates.push(nb); }
        continue;
      }
      for (const nb2 of this.links(nb, level)) {
        if (!mark[nb2] && this.levels[nb2]! >= level && !seen.has(nb2)) { seen.add(nb2); candidates.push(nb2); }
      }
    }
    this.relink(p, level, candidates);
  }

  /** Make the highest node the entry point (after the entry was removed). */
  electEntry(): void {
    ({ entry: this.entry, level: this.maxLevel } = highestNode(this.levels, this.cap));
  }

  /** No list names an absent node (no removal since the last sweep). */
  get isClean(): boolean {
    return this.clean;
  }

  /** Memory held in RAM by the graph and its codes, in bytes. */
  get byteLength(): number {
    let up = 0;
    for (const u of this.upper) if (u) up += u.byteLength;
    return this.kernels.byteLength + this.l0.byteLength + this.l0n.byteLength + this.levels.byteLength + this.visited.byteLength + up;
  }
}
