/**
 * A sorted list of distinct words packed in two typed arrays: every word's UTF-16 code units one
 * after the other (one byte per unit while every unit is below 256, two otherwise) and the start
 * of each word. An index's word dictionary holds every distinct word, and one JS string per word
 * cost about 38 bytes a word (523,000 strings, 14.4 MB, when 500,000 document ids are searchable
 * words); packed it costs the units plus 4 bytes, outside V8's heap, and nothing for the garbage
 * collector to trace. Words are read by index: their length, a code unit at a depth, comparisons
 * with a key; a JS string is made only for a word handed out (`word`).
 *
 * Code units, not UTF-8 bytes: the order (JS string order), the lengths and the unit the typo
 * automaton compares are those of the strings the dictionary replaces, so its answers do not move.
 */
export class PackedWords {
  /** Number of words. */
  readonly size: number;
  private readonly bytes: Buffer;

  constructor(
    private readonly units: Uint8Array | Uint16Array,
    /** size + 1 offsets into `units`: word i is units[starts[i], starts[i + 1]). */
    private readonly starts: Uint32Array,
  ) {
    this.size = starts.length - 1;
    this.bytes = Buffer.from(units.buffer, units.byteOffset, units.byteLength);
  }

  /** Packs `words` (any order, distinct), sorted in JS string order. */
  static from(words: Iterable<string>): PackedWords {
    const builder = new PackedWordsBuilder();
    for (const word of words) builder.add(word);
    return builder.finish();
  }

  /** Bytes held (units and offsets). */
  get byteLength(): number {
    return this.units.byteLength + this.starts.byteLength;
  }

  length(i: number): number {
    return this.starts[i + 1]! - this.starts[i]!;
  }

  /** The code unit of word `i` at `depth`, -1 past its end (a shorter word sorts first). */
  code(i: number, depth: number): number {
    const at = this.starts[i]! + depth;
    return at < this.starts[i + 1]! ? this.units[at]! : -1;
  }

  /** Word `i` as a string (made on each call). */
  word(i: number): string {
    const a = this.starts[i]!;
    const b = this.starts[i + 1]!;
    return this.units.BYTES_PER_ELEMENT === 1 ? this.bytes.toString('latin1', a, b) : this.bytes.toString('utf16le', 2 * a, 2 * b);
  }

  /** Words [lo, hi) as strings. */
  slice(lo: number, hi: number): string[] {
    const out = new Array<string>(Math.max(0, hi - lo));
    for (let k = lo; k < hi; k++) out[k - lo] = this.word(k);
    return out;
  }

  /** Sign of word `i` compared with `key`, in JS string order. */
  compare(i: number, key: string): number {
    const a = this.starts[i]!;
    const n = this.starts[i + 1]! - a;
    const m = key.length;
    const units = this.units;
    for (let d = 0, end = n < m ? n : m; d < end; d++) {
      const x = units[a + d]!;
      const y = key.charCodeAt(d);
      if (x !== y) return x < y ? -1 : 1;
    }
    return n === m ? 0 : n < m ? -1 : 1;
  }

  startsWith(i: number, prefix: string): boolean {
    const a = this.starts[i]!;
    const m = prefix.length;
    if (this.starts[i + 1]! - a < m) return false;
    const units = this.units;
    for (let d = 0; d < m; d++) if (units[a + d] !== prefix.charCodeAt(d)) return false;
    return true;
  }

  /** First index whose word is not below `key`. */
  lowerBound(key: string): number {
    let a = 0;
    let b = this.size;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.compare(mid, key) < 0) a = mid + 1;
      else b = mid;
    }
    return a;
  }

  /** Index of `key`, -1 when absent. */
  indexOf(key: string): number {
    const i = this.lowerBound(key);
    return i < this.size && this.compare(i, key) === 0 ? i : -1;
  }

  /** Sign of word `i` compared with word `j`. */
  compareAt(i: number, j: number): number {
    const a = this.starts[i]!;
    const b = this.starts[j]!;
    const n = this.starts[i + 1]! - a;
    const m = this.starts[j + 1]! - b;
    const units = this.units;
    for (let d = 0, end = n < m ? n : m; d < end; d++) {
      const x = units[a + d]!;
      const y = units[b + d]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    return n === m ? 0 : n < m ? -1 : 1;
  }
}

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
    const wide = this.units.subarray(0, this.used);
    const units = this.widest > 0xff ? wide.slice() : new Uint8Array(this.used);
    if (units.BYTES_PER_ELEMENT === 1) units.set(wide);
    const packed = new PackedWords(units, this.starts.slice(0, this.count + 1));
    this.units = new Uint16Array(0);
    this.starts = new Uint32Array(0);
    this.unitBuffer.resize(0);
    this.startBuffer.resize(0);
    return this.sorted ? packed : sortPacked(packed);
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

/** `packed` in JS string order, duplicates dropped. */
function sortPacked(packed: PackedWords): PackedWords {
  const order = Array.from({ length: packed.size }, (_, i) => i);
  order.sort((i, j) => packed.compareAt(i, j));
  const builder = new PackedWordsBuilder();
  let previous = -1;
  for (const i of order) {
    if (previous >= 0 && packed.compareAt(previous, i) === 0) continue;
    builder.add(packed.word(i));
    previous = i;
  }
  return builder.finish();
}
