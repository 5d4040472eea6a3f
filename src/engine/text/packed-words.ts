/**
 * A sorted list of distinct words packed in typed arrays, front-coded. An index's word dictionary
 * holds every distinct word, and one JS string per word cost about 38 bytes a word (523,000
 * strings, 14.4 MB, when 500,000 document ids are searchable words); packed it holds no string and
 * nothing for the garbage collector to trace. Words are read by index: their length, a code unit
 * at a depth, comparisons with a key; a JS string is made only for a word handed out (`word`).
 *
 * Front coding: the words go by blocks of BLOCK; the first word of a block (its head) is kept
 * whole, each other word as the number of units it shares with the head (`shared`, at most 255)
 * and the rest of its units. Sorted words share long prefixes (sorted ids: all but a unit or two),
 * so a word costs its few own units plus 2 bytes (shared count and end), where a flat layout cost
 * all its units plus a 4-byte start (500,000 ids: 4.7 MB flat). Sharing with the head rather than
 * with the previous word keeps every unit one read away: unit d of word i is the head's when
 * d < shared[i], else its own; nothing is decoded to walk, compare or search.
 *
 * Code units, not UTF-8 bytes: the order (JS string order), the lengths and the unit the typo
 * automaton compares are those of the strings the dictionary replaces, so its answers do not move.
 * One byte per unit while every unit is below 256, two otherwise.
 */
export class PackedWords {
  /** Number of words. */
  readonly size: number;
  private readonly bytes: Buffer;
  private readonly wide: boolean;

  constructor(
    /** Each block's units: its head whole, then each other word's own units. */
    private readonly units: Uint8Array | Uint16Array,
    /** blocks + 1 offsets into `units`: block b is units[bases[b], bases[b + 1]). */
    private readonly bases: Uint32Array,
    /** The end of word i's own units, relative to its block's base (they start at word i - 1's end, or 0 for a head). */
    private readonly ends: Uint8Array | Uint16Array | Uint32Array,
    /** Units word i shares with its block's head (0 for a head). */
    private readonly shared: Uint8Array,
  ) {
    this.size = shared.length;
    this.wide = units.BYTES_PER_ELEMENT === 2;
    this.bytes = Buffer.from(units.buffer, units.byteOffset, units.byteLength);
  }

  /** Packs `words` (any order, distinct), sorted in JS string order. */
  static from(words: Iterable<string>): PackedWords {
    const builder = new PackedWordsBuilder();
    for (const word of words) builder.add(word);
    return builder.finish();
  }

  /** Bytes held. */
  get byteLength(): number {
    return this.units.byteLength + this.bases.byteLength + this.ends.byteLength + this.shared.byteLength;
  }

  /** The arrays it is made of, as the constructor takes them (to store it whole, see keyword/lexicon.ts). */
  parts(): [units: Uint8Array | Uint16Array, bases: Uint32Array, ends: Uint8Array | Uint16Array | Uint32Array, shared: Uint8Array] {
    return [this.units, this.bases, this.ends, this.shared];
  }

  /** Where word i's own units start, relative to its block's base. */
  private own(i: number): number {
    return (i & IN_BLOCK) === 0 ? 0 : this.ends[i - 1]!;
  }

  length(i: number): number {
    return this.shared[i]! + this.ends[i]! - this.own(i);
  }

  /** The code unit of word `i` at `depth`, -1 past its end (a shorter word sorts first). */
  code(i: number, depth: number): number {
    const base = this.bases[i >>> BLOCK_BITS]!;
    const s = this.shared[i]!;
    if (depth < s) return this.units[base + depth]!;
    const at = this.own(i) + depth - s;
    return at < this.ends[i]! ? this.units[base + at]! : -1;
  }

  /** Word `i` as a string (made on each call). */
  word(i: number): string {
    const base = this.bases[i >>> BLOCK_BITS]!;
    const s = this.shared[i]!;
    const a = base + this.own(i);
    const b = base + this.ends[i]!;
    // A surrogate pair split between the head's part and the word's own joins again when the
    // two strings are concatenated (utf16le keeps lone surrogates as they are).
    if (this.wide) {
      const rest = this.bytes.toString('utf16le', 2 * a, 2 * b);
      return s === 0 ? rest : this.bytes.toString('utf16le', 2 * base, 2 * (base + s)) + rest;
    }
    const rest = this.bytes.toString('latin1', a, b);
    return s === 0 ? rest : this.bytes.toString('latin1', base, base + s) + rest;
  }

  /** Words [lo, hi) as strings. */
  slice(lo: number, hi: number): string[] {
    const out = new Array<string>(Math.max(0, hi - lo));
    for (let k = lo; k < hi; k++) out[k - lo] = this.word(k);
    return out;
  }

  /** Sign of word `i` compared with `key`, in JS string order. */
  compare(i: number, key: string): number {
    const units = this.units;
    const base = this.bases[i >>> BLOCK_BITS]!;
    const s = this.shared[i]!;
    const own = this.own(i);
    const n = s + this.ends[i]! - own;
    const m = key.length;
    const end = n < m ? n : m;
    let d = 0;
    for (const head = s < end ? s : end; d < head; d++) {
      const x = units[base + d]!;
      const y = key.charCodeAt(d);
      if (x !== y) return x < y ? -1 : 1;
    }
    for (const at = base + own - s; d < end; d++) {
      const x = units[at + d]!;
      const y = key.charCodeAt(d);
      if (x !== y) return x < y ? -1 : 1;
    }
    return n === m ? 0 : n < m ? -1 : 1;
  }

  startsWith(i: number, prefix: string): boolean {
    const units = this.units;
    const base = this.bases[i >>> BLOCK_BITS]!;
    const s = this.shared[i]!;
    const own = this.own(i);
    const m = prefix.length;
    if (s + this.ends[i]! - own < m) return false;
    let d = 0;
    for (const head = s < m ? s : m; d < head; d++) if (units[base + d] !== prefix.charCodeAt(d)) return false;
    for (const at = base + own - s; d < m; d++) if (units[at + d] !== prefix.charCodeAt(d)) return false;
    return true;
  }

  /** First index whose word is not below `key`. */
  lowerBound(key: string): number {
    // The heads first (one block in BLOCK words), then the words of the block found.
    let a = 0;
    let b = (this.size + IN_BLOCK) >>> BLOCK_BITS;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.compare(mid << BLOCK_BITS, key) < 0) a = mid + 1;
      else b = mid;
    }
    // Block a's head is the first head not below key: the answer is in block a - 1 or is a's head.
    if (a === 0) return 0;
    let lo = (a - 1) << BLOCK_BITS;
    let hi = Math.min(this.size, a << BLOCK_BITS);
    lo++;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(mid, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of `key`, -1 when absent. */
  indexOf(key: string): number {
    const i = this.lowerBound(key);
    return i < this.size && this.compare(i, key) === 0 ? i : -1;
  }

  /**
   * These words with `added` (sorted in JS string order, none of them here) and without the
   * words at the indexes `dropped`, and for each word of the result the index it had here (-1 for
   * an added one): a batch's changes to a dictionary, at the cost of copying its units once,
   * without a string per word.
   */
  merged(added: readonly string[], dropped: ReadonlySet<number>): { words: PackedWords; from: Int32Array } {
    const count = this.size - dropped.size + added.length;
    let units = 0;
    let wide = this.wide;
    for (const word of added) {
      units += word.length;
      for (let d = 0; d < word.length && !wide; d++) if (word.charCodeAt(d) > 0xff) wide = true;
    }
    for (let i = 0; i < this.size; i++) if (!dropped.has(i)) units += this.length(i);
    const flat = new Uint16Array(units);
    const starts = new Uint32Array(count + 1);
    const from = new Int32Array(count);
    let k = 0;
    let used = 0;
    let j = 0;
    const emitAdded = () => {
      const word = added[j++]!;
      for (let d = 0; d < word.length; d++) flat[used + d] = word.charCodeAt(d);
      used += word.length;
      from[k++] = -1;
      starts[k] = used;
    };
    for (let i = 0; i < this.size; i++) {
      if (dropped.has(i)) continue;
      while (j < added.length && this.compare(i, added[j]!) > 0) emitAdded();
      used = this.copyUnits(i, flat, used);
      from[k++] = i;
      starts[k] = used;
    }
    while (j < added.length) emitAdded();
    return { words: frontCode(flat, starts, count, wide), from };
  }

  /** Copies word `i`'s units into `out` at `at`; returns where they end. */
  private copyUnits(i: number, out: Uint16Array, at: number): number {
    const units = this.units;
    const base = this.bases[i >>> BLOCK_BITS]!;
    const s = this.shared[i]!;
    for (let d = 0; d < s; d++) out[at++] = units[base + d]!;
    for (let u = base + this.own(i), end = base + this.ends[i]!; u < end; u++) out[at++] = units[u]!;
    return at;
  }

  /** Sign of word `i` compared with word `j`. */
  compareAt(i: number, j: number): number {
    const n = this.length(i);
    const m = this.length(j);
    for (let d = 0, end = n < m ? n : m; d < end; d++) {
      const x = this.code(i, d);
      const y = this.code(j, d);
      if (x !== y) return x < y ? -1 : 1;
    }
    return n === m ? 0 : n < m ? -1 : 1;
  }
}

/** Words per block: a power of two (a word's block is its index shifted). */
const BLOCK_BITS = 4;
const IN_BLOCK = (1 << BLOCK_BITS) - 1;
/** Most units a word may share with its head (`shared` is a byte). */
const MAX_SHARED = 255;

/**
 * Packs words added one at a time. Meant for words that mostly arrive in order (LMDB's key order,
 * UTF-8 bytes, is JS string order but where a word holds units from both the surrogate range and
 * U+E000-U+FFFF): `finish` sorts only when some word came out of order. The words' strings can be
 * dropped as soon as they are added, so they die young.
 */
export class PackedWordsBuilder {
  // Two bytes per unit while building (one array type: the loop stays monomorphic), narrowed to
  // one byte by `finish` when every unit fits. The growing arrays live in resizable buffers: they
  // grow in place, and their pages go back to the system at `finish` (released by resizing to
  // zero). Grown by copies, the 500,000 ids' arrays had left about 4 MB of freed native memory
  // in the process that the allocator kept, besides the dictionary itself.
  private readonly unitBuffer = resizableBuffer(MAX_BUILD_BYTES);
  private readonly startBuffer = resizableBuffer(MAX_BUILD_BYTES);
  private units = new Uint16Array(0);
  private starts = new Uint32Array(0);
  private count = 0;
  private used = 0;
  private widest = 0;
  private sorted = true;
  private previous: string | null = null;

  constructor() {
    this.starts = this.grow(this.startBuffer, Uint32Array, 1 << 10);
    this.units = this.grow(this.unitBuffer, Uint16Array, 1 << 12);
  }

  add(word: string): void {
    const n = word.length;
    if (this.count + 2 > this.starts.length) this.starts = this.grow(this.startBuffer, Uint32Array, this.starts.length * 2);
    if (this.used + n > this.units.length) this.units = this.grow(this.unitBuffer, Uint16Array, Math.max(this.units.length * 2, this.used + n));
    const units = this.units;
    const at = this.used;
    let widest = this.widest;
    for (let d = 0; d < n; d++) {
      const c = word.charCodeAt(d);
      units[at + d] = c;
      if (c > widest) widest = c;
    }
    this.widest = widest;
    this.used += n;
    this.count++;
    this.starts[this.count] = this.used;
    if (this.sorted && this.previous !== null && !(this.previous < word)) this.sorted = false;
    this.previous = word;
  }

  finish(): PackedWords {
    const units = this.units;
    const starts = this.starts;
    const order = this.sorted ? null : sortedOrder(units, starts, this.count);
    const packed = frontCode(units, starts, order ?? this.count, this.widest > 0xff);
    this.units = new Uint16Array(0);
    this.starts = new Uint32Array(0);
    this.unitBuffer.resize(0);
    this.startBuffer.resize(0);
    return packed;
  }

  /** A fixed-length view of `buffer` resized to `length` elements. */
  private grow<T extends Uint16Array | Uint32Array>(buffer: ResizableBuffer, type: { new (buffer: ArrayBuffer, offset: number, length: number): T; BYTES_PER_ELEMENT: number }, length: number): T {
    buffer.resize(length * type.BYTES_PER_ELEMENT);
    return new type(buffer, 0, length);
  }
}

/** Address space reserved for a builder's array (not memory: pages are used as it grows). */
const MAX_BUILD_BYTES = 2 ** 30;

/** ES2024's resizable ArrayBuffer (Node 20 has it; the project's TypeScript lib predates it). */
interface ResizableBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}

function resizableBuffer(maxByteLength: number): ResizableBuffer {
  return new (ArrayBuffer as unknown as new (length: number, options: { maxByteLength: number }) => ResizableBuffer)(0, { maxByteLength });
}

/** Sign of flat word i compared with flat word j (units by `starts`), in JS string order. */
function compareFlat(units: Uint16Array, starts: Uint32Array, i: number, j: number): number {
  const a = starts[i]!;
  const b = starts[j]!;
  const n = starts[i + 1]! - a;
  const m = starts[j + 1]! - b;
  for (let d = 0, end = n < m ? n : m; d < end; d++) {
    const x = units[a + d]!;
    const y = units[b + d]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return n === m ? 0 : n < m ? -1 : 1;
}

/** The flat words' indexes in JS string order, duplicates dropped. */
function sortedOrder(units: Uint16Array, starts: Uint32Array, count: number): Uint32Array {
  const order = new Uint32Array(count);
  for (let k = 0; k < count; k++) order[k] = k;
  order.sort((i, j) => compareFlat(units, starts, i, j));
  let kept = 0;
  for (let k = 0; k < count; k++) if (kept === 0 || compareFlat(units, starts, order[kept - 1]!, order[k]!) !== 0) order[kept++] = order[k]!;
  return order.subarray(0, kept);
}

/**
 * Front-codes the flat words (units by `starts`), taken in `order` (indexes) or all `count` in
 * turn: a first pass finds what each word shares with its head and the size of each block, which
 * chooses the narrowest array for the ends; a second copies the units.
 */
function frontCode(flat: Uint16Array, starts: Uint32Array, order: Uint32Array | number, wide: boolean): PackedWords {
  const size = typeof order === 'number' ? order : order.length;
  const at = typeof order === 'number' ? (k: number) => k : (k: number) => order[k]!;
  const blocks = (size + IN_BLOCK) >>> BLOCK_BITS;
  const shared = new Uint8Array(size);
  const bases = new Uint32Array(blocks + 1);
  let total = 0;
  let widestBlock = 0;
  let head = 0;
  for (let k = 0; k < size; k++) {
    const w = at(k);
    const a = starts[w]!;
    const n = starts[w + 1]! - a;
    if ((k & IN_BLOCK) === 0) {
      head = w;
      bases[k >>> BLOCK_BITS] = total;
      total += n;
      continue;
    }
    const h = starts[head]!;
    const limit = Math.min(n, starts[head + 1]! - h, MAX_SHARED);
    let s = 0;
    while (s < limit && flat[a + s] === flat[h + s]) s++;
    shared[k] = s;
    total += n - s;
    if ((k & IN_BLOCK) === IN_BLOCK) widestBlock = Math.max(widestBlock, total - bases[k >>> BLOCK_BITS]!);
  }
  bases[blocks] = total;
  if (blocks > 0) widestBlock = Math.max(widestBlock, total - bases[blocks - 1]!);
  const units = wide ? new Uint16Array(total) : new Uint8Array(total);
  const ends = widestBlock <= 0xff ? new Uint8Array(size) : widestBlock <= 0xffff ? new Uint16Array(size) : new Uint32Array(size);
  let used = 0;
  for (let k = 0; k < size; k++) {
    const w = at(k);
    const a = starts[w]! + shared[k]!;
    const b = starts[w + 1]!;
    for (let u = a; u < b; u++) units[used++] = flat[u]!;
    ends[k] = used - bases[k >>> BLOCK_BITS]!;
  }
  return new PackedWords(units, bases, ends, shared);
}
