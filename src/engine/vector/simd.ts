/**
 * WebAssembly SIMD distance kernels over compact codes.
 *
 * The graph is traversed on compact codes (int8 or 1 bit per dimension) kept in one linear
 * memory. Each kernel computes the distance from one code (the query, or any code already in
 * the arena) to a batch of codes named by their slot numbers, so that one JS -> wasm call covers
 * a whole neighbour list. The module is assembled here byte by byte: no toolchain is needed at
 * build or run time.
 *
 * Memory layout (bytes):
 *   [QUERY_PTR, +QUERY_BYTES)   the query code
 *   [IDS_PTR, +BATCH*4)         slot numbers of a batch (u32)
 *   [OUT_PTR, +BATCH*4)         distances of a batch (i32)
 *   [CODES_PTR, ...)            code of slot s at CODES_PTR + s * stride (stride multiple of 16)
 *   then, sized by the slot capacity: layer-0 neighbour lists (M0 u32 per slot), their counts
 *   (u8), node levels (i8, -1 = absent) and the visited marks of a search (u8 epoch).
 */

export const QUERY_PTR = 0;
export const QUERY_BYTES = 1 << 14;
export const BATCH = 1 << 14;
export const IDS_PTR = QUERY_PTR + QUERY_BYTES;
export const OUT_PTR = IDS_PTR + BATCH * 4;
export const CODES_PTR = OUT_PTR + BATCH * 4;
/** A helper thread's batch buffers, in the upper half of the query area (see `Kernels`). */
export const HELPER_BATCH = 1024;
export const HELPER_IDS_PTR = QUERY_PTR + QUERY_BYTES / 2;
export const HELPER_OUT_PTR = HELPER_IDS_PTR + HELPER_BATCH * 4;
/** Largest memory, in 64 KiB pages (a shared memory declares its maximum). */
const MAX_PAGES = 65536;
const PAGE = 65536;

// --- a tiny assembler -------------------------------------------------------------------------

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function str(s: string): number[] {
  return vec([...s].map((c) => [c.charCodeAt(0)]));
}

const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  end: [0x0b],
  br: (d: number) => [0x0c, d],
  brIf: (d: number) => [0x0d, d],
  get: (i: number) => [0x20, i],
  set: (i: number) => [0x21, i],
  tee: (i: number) => [0x22, i],
  i32Load: [0x28, 2, 0],
  i32Load8U: [0x2d, 0, 0],
  i32Load8S: [0x2c, 0, 0],
  i32Store8: [0x3a, 0, 0],
  drop: [0x1a],
  i32Const64: [0x41, 0xc0, 0x00],
  i32Const256: [0x41, 0x80, 0x02],
  i32GtU: [0x4b],
  i32Sub: [0x6b],
  i32Ne: [0x47],
  i32And: [0x71],
  i32MinusOne: [0x41, 0x7f],
  if: [0x04, 0x40],
  i32Store: [0x36, 2, 0],
  i32Const: (n: number) => [0x41, n], // small non-negative constants only (< 64)
  i32Add: [0x6a],
  i32Mul: [0x6c],
  i32Shl: [0x74],
  i32GeU: [0x4f],
  i32LtU: [0x49],
  v128Load: [0xfd, 0x00, 0, 0],
  v128Zero: [0xfd, 0x0c, ...new Array(16).fill(0)],
  v128Xor: [0xfd, 0x51],
  i8x16Popcnt: [0xfd, 0x62],
  i16x8ExtaddPairwiseI8x16U: [0xfd, 0x7d],
  i32x4ExtaddPairwiseI16x8U: [0xfd, 0x7f],
  i16x8ExtendLowI8x16S: [0xfd, 0x87, 0x01],
  i16x8ExtendHighI8x16S: [0xfd, 0x88, 0x01],
  i16x8Sub: [0xfd, 0x91, 0x01],
  i32x4Add: [0xfd, 0xae, 0x01],
  i32x4DotI16x8S: [0xfd, 0xba, 0x01],
  i16x8Add: [0xfd, 0x8e, 0x01],
  i16x8ExtmulLowI8x16S: [0xfd, 0x9c, 0x01],
  i16x8ExtmulHighI8x16S: [0xfd, 0x9d, 0x01],
  i32x4ExtaddPairwiseI16x8S: [0xfd, 0x7e],
  i32x4ExtractLane: (l: number) => [0xfd, 0x1b, l],
};

// Parameters: q, base, stride, ids, n, out, len; locals: i, c, j (i32), acc, a, b, d (v128).
// Codes are `len` bytes (a multiple of 16) at the start of each `stride`-byte record.
const P = { q: 0, base: 1, stride: 2, ids: 3, n: 4, out: 5, len: 6, i: 7, c: 8, j: 9, acc: 10, a: 11, b: 12, d: 13 };

/**
 * The batch loop shared by every kernel; `chunk` accumulates one 16-byte chunk of a and b into
 * acc; the horizontal sum of acc is stored as `pre`, sum, `post` (both empty: the sum itself).
 */
function batchKernel(chunk: number[], pre: number[] = [], post: number[] = []): number[] {
  const addrOfC = [
    ...op.get(P.ids), ...op.get(P.i), ...op.i32Const(2), ...op.i32Shl, ...op.i32Add, ...op.i32Load,
    ...op.get(P.stride), ...op.i32Mul, ...op.get(P.base), ...op.i32Add, ...op.set(P.c),
  ];
  // First touch one byte per cache line of every code of the batch: the loads have no
  // dependency on one another, so the CPU fetches the lines in parallel (graph traversal is
  // bound by these misses) before the arithmetic needs them. Only for small batches (a
  // neighbour list): the lines of a long scan would leave the cache before they are used.
  const touch = [
    ...op.block,
    ...op.get(P.n), ...op.i32Const256, ...op.i32GtU, ...op.brIf(0),
    ...op.loop,
    ...op.get(P.i), ...op.get(P.n), ...op.i32GeU, ...op.brIf(1),
    ...addrOfC,
    ...op.i32Const(0), ...op.set(P.j),
    ...op.loop,
    ...op.get(P.c), ...op.get(P.j), ...op.i32Add, ...op.i32Load8U, ...op.drop,
    ...op.get(P.j), ...op.i32Const64, ...op.i32Add, ...op.tee(P.j), ...op.get(P.len), ...op.i32LtU, ...op.brIf(0),
    ...op.end,
    ...op.get(P.i), ...op.i32Const(1), ...op.i32Add, ...op.set(P.i),
    ...op.br(0),
    ...op.end,
    ...op.end,
    ...op.i32Const(0), ...op.set(P.i),
  ];
  const body = [
    ...touch,
    ...op.block,
    ...op.loop,
    ...op.get(P.i), ...op.get(P.n), ...op.i32GeU, ...op.brIf(1),
    // c = base + ids[i] * stride
    ...addrOfC,
    ...op.v128Zero, ...op.set(P.acc),
    ...op.i32Const(0), ...op.set(P.j),
    ...op.loop,
    ...op.get(P.q), ...op.get(P.j), ...op.i32Add, ...op.v128Load, ...op.set(P.a),
    ...op.get(P.c), ...op.get(P.j), ...op.i32Add, ...op.v128Load, ...op.set(P.b),
    ...chunk,
    ...op.get(P.j), ...op.i32Const(16), ...op.i32Add, ...op.tee(P.j), ...op.get(P.len), ...op.i32LtU, ...op.brIf(0),
    ...op.end,
    // out[i] = pre, horizontal sum of acc, post
    ...op.get(P.out), ...op.get(P.i), ...op.i32Const(2), ...op.i32Shl, ...op.i32Add,
    ...pre,
    ...op.get(P.acc), ...op.i32x4ExtractLane(0),
    ...op.get(P.acc), ...op.i32x4ExtractLane(1), ...op.i32Add,
    ...op.get(P.acc), ...op.i32x4ExtractLane(2), ...op.i32Add,
    ...op.get(P.acc), ...op.i32x4ExtractLane(3), ...op.i32Add,
    ...post,
    ...op.i32Store,
    ...op.get(P.i), ...op.i32Const(1), ...op.i32Add, ...op.set(P.i),
    ...op.br(0),
    ...op.end,
    ...op.end,
    ...op.end,
  ];
  const locals = vec([[3, I32], [4, V128]]);
  const fn = [...locals, ...body];
  return [...uleb(fn.length), ...fn];
}

const accumulate = [...op.get(P.acc), ...op.i32x4Add, ...op.set(P.acc)];

/** Squared euclidean distance between int8 codes. */
const l2Chunk = [
  ...op.get(P.a), ...op.i16x8ExtendLowI8x16S, ...op.get(P.b), ...op.i16x8ExtendLowI8x16S, ...op.i16x8Sub,
  ...op.tee(P.d), ...op.get(P.d), ...op.i32x4DotI16x8S, ...accumulate,
  ...op.get(P.a), ...op.i16x8ExtendHighI8x16S, ...op.get(P.b), ...op.i16x8ExtendHighI8x16S, ...op.i16x8Sub,
  ...op.tee(P.d), ...op.get(P.d), ...op.i32x4DotI16x8S, ...accumulate,
];

/**
 * Dot product of int8 codes: codes are clamped to [-127, 127], so a product fits in i16 and so
 * does the sum of two (2 * 127² = 32,258 <= 32,767): two multiplies, one add, one widening.
 */
const dotChunk = [
  ...op.get(P.a), ...op.get(P.b), ...op.i16x8ExtmulLowI8x16S,
  ...op.get(P.a), ...op.get(P.b), ...op.i16x8ExtmulHighI8x16S,
  ...op.i16x8Add, ...op.i32x4ExtaddPairwiseI16x8S, ...accumulate,
];

/**
 * Squared euclidean distance of int8 codes from their dot product and their squared norms (an
 * i32 stored right after each code, at offset len): |a|² + |b|² - 2 a.b, exact in integers.
 */
const normOf = (ptr: number) => [...op.get(ptr), ...op.get(P.len), ...op.i32Add, ...op.i32Load];
const l2NormPre = [...normOf(P.q), ...normOf(P.c), ...op.i32Add];
const l2NormPost = [...op.i32Const(1), ...op.i32Shl, ...op.i32Sub];

/** Hamming distance between bit codes. */
const hammingChunk = [
  ...op.get(P.a), ...op.get(P.b), ...op.v128Xor, ...op.i8x16Popcnt,
  ...op.i16x8ExtaddPairwiseI8x16U, ...op.i32x4ExtaddPairwiseI16x8U, ...accumulate,
];

/**
 * gather(l0, l0n, levels, visited, M0, node, epoch, ids) -> n: copy the layer-0 neighbours of
 * `node` that this search has not visited and that are present into `ids`, marking them visited
 * (visited marks are one byte per slot). `checkLevels` false: every linked node is present
 * (no removal since the last sweep), so the levels are not read.
 */
function gatherKernel(checkLevels: boolean): number[] {
  const G = { l0: 0, l0n: 1, lev: 2, vis: 3, m0: 4, node: 5, epoch: 6, ids: 7, p: 8, end: 9, nb: 10, n: 11 };
  const visAddr = [...op.get(G.vis), ...op.get(G.nb), ...op.i32Add];
  const present = checkLevels
    ? [...op.get(G.lev), ...op.get(G.nb), ...op.i32Add, ...op.i32Load8S, ...op.i32MinusOne, ...op.i32Ne, ...op.i32And]
    : [];
  const body = [
    ...op.get(G.l0), ...op.get(G.node), ...op.get(G.m0), ...op.i32Mul, ...op.i32Const(2), ...op.i32Shl, ...op.i32Add, ...op.set(G.p),
    ...op.get(G.p), ...op.get(G.l0n), ...op.get(G.node), ...op.i32Add, ...op.i32Load8U, ...op.i32Const(2), ...op.i32Shl, ...op.i32Add, ...op.set(G.end),
    ...op.block,
    ...op.loop,
    ...op.get(G.p), ...op.get(G.end), ...op.i32GeU, ...op.brIf(1),
    ...op.get(G.p), ...op.i32Load, ...op.set(G.nb),
    ...visAddr, ...op.i32Load8U, ...op.get(G.epoch), ...op.i32Ne,
    ...present,
    ...op.if,
    ...visAddr, ...op.get(G.epoch), ...op.i32Store8,
    ...op.get(G.ids), ...op.get(G.n), ...op.i32Const(2), ...op.i32Shl, ...op.i32Add, ...op.get(G.nb), ...op.i32Store,
    ...op.get(G.n), ...op.i32Const(1), ...op.i32Add, ...op.set(G.n),
    ...op.end,
    ...op.get(G.p), ...op.i32Const(4), ...op.i32Add, ...op.set(G.p),
    ...op.br(0),
    ...op.end,
    ...op.end,
    ...op.get(G.n),
    ...op.end,
  ];
  const fn = [...vec([[4, I32]]), ...body];
  return [...uleb(fn.length), ...fn];
}

/**
 * gatherMarked(list, n, visited, epoch, out) -> m: of the `n` slots listed (u32) at `list`, copy
 * into `out` those whose visited mark is below `epoch` (unsigned), marking them `epoch`. The
 * mapped walk (mapped-graph.ts) copies a neighbour list out of the memory map to `list`; slots
 * absent from its graph carry the mark 255, above every epoch, so one compare skips both the
 * visited and the absent ones.
 */
function gatherMarkedKernel(): number[] {
  const G = { list: 0, n: 1, vis: 2, epoch: 3, out: 4, end: 5, nb: 6, m: 7 };
  const visAddr = [...op.get(G.vis), ...op.get(G.nb), ...op.i32Add];
  const body = [
    ...op.get(G.list), ...op.get(G.n), ...op.i32Const(2), ...op.i32Shl, ...op.i32Add, ...op.set(G.end),
    ...op.block,
    ...op.loop,
    ...op.get(G.list), ...op.get(G.end), ...op.i32GeU, ...op.brIf(1),
    ...op.get(G.list), ...op.i32Load, ...op.set(G.nb),
    ...visAddr, ...op.i32Load8U, ...op.get(G.epoch), ...op.i32LtU,
    ...op.if,
    ...visAddr, ...op.get(G.epoch), ...op.i32Store8,
    ...op.get(G.out), ...op.get(G.m), ...op.i32Const(2), ...op.i32Shl, ...op.i32Add, ...op.get(G.nb), ...op.i32Store,
    ...op.get(G.m), ...op.i32Const(1), ...op.i32Add, ...op.set(G.m),
    ...op.end,
    ...op.get(G.list), ...op.i32Const(4), ...op.i32Add, ...op.set(G.list),
    ...op.br(0),
    ...op.end,
    ...op.end,
    ...op.get(G.m),
    ...op.end,
  ];
  const fn = [...vec([[3, I32]]), ...body];
  return [...uleb(fn.length), ...fn];
}

function assemble(): Uint8Array {
  const kernels: Array<[string, number[]]> = [
    ['l2i8', batchKernel(l2Chunk)],
    ['doti8', batchKernel(dotChunk)],
    ['hamming', batchKernel(hammingChunk)],
    ['l2i8n', batchKernel(dotChunk, l2NormPre, l2NormPost)],
  ];
  const gathers: Array<[string, number[]]> = [
    ['gather', gatherKernel(true)],
    ['gatherAll', gatherKernel(false)],
  ];
  const marked: Array<[string, number[]]> = [['gatherMarked', gatherMarkedKernel()]];
  const type = section(1, vec([
    [0x60, ...vec(new Array(7).fill([I32])), 0],
    [0x60, ...vec(new Array(8).fill([I32])), 1, I32],
    [0x60, ...vec(new Array(5).fill([I32])), 1, I32],
  ]));
  // shared memory (flag 3: shared, with a maximum), so that a helper thread can walk the graph
  const imports = section(2, vec([[...str('env'), ...str('mem'), 0x02, 0x03, 1, ...uleb(MAX_PAGES)]]));
  const all = [...kernels, ...gathers, ...marked];
  const funcs = section(3, vec([...kernels.map(() => [0]), ...gathers.map(() => [1]), ...marked.map(() => [2])]));
  const exports = section(7, vec(all.map(([name], i) => [...str(name), 0x00, i])));
  const code = section(10, [...uleb(all.length), ...all.flatMap(([, body]) => body)]);
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...type, ...imports, ...funcs, ...exports, ...code]);
}

type BatchFn = (q: number, base: number, stride: number, ids: number, n: number, out: number, len: number) => void;

// The TS lib set of this project (ES2023, no DOM) has no WebAssembly declarations: name the few parts used.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (d: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  validate(bytes: Uint8Array): boolean;
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let compiled: object | null = null;

/** True when this runtime accepts the SIMD module (Node 16.4+). */
export function simdSupported(): boolean {
  return WA.validate(assemble());
}

type GatherFn = (l0: number, l0n: number, levels: number, visited: number, M0: number, node: number, epoch: number, ids: number) => number;
type GatherMarkedFn = (list: number, n: number, visited: number, epoch: number, out: number) => number;

export interface Layout {
  cap: number;
  l0: number;
  l0n: number;
  levels: number;
  visited: number;
  /** The visited marks of a helper thread's searches. */
  visited2: number;
  end: number;
}

function layoutFor(cap: number, stride: number, M0: number): Layout {
  const l0 = CODES_PTR + Math.ceil((cap * stride) / 16) * 16;
  const l0n = l0 + cap * M0 * 4;
  const levels = l0n + cap;
  const visited = Math.ceil((levels + cap) / 16) * 16;
  const visited2 = Math.ceil((visited + cap) / 16) * 16;
  return { cap, l0, l0n, levels, visited, visited2, end: visited2 + cap };
}

/** One linear memory holding codes and layer-0 graph, with the kernels bound to it. */
export class Kernels {
  readonly memory: WasmMemory;
  readonly l2i8: BatchFn;
  readonly doti8: BatchFn;
  readonly hamming: BatchFn;
  /** l2i8 from dot products and the squared norm stored after each code (see `l2NormPre`). */
  readonly l2i8n: BatchFn;
  readonly gather: GatherFn;
  readonly gatherAll: GatherFn;
  readonly gatherMarked: GatherMarkedFn;
  layout: Layout;
  bytes!: Uint8Array;
  ids!: Uint32Array;
  out!: Int32Array;
  /** The whole memory as i32 (index = byte offset / 4). */
  i32!: Int32Array;
  /** The whole memory as 64-bit words (index = byte offset / 8), for copying rows in. */
  i64!: BigInt64Array;
  /** Where this thread's batch ids and distances live, and how many fit. */
  readonly idsPtr: number;
  readonly outPtr: number;
  readonly batch: number;

  /**
   * `shared`: a helper thread's view of another thread's memory (its layout set by `attach`),
   * with its own batch buffers; the helper only reads the graph.
   */
  constructor(
    readonly stride: number,
    readonly M0: number,
    shared?: WasmMemory,
  ) {
    compiled ??= new WA.Module(assemble());
    this.layout = layoutFor(0, stride, M0);
    this.memory = shared ?? new WA.Memory({ initial: Math.ceil(this.layout.end / PAGE) + 1, maximum: MAX_PAGES, shared: true });
    this.idsPtr = shared ? HELPER_IDS_PTR : IDS_PTR;
    this.outPtr = shared ? HELPER_OUT_PTR : OUT_PTR;
    this.batch = shared ? HELPER_BATCH : BATCH;
    const inst = new WA.Instance(compiled, { env: { mem: this.memory } });
    const ex = inst.exports as Record<string, unknown>;
    this.l2i8 = ex.l2i8 as BatchFn;
    this.doti8 = ex.doti8 as BatchFn;
    this.hamming = ex.hamming as BatchFn;
    this.l2i8n = ex.l2i8n as BatchFn;
    this.gather = ex.gather as GatherFn;
    this.gatherAll = ex.gatherAll as GatherFn;
    this.gatherMarked = ex.gatherMarked as GatherMarkedFn;
    this.refreshViews();
  }

  private refreshViews(): void {
    const buf = this.memory.buffer;
    this.bytes = new Uint8Array(buf);
    this.ids = new Uint32Array(buf, this.idsPtr, this.batch);
    this.out = new Int32Array(buf, this.outPtr, this.batch);
    this.i32 = new Int32Array(buf);
    this.i64 = new BigInt64Array(buf);
  }

  /**
   * `bytes` past the layout's end (16-aligned), the memory grown to hold them: room for a
   * caller's own data that no kernel region overlaps. Its address moves when `resize` grows the
   * layout; its content is then lost.
   */
  tail(bytes: number): number {
    const at = Math.ceil(this.layout.end / 16) * 16;
    const have = this.memory.buffer.byteLength;
    if (at + bytes > have) {
      this.memory.grow(Math.ceil((at + bytes - have) / PAGE));
      this.refreshViews();
    }
    return at;
  }

  /**
   * Grow to `cap` slots: the memory grows and each region moves to its new offset (last region
   * first, so nothing is overwritten before it is moved); new entries are empty.
   */
  resize(cap: number): Layout {
    const old = this.layout;
    if (cap <= old.cap) return old;
    const next = layoutFor(cap, this.stride, this.M0);
    const have = this.memory.buffer.byteLength;
    if (next.end > have) this.memory.grow(Math.ceil((next.end - have) / PAGE));
    this.refreshViews();
    const b = this.bytes;
    // Memory past the old end is fresh from `grow`, hence zero: only what was in use is cleared
    // (filling megabytes that are already zero is most of the cost of sizing a large arena).
    const zero = (from: number, to: number) => {
      if (from < Math.min(to, have)) b.fill(0, from, Math.min(to, have));
    };
    zero(next.visited, next.end);
    b.copyWithin(next.levels, old.levels, old.levels + old.cap);
    b.fill(0xff, next.levels + old.cap, next.levels + cap);
    b.copyWithin(next.l0n, old.l0n, old.l0n + old.cap);
    zero(next.l0n + old.cap, next.l0n + cap);
    b.copyWithin(next.l0, old.l0, old.l0 + old.cap * this.M0 * 4);
    zero(next.l0 + old.cap * this.M0 * 4, next.l0 + cap * this.M0 * 4);
    zero(CODES_PTR + old.cap * this.stride, next.l0);
    this.layout = next;
    return next;
  }

  /** Helper threads: take the layout the owning thread has grown the memory to. */
  attach(layout: Layout): void {
    this.layout = layout;
    this.refreshViews();
  }

  codePtr(slot: number): number {
    return CODES_PTR + slot * this.stride;
  }

  /** Memory in bytes held by the arena. */
  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }
}

export { assemble as assembleKernels };
