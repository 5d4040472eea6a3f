/**
 * The graph as a searching thread reads it: codes and layer-0 lists viewed in place in the
 * memory map (segments.ts), or in the small overlay of blocks changed since, with distance
 * kernels in plain JS.
 *
 * Why not the WebAssembly kernels' memory for the graph: it cannot alias a file mapping, and
 * copying the codes and lists into it is what made a serving process's anonymous memory grow
 * with the index (about 260 bytes per 100-d vector). Here a process holds, per vector, one byte
 * of level (and, per searching thread, one of visited marks in the kernels' memory); the upper
 * layers (one node in M) are copied, as one flat array. The walk is the one of graph.ts (same
 * descent, same beam, same order of expansion), on the same integer code distances, so it
 * answers the same neighbours. Layer 0 runs in the kernels as far as it can: per expanded node,
 * JS copies its list into their memory, one call picks the new neighbours, JS copies those rows
 * in, one call scores them (see `walk`).
 *
 * Every block of BLOCK slots is found by a buffer number and byte offsets (its rows; its counts
 * and lists): in the map (a segment) or in one buffer holding the overlay copies and an empty
 * block. The view keeps a few typed arrays per buffer and none per block: at 500,000 vectors
 * seven views per block were about 2 MB of small objects made at open, and what survives V8's
 * scavenges at open is what makes V8 double the main thread's young generation (16 -> 32 MB of
 * anonymous memory, bench/README.md).
 */
import { Heap } from './heap.js';
import { drainClosestFirst, highestNode, type Scored } from './graph.js';
import type { CodeMetric } from './quantizer.js';
import { BLOCK, SHIFT } from './segments.js';
import { Kernels, QUERY_PTR } from './simd.js';
import { indexOfSlot } from './sorted-slots.js';

/** Blocks a scan copies into its WebAssembly buffer at a time (fixed: 16 * 256 rows). */
const SCAN_BLOCKS = 16;

const ABSENT = -1;
/** The visited mark of a slot absent from the graph: above every epoch (see `gatherMarked`). */
const ABSENT_MARK = 0xff;

/**
 * A thread's kernels for one row shape (a view is replaced at each commit; searches never
 * interleave within a thread, so its views share them), and the walk's state in their memory:
 * the visited marks (one byte per slot, past the kernels' regions), the epoch they were last
 * stamped with, and the view whose absent slots they mark.
 */
interface Buffers {
  k: Kernels;
  /** `scanBlocks`' slot per batch entry (kept: a fresh one per scan was 64 KB of external memory per search, which V8 answers with collections). */
  origin: Int32Array;
  visitedPtr: number;
  capacity: number;
  epoch: number;
  markedFor: MappedGraph | null;
}
const buffers = new Map<string, Buffers>();

/** popcount of each byte value, for hamming distances on bit codes. */
const POP = new Uint8Array(256);
for (let i = 1; i < 256; i++) POP[i] = (i & 1) + POP[i >> 1]!;

export interface MappedParts {
  /** The buffers blocks lie in: the map's (lmdb-js hands out one per 3.75 GiB of it), the overlay copies'. At most 256. */
  buffers: ArrayBufferLike[];
  /** Per block: the buffer its rows (code, then the norm for l2 rows with norms; `row` bytes each) lie in, and their byte offset there (a multiple of 8). */
  codesIn: Uint8Array;
  codesAt: Uint32Array;
  /** Per block: the buffer its layer-0 counts (BLOCK bytes) and lists (BLOCK * M0 u32) lie in, and their byte offsets there (the lists' a multiple of 8). */
  linksIn: Uint8Array;
  countsAt: Uint32Array;
  listsAt: Uint32Array;
  /** Per slot: its level (ABSENT when not linked in the graph: free or pending). */
  levels: Int8Array;
  /** Upper layers: slots having some (ascending), where their lists start in `upperData`. */
  upperSlots: Uint32Array;
  upperStart: Uint32Array;
  upperData: Uint32Array;
  entry: number;
  maxLevel: number;
  size: number;
}

export class MappedGraph {
  readonly M0: number;
  readonly cap: number;
  readonly levels: Int8Array;
  readonly size: number;
  /** Per buffer of MappedParts.buffers: its bytes as int8, uint8, 32-bit words and u32. */
  private readonly i8: Int8Array[];
  private readonly u8: Uint8Array[];
  private readonly i32: Int32Array[];
  private readonly u32: Uint32Array[];
  private readonly parts: ArrayBufferLike[];
  private readonly codesIn: Uint8Array;
  private readonly codesAt: Uint32Array;
  private readonly linksIn: Uint8Array;
  private readonly countsAt: Uint32Array;
  private readonly listsAt: Uint32Array;
  /**
   * The buffer most blocks' rows lie in (the memory map: lmdb-js hands out one buffer per 3.75
   * GiB of it) as 32-bit words, and per block where its rows start there (-1: elsewhere, as an
   * overlay copy). Touching rows through this one view costs a third fewer instructions than
   * through a view per block (no per-row load of the block's view), which lets the CPU keep more
   * of those loads in flight: 0.82-0.89x the walk's CPU at 200k.
   */
  private readonly flat: Int32Array;
  private readonly flatAt: Int32Array;
  /**
   * Per buffer: its bytes as 64-bit words, for copying rows and lists into the kernels'
   * memory. A copy in 8-byte steps costs half one in 4-byte steps, and BigInt64Array loads and
   * stores move the bits as they are (a Float64Array may canonicalise the NaN patterns that two
   * int8 codes can form); V8 compiles them to plain moves, with no BigInt made.
   */
  private readonly i64: BigInt64Array[];
  private readonly upperSlots: Uint32Array;
  private readonly upperStart: Uint32Array;
  private readonly upperData: Uint32Array;
  /** Per block: slots in the graph (a scan skips empty blocks). */
  private readonly live: Uint16Array;
  private entry: number;
  private maxLevel: number;
  /** Bytes of the code compared (padding past the dimensions is zero in every code). */
  private readonly len: number;
  private readonly withNorms: boolean;
  private readonly query: Int8Array;
  private readonly queryBytes: Uint8Array;
  private qNorm = 0;
  private readonly cand = new Heap();
  private readonly res = new Heap();
  private readonly ids: number[] = [];

  constructor(
    readonly metric: CodeMetric,
    /** Bytes of a code (a multiple of 16) and of its row (code, then the norm when l2 has one). */
    readonly stride: number,
    readonly row: number,
    readonly M: number,
    /** Bytes of each code that can be non-zero (the dimensions, or their bits). */
    used: number,
    parts: MappedParts,
  ) {
    this.M0 = M * 2;
    this.len = Math.min(used, stride);
    this.withNorms = metric === 'l2' && row >= stride + 4;
    this.parts = parts.buffers;
    this.i8 = parts.buffers.map((b) => new Int8Array(b));
    this.u8 = parts.buffers.map((b) => new Uint8Array(b));
    this.i32 = parts.buffers.map((b) => new Int32Array(b, 0, b.byteLength >>> 2));
    this.u32 = parts.buffers.map((b) => new Uint32Array(b, 0, b.byteLength >>> 2));
    this.i64 = parts.buffers.map((b) => new BigInt64Array(b, 0, b.byteLength >>> 3));
    this.codesIn = parts.codesIn;
    this.codesAt = parts.codesAt;
    this.linksIn = parts.linksIn;
    this.countsAt = parts.countsAt;
    this.listsAt = parts.listsAt;
    // the buffer most blocks' rows lie in, and where each block's rows start in it as words (-1: elsewhere)
    const inBuffer = new Uint32Array(parts.buffers.length);
    for (let b = 0; b < parts.codesIn.length; b++) inBuffer[parts.codesIn[b]!]!++;
    let main = 0;
    for (let i = 1; i < inBuffer.length; i++) if (inBuffer[i]! > inBuffer[main]!) main = i;
    this.flat = this.i32[main] ?? new Int32Array(0);
    this.flatAt = new Int32Array(parts.codesIn.length);
    for (let b = 0; b < parts.codesIn.length; b++) this.flatAt[b] = parts.codesIn[b] === main ? parts.codesAt[b]! >>> 2 : -1;
    this.levels = parts.levels;
    this.cap = parts.levels.length;
    this.size = parts.size;
    this.upperSlots = parts.upperSlots;
    this.upperStart = parts.upperStart;
    this.upperData = parts.upperData;
    this.live = new Uint16Array(parts.codesIn.length);
    for (let s = 0; s < this.cap; s++) if (this.levels[s]! !== ABSENT) this.live[s >>> SHIFT] = this.live[s >>> SHIFT]! + 1;
    this.entry = parts.entry;
    this.maxLevel = parts.maxLevel;
    if (!this.has(this.entry)) this.electEntry();
    this.query = new Int8Array(stride);
    this.queryBytes = new Uint8Array(this.query.buffer);
  }

  has(slot: number): boolean {
    return slot >= 0 && slot < this.cap && this.levels[slot]! !== ABSENT;
  }

  /** The query's code (written by the quantizer into `queryCode`), then its norm. */
  get queryCode(): Uint8Array {
    return this.queryBytes;
  }

  queryCoded(): void {
    let n = 0;
    for (let i = 0; i < this.len; i++) n += this.query[i]! * this.query[i]!;
    this.qNorm = n;
  }

  /** Code distance from the query to `slot`: the integers the WebAssembly kernels compute. */
  dist(slot: number): number {
    const b = slot >>> SHIFT;
    const buf = this.codesIn[b]!;
    const off = this.codesAt[b]! + (slot & (BLOCK - 1)) * this.row;
    const q = this.query;
    const len = this.len;
    if (this.metric === 'hamming') {
      const c = this.u8[buf]!;
      const qb = this.queryBytes;
      let h = 0;
      for (let i = 0; i < len; i++) h += POP[(qb[i]! ^ c[off + i]!) & 0xff]!;
      return h;
    }
    const c = this.i8[buf]!;
    if (this.metric === 'l2' && !this.withNorms) {
      let s = 0;
      for (let i = 0; i < len; i++) {
        const d = q[i]! - c[off + i]!;
        s += d * d;
      }
      return s;
    }
    let dot = 0;
    let i = 0;
    for (; i + 3 < len; i += 4) {
      dot += q[i]! * c[off + i]! + q[i + 1]! * c[off + i + 1]! + q[i + 2]! * c[off + i + 2]! + q[i + 3]! * c[off + i + 3]!;
    }
    for (; i < len; i++) dot += q[i]! * c[off + i]!;
    if (this.metric === 'dot') return -dot;
    return this.qNorm + this.i32[buf]![(off + this.stride) >>> 2]! - 2 * dot;
  }

  private links(slot: number, level: number, into: number[]): void {
    into.length = 0;
    if (level === 0) {
      const b = slot >>> SHIFT;
      const i = slot & (BLOCK - 1);
      const buf = this.linksIn[b]!;
      const n = this.u8[buf]![this.countsAt[b]! + i]!;
      const list = this.u32[buf]!;
      for (let k = 0, base = (this.listsAt[b]! >>> 2) + i * this.M0; k < n; k++) into.push(list[base + k]!);
      return;
    }
    const at = this.upperAt(slot);
    if (at < 0) return;
    const base = at + (level - 1) * (this.M + 1);
    const n = this.upperData[base]!;
    for (let k = 0; k < n; k++) into.push(this.upperData[base + 1 + k]!);
  }

  private upperAt(slot: number): number {
    const i = indexOfSlot(this.upperSlots, slot);
    return i < 0 ? -1 : this.upperStart[i]!;
  }

  private electEntry(): void {
    ({ entry: this.entry, level: this.maxLevel } = highestNode(this.levels, this.cap));
  }

  /**
   * The epoch of a new walk. The marks are cleared, and this view's absent slots marked, when
   * the epochs run out (every 254 walks) and when the thread's last walk was another view's.
   */
  private nextEpoch(w: Buffers): number {
    if (w.capacity < this.cap) {
      w.visitedPtr = w.k.tail(this.cap);
      w.capacity = this.cap;
      w.markedFor = null;
    }
    if (w.markedFor !== this || w.epoch >= ABSENT_MARK - 1) {
      const marks = w.k.bytes.subarray(w.visitedPtr, w.visitedPtr + this.cap);
      marks.fill(0);
      const levels = this.levels;
      for (let s = 0; s < this.cap; s++) if (levels[s] === ABSENT) marks[s] = ABSENT_MARK;
      w.epoch = 0;
      w.markedFor = this;
    }
    return ++w.epoch;
  }

  /**
   * As Graph.descend: greedy from the entry point down to layer 1. Each step's neighbours are
   * scored in one kernel call, as the walk's are (their rows fetched by `fetchRows`).
   */
  private descend(w: Buffers): { node: number; dist: number } {
    let cur = this.entry;
    let curDist = this.dist(cur);
    const k = w.k;
    const i32 = k.i32;
    const out = k.out;
    const slots32 = this.slots32(k);
    const kernel = this.walkKernel(k);
    const negate = this.metric === 'dot';
    const list = this.ids;
    for (let level = this.maxLevel; level > 0; level--) {
      let changed = true;
      while (changed) {
        changed = false;
        this.links(cur, level, list);
        let m = 0;
        for (let i = 0; i < list.length; i++) if (this.levels[list[i]!] !== ABSENT) i32[slots32 + m++] = list[i]!;
        if (m === 0) break;
        this.fetchRows(k, slots32, m);
        kernel(QUERY_PTR, k.codePtr(0), this.row, k.idsPtr, m, k.outPtr, this.stride);
        let best = cur;
        for (let j = 0; j < m; j++) {
          const d = negate ? -out[j]! : out[j]!;
          if (d < curDist) {
            curDist = d;
            best = i32[slots32 + j]!;
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
   * The kernel the walks score with: l2 by `l2i8` (squared differences) rather than `l2i8n`
   * (norms and dot product), the same integers without reading the norm (see `fetchRows`).
   */
  private walkKernel(k: Kernels): Kernels['l2i8'] {
    return this.metric === 'hamming' ? k.hamming : this.metric === 'dot' ? k.doti8 : k.l2i8;
  }

  /** Where, in the kernels' i32 view, the walks put the slots to score (after the identity ids of the rows they copy). */
  private slots32(k: Kernels): number {
    return (k.idsPtr >> 2) + this.M0;
  }

  /**
   * Copy the rows of the `m` slots listed at `slots32` (in the kernels' i32 view) into the
   * kernels' rows 0 to m - 1, for one kernel call. First the rows are touched, one word per
   * cache line that their codes use: the loads do not depend on one another, so the CPU fetches
   * the rows in parallel (a walk is bound by these misses); then the copies, 8 bytes a step,
   * find the lines in cache.
   *
   * Only the bytes a code can make non-zero are read: a 100-d code with its norm fills 116 bytes
   * of a 128-byte row, which sits 24 bytes past a cache line in the map (LMDB's page header),
   * so the norm alone takes a third line. The kernels' rows are zero past the code.
   */
  private fetchRows(k: Kernels, slots32: number, m: number): void {
    const i32 = k.i32;
    const i64 = k.i64;
    const flat = this.flat;
    const flatAt = this.flatAt;
    const codesIn = this.codesIn;
    const codesAt = this.codesAt;
    const i64s = this.i64;
    const rowWords = this.row >> 2;
    const rowQ = this.row >> 3;
    const usedQ = (this.len + 7) >> 3;
    const strideQ = this.stride >> 3;
    const lastUsed = usedQ * 2 - 1;
    let touched = 0;
    for (let j = 0; j < m; j++) {
      const nb = i32[slots32 + j]!;
      const o = flatAt[nb >>> SHIFT]!;
      if (o >= 0) {
        // the buffer starts on a page, so a word's line is its index / 16: the first and last
        // words, then one per line between them (none for a 100-d code)
        const at = o + (nb & (BLOCK - 1)) * rowWords;
        const last = at + lastUsed;
        touched ^= flat[at]! ^ flat[last]!;
        for (let x = (at | 15) + 1, end = last & ~15; x < end; x += 16) touched ^= flat[x]!;
      } else {
        const b = nb >>> SHIFT;
        const src = this.i32[codesIn[b]!]!;
        const from = (codesAt[b]! >>> 2) + (nb & (BLOCK - 1)) * rowWords;
        for (let x = 0; x < lastUsed; x += 16) touched ^= src[from + x]!;
        touched ^= src[from + lastUsed]!;
      }
    }
    for (let j = 0, row = k.codePtr(0) >> 3; j < m; j++, row += rowQ) {
      const nb = i32[slots32 + j]!;
      const b = nb >>> SHIFT;
      const src = i64s[codesIn[b]!]!;
      let f = (codesAt[b]! >>> 3) + (nb & (BLOCK - 1)) * rowQ;
      let t = row;
      for (const end = row + usedQ - 3; t < end; t += 4, f += 4) {
        i64[t] = src[f]!;
        i64[t + 1] = src[f + 1]!;
        i64[t + 2] = src[f + 2]!;
        i64[t + 3] = src[f + 3]!;
      }
      for (const end = row + usedQ; t < end; t++, f++) i64[t] = src[f]!;
      for (const end = row + strideQ; t < end; t++) i64[t] = 0n;
    }
    this.sink ^= touched;
  }

  /**
   * The `ef` closest slots to the query (restricted to `mask` when given), closest first: as
   * Graph.search. Layer 0 scores each expanded node's new neighbours with the SIMD kernels: their
   * rows are copied (as 32-bit words) into the kernels' small buffer, which costs a fraction of
   * scoring them in JS.
   */
  search(ef: number, mask: Uint8Array | null = null): Scored {
    if (this.entry < 0) return { ids: [], dists: [] };
    const w = this.buffers();
    // first: it may grow the kernels' memory, which renews their views
    const epoch = this.nextEpoch(w);
    // the kernels' ids: the identity over the first M0 (the rows the walks copy), then the slots to score
    const ids = w.k.ids;
    for (let j = 0; j < this.M0; j++) ids[j] = j;
    const { node, dist } = this.descend(w);
    this.walk(w, epoch, node, dist, ef, mask);
    return drainClosestFirst(this.res);
  }

  /**
   * Layer 0's beam search from `node`, leaving the results in the result heap. Per expanded
   * node: its list is copied into the kernels' memory (8 bytes a step), `gatherMarked` keeps the
   * slots not visited and present (one call: the marks live in that memory), `fetchRows` copies
   * their rows in and one call scores them.
   */
  private walk(w: Buffers, epoch: number, node: number, dist: number, ef: number, mask: Uint8Array | null): void {
    const k = w.k;
    const kernel = this.walkKernel(k);
    const gather = k.gatherMarked;
    const negate = this.metric === 'dot';
    const i32 = k.i32;
    const i64 = k.i64;
    const out = k.out;
    const M0 = this.M0;
    const slots32 = this.slots32(k);
    const slotsPtr = slots32 << 2;
    const listPtr = slotsPtr + M0 * 4;
    const list64 = listPtr >> 3;
    const halfM0 = M0 >> 1;
    const visitedPtr = w.visitedPtr;
    const basePtr = k.codePtr(0);
    const u8s = this.u8;
    const i64s = this.i64;
    const linksIn = this.linksIn;
    const countsAt = this.countsAt;
    const listsAt = this.listsAt;
    const cand = this.cand;
    const res = this.res;
    cand.clear();
    res.clear();
    k.bytes[visitedPtr + node] = epoch;
    cand.push(dist, node);
    if (!mask || mask[node]) res.push(-dist, node);
    while (cand.size > 0) {
      const cd = cand.topKey;
      if (res.size >= ef && cd > -res.topKey) break;
      const c = cand.pop();
      const b = c >>> SHIFT;
      const i = c & (BLOCK - 1);
      const buf = linksIn[b]!;
      const n = u8s[buf]![countsAt[b]! + i]!;
      if (n === 0) continue;
      const list = i64s[buf]!;
      for (let t = list64, f = (listsAt[b]! >>> 3) + i * halfM0, end = list64 + ((n + 1) >> 1); t < end; t++, f++) i64[t] = list[f]!;
      const m = gather(listPtr, n, visitedPtr, epoch, slotsPtr);
      if (m === 0) continue;
      this.fetchRows(k, slots32, m);
      kernel(QUERY_PTR, basePtr, this.row, k.idsPtr, m, k.outPtr, this.stride);
      for (let j = 0; j < m; j++) {
        const d = negate ? -out[j]! : out[j]!;
        if (res.size < ef || d < -res.topKey) {
          const nb = i32[slots32 + j]!;
          cand.push(d, nb);
          if (!mask || mask[nb]) {
            res.push(-d, nb);
            if (res.size > ef) res.pop();
          }
        }
      }
    }
  }

  /** What the touching loads read (kept, so that they are not optimised away). */
  private sink = 0;

  /**
   * Exact scan of `slots` on codes: the `keep` closest, closest first. Long scans (an exact
   * answer, the tuner's probes, the pending vectors) run the SIMD kernels on the blocks they
   * need, copied a few at a time into a small WebAssembly buffer of fixed size: a copy costs far
   * less than scoring in JS, and the buffer does not grow with the index.
   */
  scan(slots: ArrayLike<number>, keep: number): Scored {
    const res = this.res;
    res.clear();
    if (slots.length >= 2 * BLOCK) {
      this.scanBlocks(slots, keep);
      return drainClosestFirst(this.res);
    }
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i]!;
      const d = this.dist(s);
      if (res.size < keep || d < -res.topKey) {
        res.push(-d, s);
        if (res.size > keep) res.pop();
      }
    }
    return drainClosestFirst(this.res);
  }

  /**
   * Exact scan of every slot in the graph: the `keep` closest, closest first. Whole blocks are
   * copied into the kernels' buffer, SCAN_BLOCKS at a time, and scored in one call with the
   * identity batch (a slot's place in the buffer is its place in its blocks), so no JS work is
   * done per slot beyond reading its distance; absent slots (free, pending) are scored with the
   * rest and dropped. No list of the graph's slots is kept (4 bytes per vector).
   */
  scanAll(keep: number): Scored {
    const res = this.res;
    res.clear();
    const k = this.kernels();
    const kernel = this.kernel!;
    const negate = this.metric === 'dot';
    const bytes = k.bytes;
    const base = k.codePtr(0);
    const out = k.out;
    const ids = k.ids;
    const levels = this.levels;
    const blockBytes = BLOCK * this.row;
    for (let i = 0; i < SCAN_BLOCKS * BLOCK; i++) ids[i] = i;
    const placed = this.placed;
    let n = 0;
    const flush = () => {
      kernel(QUERY_PTR, base, this.row, k.idsPtr, n * BLOCK, k.outPtr, this.stride);
      for (let p = 0; p < n; p++) {
        const first = placed[p]! * BLOCK;
        for (let i = 0, at = p * BLOCK; i < BLOCK; i++, at++) {
          const d = negate ? -out[at]! : out[at]!;
          if ((res.size < keep || d < -res.topKey) && levels[first + i] !== ABSENT) {
            res.push(-d, first + i);
            if (res.size > keep) res.pop();
          }
        }
      }
      n = 0;
    };
    for (let b = 0; b < this.live.length; b++) {
      if (this.live[b] === 0) continue;
      bytes.set(this.blockRows(b), base + n * blockBytes);
      placed[n++] = b;
      if (n === SCAN_BLOCKS) flush();
    }
    if (n > 0) flush();
    // the walk expects the first M0 ids in place, which these are
    return drainClosestFirst(this.res);
  }

  /** Blocks a scan placed in the kernels' buffer, in order. */
  private readonly placed = new Int32Array(SCAN_BLOCKS);

  private kernel: Kernels['l2i8'] | null = null;

  /**
   * The kernels and their buffer (16 blocks of rows), the query copied in. One buffer per row
   * shape and thread, shared by every view (a view is replaced at each commit; searches never
   * interleave within a thread), so the query is copied in at each use.
   */
  private kernels(): Kernels {
    const k = this.buffers().k;
    this.kernel ??= this.metric === 'hamming' ? k.hamming : this.metric === 'dot' ? k.doti8 : this.withNorms ? k.l2i8n : k.l2i8;
    return k;
  }

  /** This thread's buffers for this row shape, the query copied in (its norm too, for `l2i8n`). */
  private buffers(): Buffers {
    const key = `${this.row}:${this.M0}`;
    let w = buffers.get(key);
    if (!w) {
      const k = new Kernels(this.row, this.M0);
      k.resize(SCAN_BLOCKS * BLOCK);
      w = { k, origin: new Int32Array(k.batch), visitedPtr: 0, capacity: 0, epoch: 0, markedFor: null };
      buffers.set(key, w);
    }
    const k = w.k;
    k.bytes.set(this.queryBytes, QUERY_PTR);
    if (this.withNorms) k.i32[(QUERY_PTR + this.stride) >> 2] = this.qNorm;
    return w;
  }

  private scanBlocks(slots: ArrayLike<number>, keep: number): void {
    const k = this.kernels();
    const bytes = k.bytes;
    const kernel = this.kernel!;
    const negate = this.metric === 'dot';
    const base = k.codePtr(0);
    const out = k.out;
    const res = this.res;
    const ids = new Uint32Array(k.bytes.buffer, k.idsPtr, k.batch);
    // the blocks in the buffer (a few compares find one: there are at most SCAN_BLOCKS)
    const placed = new Int32Array(SCAN_BLOCKS);
    let nPlaced = 0;
    let lastBlock = -1;
    let lastAt = 0;
    const origin = buffers.get(`${this.row}:${this.M0}`)!.origin;
    let n = 0;
    const flush = () => {
      if (n > 0) {
        kernel(QUERY_PTR, base, this.row, k.idsPtr, n, k.outPtr, this.stride);
        for (let i = 0; i < n; i++) {
          const d = negate ? -out[i]! : out[i]!;
          if (res.size < keep || d < -res.topKey) {
            res.push(-d, origin[i]!);
            if (res.size > keep) res.pop();
          }
        }
      }
      n = 0;
      nPlaced = 0;
      lastBlock = -1;
    };
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i]!;
      const b = s >>> SHIFT;
      if (b !== lastBlock) {
        let at = -1;
        for (let p = 0; p < nPlaced; p++) {
          if (placed[p] === b) {
            at = p;
            break;
          }
        }
        if (at < 0) {
          if (nPlaced === SCAN_BLOCKS) flush();
          at = nPlaced++;
          placed[at] = b;
          bytes.set(this.blockRows(b), base + at * BLOCK * this.row);
        }
        lastBlock = b;
        lastAt = at;
      }
      ids[n] = lastAt * BLOCK + (s & (BLOCK - 1));
      origin[n++] = s;
      // a slot listed twice could overflow the batch: score what is there
      if (n === k.batch) flush();
    }
    flush();
  }

  /** Block `b`'s rows, for a copy (a view made per copy: the view keeps none per block). */
  private blockRows(b: number): Uint8Array {
    return new Uint8Array(this.parts[this.codesIn[b]!]!, this.codesAt[b]!, BLOCK * this.row);
  }

  /** Anonymous memory this view holds (levels, upper layers; overlay copies are counted by the store, visited marks by the thread's kernels). */
  get byteLength(): number {
    return this.levels.byteLength + this.upperData.byteLength + this.upperSlots.byteLength * 2;
  }
}
