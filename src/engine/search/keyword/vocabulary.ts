/**
 * Word <-> id for every indexed word (kw-id-blocks, see layout.ts), as a search reads it: the id
 * of a query's word, whether the word of an id in a document's entry starts with a prefix, and
 * the id of each typo-dictionary word. Packed, as the word dictionary is (packed-words.ts): the
 * words' UTF-16 code units by id in one typed array with their offsets, and an open-addressing
 * hash table of ids keyed by those units. A `Map` of every word to its id and an array of the
 * words held one JS string and one map entry per distinct word (tens of MB of V8 heap when
 * 500,000 document ids are searchable words); this holds about 14 bytes a word plus the units,
 * outside the heap, and makes no string per word while loading.
 */
import type { PackedWords } from '../../text/packed-words.js';

/** Slots per word in the hash table, at least (a load factor of 2/3 at most). */
const SLACK = 1.5;

export class Vocabulary {
  /** Two bytes a unit while loading, one after it when every unit fits. */
  private units: Uint8Array | Uint16Array = new Uint16Array(1 << 12);
  /** starts[id] .. starts[id + 1]: the word of `id` (empty where the id has none). */
  private starts = new Uint32Array(1 << 10);
  private used = 0;
  private widest = 0;
  /** Ids by hash slot, -1 for an empty slot. */
  private table = new Int32Array(0);
  /** One more than the largest id with a word: the size of tables indexed by word id. */
  size = 0;

  /** From the blocks of kw-id-blocks, ascending (`base`: the first id of the block). */
  static load(blocks: Iterable<{ base: number; words: ReadonlyArray<string | null> }>): Vocabulary {
    const v = new Vocabulary();
    let count = 0;
    for (const { base, words } of blocks)
      words.forEach((word, i) => {
        if (word === null || word === undefined) return;
        v.put(base + i, word);
        count++;
      });
    v.index(count);
    return v;
  }

  /** The arrays it is made of (to store it whole, see lexicon.ts); `fromParts` takes them back. */
  parts(): [units: Uint8Array | Uint16Array, starts: Uint32Array, table: Int32Array] {
    return [this.units, this.starts, this.table];
  }

  /** This vocabulary with `added` words under new ids (ascending), its hash table built again. */
  extended(added: ReadonlyArray<readonly [id: number, word: string]>): Vocabulary {
    const v = new Vocabulary();
    const units = new Uint16Array(Math.max(16, this.used * 2));
    units.set(this.units.subarray(0, this.used));
    v.units = units;
    v.starts = new Uint32Array(Math.max(16, this.starts.length * 2));
    v.starts.set(this.starts);
    v.used = this.used;
    v.size = this.size;
    v.widest = this.units instanceof Uint16Array ? 0x100 : 0;
    for (const [id, word] of added) v.put(id, word);
    v.index(v.size);
    return v;
  }

  static fromParts(units: Uint8Array | Uint16Array, starts: Uint32Array<ArrayBuffer>, table: Int32Array<ArrayBuffer>): Vocabulary {
    const v = new Vocabulary();
    v.units = units;
    v.starts = starts;
    v.table = table;
    v.size = starts.length - 1;
    v.used = starts[v.size] ?? 0;
    return v;
  }

  /** Bytes held. */
  get byteLength(): number {
    return this.units.byteLength + this.starts.byteLength + this.table.byteLength;
  }

  private put(id: number, word: string): void {
    if (id + 2 > this.starts.length) this.starts = grown(this.starts, Math.max(this.starts.length * 2, id + 2));
    // Ids without a word in between stay empty.
    for (let k = this.size + 1; k <= id; k++) this.starts[k] = this.used;
    const n = word.length;
    if (this.used + n > this.units.length) this.units = grown(this.units as Uint16Array, Math.max(this.units.length * 2, this.used + n));
    const units = this.units;
    for (let d = 0; d < n; d++) {
      const c = word.charCodeAt(d);
      units[this.used + d] = c;
      if (c > this.widest) this.widest = c;
    }
    this.used += n;
    this.starts[id + 1] = this.used;
    this.size = id + 1;
  }

  /** Builds the hash table; a word met under several ids keeps the newest (ascending ids). */
  private index(count: number): void {
    const wide = this.units.subarray(0, this.used);
    if (this.widest > 0xff) this.units = wide.slice();
    else {
      this.units = new Uint8Array(this.used);
      this.units.set(wide);
    }
    this.starts = this.starts.slice(0, this.size + 1);
    let slots = 16;
    while (slots < count * SLACK) slots *= 2;
    const table = new Int32Array(slots).fill(-1);
    const mask = slots - 1;
    const { units, starts } = this;
    for (let id = 0; id < this.size; id++) {
      const a = starts[id]!;
      const b = starts[id + 1]!;
      if (a === b) continue; // no word (words are never empty)
      let slot = hashUnits(units, a, b) & mask;
      for (;;) {
        const there = table[slot]!;
        if (there < 0) {
          table[slot] = id;
          break;
        }
        if (this.sameWord(there, id)) {
          table[slot] = id;
          break;
        }
        slot = (slot + 1) & mask;
      }
    }
    this.table = table;
  }

  private sameWord(x: number, y: number): boolean {
    const { units, starts } = this;
    const a = starts[x]!;
    const n = starts[x + 1]! - a;
    const b = starts[y]!;
    if (starts[y + 1]! - b !== n) return false;
    for (let d = 0; d < n; d++) if (units[a + d] !== units[b + d]) return false;
    return true;
  }

  /** The id of `word`, undefined when it has none. */
  idOf(word: string): number | undefined {
    if (this.table.length === 0) return undefined;
    const mask = this.table.length - 1;
    const { units, starts, table } = this;
    const n = word.length;
    let slot = hashString(word) & mask;
    for (;;) {
      const id = table[slot]!;
      if (id < 0) return undefined;
      const a = starts[id]!;
      if (starts[id + 1]! - a === n) {
        let d = 0;
        while (d < n && units[a + d] === word.charCodeAt(d)) d++;
        if (d === n) return id;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** The id of word `i` of `words`, -1 when it has none. */
  idOfPacked(words: PackedWords, i: number): number {
    if (this.table.length === 0) return -1;
    const mask = this.table.length - 1;
    const { units, starts, table } = this;
    const n = words.length(i);
    let h = FNV_OFFSET;
    for (let d = 0; d < n; d++) h = Math.imul(h ^ words.code(i, d), FNV_PRIME);
    let slot = h & mask;
    for (;;) {
      const id = table[slot]!;
      if (id < 0) return -1;
      const a = starts[id]!;
      if (starts[id + 1]! - a === n) {
        let d = 0;
        while (d < n && units[a + d] === words.code(i, d)) d++;
        if (d === n) return id;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** Whether the word of `id` starts with `prefix` (false for an id without a word). */
  startsWith(id: number, prefix: string): boolean {
    // Called for every word of every document a search with a short prefix reads: the first
    // unit decides for most words.
    if (id < 0 || id >= this.size) return false;
    const { starts, units } = this;
    const a = starts[id]!;
    const m = prefix.length;
    if (starts[id + 1]! - a < m || units[a] !== prefix.charCodeAt(0)) return false;
    for (let d = 1; d < m; d++) if (units[a + d] !== prefix.charCodeAt(d)) return false;
    return true;
  }

  /** The word of `id`, undefined when it has none. */
  word(id: number): string | undefined {
    if (id < 0 || id >= this.size) return undefined;
    const a = this.starts[id]!;
    const b = this.starts[id + 1]!;
    if (a === b) return undefined;
    return String.fromCharCode(...this.units.subarray(a, b));
  }
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

function hashUnits(units: Uint8Array | Uint16Array, a: number, b: number): number {
  let h = FNV_OFFSET;
  for (let k = a; k < b; k++) h = Math.imul(h ^ units[k]!, FNV_PRIME);
  return h;
}

function hashString(word: string): number {
  let h = FNV_OFFSET;
  for (let d = 0; d < word.length; d++) h = Math.imul(h ^ word.charCodeAt(d), FNV_PRIME);
  return h;
}

function grown<T extends Uint16Array | Uint32Array>(array: T, length: number): T {
  const out = new (array.constructor as new (length: number) => T)(length);
  out.set(array);
  return out;
}
