/**
 * The stored entry of one document (`kw-entries`): the words extracted from each of its fields,
 * as word ids in order with their positions. Proximity, wordPosition, exactness and phrases read
 * it at search time, and a deletion removes exactly what it lists.
 *
 * Encoding (format 1.2.0):
 *
 *   varint fieldCount, then per field:
 *     varint fid, varint n, u8 widths (low nibble: bytes per id, high nibble: bytes per position),
 *     id x n, position x n          (little-endian, 1 to 4 bytes each, as wide as the field needs)
 *
 * Fixed widths per field keep every word at a known offset: the ranking loop reads the ids in
 * place and only the positions of the words the query asks for, with no decoding pass (the
 * proximity rule reads thousands of entries per query at 200k documents). With a dictionary of
 * up to 16M words and fields under 64k positions a word takes 4 or 5 bytes, against 8 as u32
 * pairs in format 1.1.0 (`kw-docs`, 149 MiB at 200k documents).
 */
import { MAX_VALUE_FIELD_WORDS, MAX_VALUE_WORDS, START_WORDS, VALUE_GAP } from './layout.js';

/** One field of a document: word ids and positions, in order. */
export type FieldWords = [fid: number, words: Uint32Array, positions: Uint32Array];
export type DocEntry = FieldWords[];

/** Byte scratch for encoding: at most 5 bytes per header varint, 4 per id and per position. */
let encodeScratch = new Uint8Array(16 * 1024);

function ensureEncodeScratch(bytes: number): Uint8Array {
  if (bytes > encodeScratch.length) encodeScratch = new Uint8Array(Math.max(bytes, encodeScratch.length * 2));
  return encodeScratch;
}

function writeVarint(out: Uint8Array, at: number, value: number): number {
  let v = value >>> 0;
  while (v >= 0x80) {
    out[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[at++] = v;
  return at;
}

const widthOf = (max: number): number => (max < 0x100 ? 1 : max < 0x1_0000 ? 2 : max < 0x100_0000 ? 3 : 4);

function writeUint(out: Uint8Array, at: number, value: number, width: number): number {
  out[at] = value & 0xff;
  if (width > 1) out[at + 1] = (value >>> 8) & 0xff;
  if (width > 2) out[at + 2] = (value >>> 16) & 0xff;
  if (width > 3) out[at + 3] = value >>> 24;
  return at + width;
}

/** The `width`-byte little-endian unsigned integer at `at`. */
export function readUint(raw: Uint8Array, at: number, width: number): number {
  let v = raw[at]!;
  if (width > 1) {
    v |= raw[at + 1]! << 8;
    if (width > 2) {
      v |= raw[at + 2]! << 16;
      if (width > 3) v = (v | (raw[at + 3]! << 24)) >>> 0;
    }
  }
  return v;
}

type EntryFields = ReadonlyArray<readonly [number, ArrayLike<number>, ArrayLike<number>]>;

export function encodeEntry(fields: EntryFields): Buffer {
  const view = encodeEntryView(fields);
  // Small buffers come from Node's shared pool.
  const bytes = Buffer.allocUnsafe(view.length);
  bytes.set(view);
  return bytes;
}

/** The entry's bytes as a view of a shared scratch buffer, valid until the next encoding (for a caller that copies them at once). */
export function encodeEntryView(fields: EntryFields): Uint8Array {
  let bound = 5;
  for (const [, ids] of fields) bound += 11 + 8 * ids.length;
  const out = ensureEncodeScratch(bound);
  let o = writeVarint(out, 0, fields.length);
  for (const [fid, ids, positions] of fields) {
    const n = ids.length;
    let maxId = 0;
    let maxPosition = 0;
    for (let i = 0; i < n; i++) {
      if (ids[i]! > maxId) maxId = ids[i]!;
      if (positions[i]! > maxPosition) maxPosition = positions[i]!;
    }
    const idWidth = widthOf(maxId);
    const positionWidth = widthOf(maxPosition);
    o = writeVarint(out, o, fid);
    o = writeVarint(out, o, n);
    out[o++] = idWidth | (positionWidth << 4);
    for (let i = 0; i < n; i++) o = writeUint(out, o, ids[i]!, idWidth);
    for (let i = 0; i < n; i++) o = writeUint(out, o, positions[i]!, positionWidth);
  }
  return out.subarray(0, o);
}

/**
 * Walks the fields of a stored entry in place. Reusable: `open` an entry, then `nextField` once
 * per field, reading `id(i)` and `position(i)` of the current one. The bytes must stay valid
 * while reading (lmdb's fast reads are valid until the next read).
 */
export class EntryCursor {
  private raw: Uint8Array = new Uint8Array(0);
  private at = 0;
  /** Fields left after the current one. */
  remaining = 0;
  fid = 0;
  n = 0;
  private idsAt = 0;
  private idWidth = 1;
  private positionsAt = 0;
  private positionWidth = 1;

  /** Starts reading `raw`; returns the number of fields. */
  open(raw: Uint8Array): number {
    this.raw = raw;
    this.at = 0;
    this.remaining = this.varint();
    return this.remaining;
  }

  /** Moves to the next field; false when there is none. */
  nextField(): boolean {
    if (this.remaining === 0) return false;
    this.remaining--;
    this.fid = this.varint();
    this.n = this.varint();
    const widths = this.raw[this.at++]!;
    this.idWidth = widths & 0x0f;
    this.positionWidth = widths >>> 4;
    this.idsAt = this.at;
    this.positionsAt = this.idsAt + this.n * this.idWidth;
    this.at = this.positionsAt + this.n * this.positionWidth;
    return true;
  }

  id(i: number): number {
    return readUint(this.raw, this.idsAt + i * this.idWidth, this.idWidth);
  }

  position(i: number): number {
    return readUint(this.raw, this.positionsAt + i * this.positionWidth, this.positionWidth);
  }

  /**
   * The first index from `from` on whose word id is marked in `marks` (`marks[id] !== 0`, an id
   * beyond the table counts as marked), or `n`. The ranking loops skip the words no query term
   * asks for here, one width-specialised loop per field instead of a call per word: most words of
   * a document are no query word, and reading them one by one was a fifth of a `star wars` search.
   */
  nextMarked(marks: Int8Array, from: number): number {
    const raw = this.raw;
    const n = this.n;
    const w = this.idWidth;
    let a = this.idsAt + from * w;
    if (w === 3) {
      for (let i = from; i < n; i++, a += 3) if (marks[raw[a]! | (raw[a + 1]! << 8) | (raw[a + 2]! << 16)] !== 0) return i;
    } else if (w === 2) {
      for (let i = from; i < n; i++, a += 2) if (marks[raw[a]! | (raw[a + 1]! << 8)] !== 0) return i;
    } else if (w === 1) {
      for (let i = from; i < n; i++, a++) if (marks[raw[a]!] !== 0) return i;
    } else {
      for (let i = from; i < n; i++, a += w) if (marks[readUint(raw, a, w)] !== 0) return i;
    }
    return n;
  }

  /** The first index from `from` on whose word id is `id`, or `n` (see `nextMarked`). */
  indexOfId(id: number, from: number): number {
    const raw = this.raw;
    const n = this.n;
    const w = this.idWidth;
    let a = this.idsAt + from * w;
    if (w === 3) {
      for (let i = from; i < n; i++, a += 3) if ((raw[a]! | (raw[a + 1]! << 8) | (raw[a + 2]! << 16)) === id) return i;
    } else {
      for (let i = from; i < n; i++, a += w) if (readUint(raw, a, w) === id) return i;
    }
    return n;
  }

  private varint(): number {
    let b = this.raw[this.at++]!;
    if (b < 0x80) return b;
    let v = b & 0x7f;
    let scale = 0x80;
    do {
      b = this.raw[this.at++]!;
      v += (b & 0x7f) * scale;
      scale *= 0x80;
    } while (b >= 0x80);
    return v;
  }
}

const sharedCursor = new EntryCursor();

export function decodeEntry(raw: Uint8Array): DocEntry {
  const c = sharedCursor;
  const entry: DocEntry = [];
  c.open(raw);
  while (c.nextField()) {
    const ids = new Uint32Array(c.n);
    const positions = new Uint32Array(c.n);
    for (let i = 0; i < c.n; i++) {
      ids[i] = c.id(i);
      positions[i] = c.position(i);
    }
    entry.push([c.fid, ids, positions]);
  }
  return entry;
}

/**
 * Exactness of a stored entry against query word ids, as the exactness rule computes it from
 * posting lists for a large bucket (ranking/rules.ts), so that a document ranks the same in any
 * bucket: 0 when a value (array element or sentence) is exactly the query, counting the values
 * `kw-values` holds (MAX_VALUE_WORDS words at most, in fields of MAX_VALUE_FIELD_WORDS words at
 * most); 1 when a field starts with the query (its first START_WORDS words at least); -1 otherwise.
 */
export function entryExactness(raw: Uint8Array, wanted: readonly number[]): number {
  const m = wanted.length;
  const c = sharedCursor;
  c.open(raw);
  const checked = Math.min(m, START_WORDS);
  const first = wanted[0];
  let start = false;
  while (c.nextField()) {
    const n = c.n;
    if (!start) {
      let k = 0;
      while (k < checked && k < n && c.id(k) === wanted[k] && c.position(k) === k) k++;
      // (an empty query: any field with words)
      start = k === checked && n > 0;
    }
    if (m === 0 || m > MAX_VALUE_WORDS || n > MAX_VALUE_FIELD_WORDS) continue;
    // Only where the first query word occurs can a value equal the query.
    for (let s = c.indexOfId(first!, 0); s + m <= n; s = c.indexOfId(first!, s + 1)) {
      if (s > 0 && c.position(s) - c.position(s - 1) < VALUE_GAP) continue;
      let ok = true;
      for (let k = 1; k < m && ok; k++) ok = c.id(s + k) === wanted[k] && c.position(s + k) - c.position(s + k - 1) < VALUE_GAP;
      if (ok && (s + m === n || c.position(s + m) - c.position(s + m - 1) >= VALUE_GAP)) return 0;
    }
  }
  return start ? 1 : -1;
}

