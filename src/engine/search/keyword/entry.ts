/**
 * The stored entry of one document (`kw-entries`): the words extracted from each of its fields,
 * as word ids in order with their positions. Proximity, wordPosition, exactness and phrases read
 * it at search time, and a deletion removes exactly what it lists.
 *
 * Encoding (format 1.2.0): unsigned LEB128 varints
 *
 *   fieldCount, then per field: fid, n, id x n, position delta x n
 *
 * where the first delta is the first position and each next one the zigzag-encoded difference
 * from the previous position (positions only grow within a field, but a zigzag keeps any order
 * exact). Ids below 2^21 take at most 3 bytes and most deltas 1, against 8 bytes per word as u32
 * pairs in format 1.1.0: the database shrank from 149 to about 50 MiB at 200k documents, and the
 * dictionary pages a batch rewrites share the map with fewer entry pages.
 *
 * Readers decode into the u32 layout `[fieldCount, (fid, n, id x n, position x n)...]`, which the
 * ranking loops index directly.
 */
import { VALUE_GAP } from './layout.js';

/** One field of a document: word ids and positions, in order. */
export type FieldWords = [fid: number, words: Uint32Array, positions: Uint32Array];
export type DocEntry = FieldWords[];

/** Byte scratch for encoding: at most 5 bytes per u32. */
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

const zigzag = (d: number): number => ((d << 1) ^ (d >> 31)) >>> 0;

export function encodeEntry(fields: ReadonlyArray<[number, ArrayLike<number>, ArrayLike<number>]>): Buffer {
  let bound = 5;
  for (const [, ids] of fields) bound += 10 + 10 * ids.length;
  const out = ensureEncodeScratch(bound);
  let o = writeVarint(out, 0, fields.length);
  for (const [fid, ids, positions] of fields) {
    const n = ids.length;
    o = writeVarint(out, o, fid);
    o = writeVarint(out, o, n);
    for (let i = 0; i < n; i++) o = writeVarint(out, o, ids[i]!);
    let previous = 0;
    for (let i = 0; i < n; i++) {
      const p = positions[i]!;
      o = writeVarint(out, o, i === 0 ? p : zigzag(p - previous));
      previous = p;
    }
  }
  // Small buffers come from Node's shared pool.
  const bytes = Buffer.allocUnsafe(o);
  bytes.set(out.subarray(0, o));
  return bytes;
}

/**
 * Decodes `raw` into `out` in the u32 layout; returns the number of u32s written. `out` must hold
 * at least `raw.length` values (every varint takes at least one byte). Takes `length` apart from
 * `raw` because lmdb's fast reads hand out a shared buffer whose `length` is the value's size.
 */
export function decodeEntryWords(raw: Uint8Array, length: number, out: Uint32Array): number {
  // The varints map one to one onto the u32 layout: decode them all in one tight loop, then turn
  // each field's position deltas back into positions.
  let o = 0;
  for (let at = 0; at < length; ) {
    let b = raw[at++]!;
    if (b < 0x80) {
      out[o++] = b;
      continue;
    }
    let v = b & 0x7f;
    let scale = 0x80;
    do {
      b = raw[at++]!;
      v += (b & 0x7f) * scale;
      scale *= 0x80;
    } while (b >= 0x80 && at < length);
    out[o++] = v;
  }
  const count = out[0]!;
  let f = 1;
  for (let field = 0; field < count; field++) {
    const n = out[f + 1]!;
    const pos = f + 2 + n;
    let p = out[pos]!;
    for (let i = 1; i < n; i++) {
      const z = out[pos + i]!;
      p += (z >>> 1) ^ -(z & 1);
      out[pos + i] = p;
    }
    f = pos + n;
  }
  return o;
}

/** Decode scratch for readers that only look (exactness): grown as needed, never shrunk. */
let decodeScratch = new Uint32Array(4096);

function scratchFor(length: number): Uint32Array {
  if (length > decodeScratch.length) decodeScratch = new Uint32Array(Math.max(length, decodeScratch.length * 2));
  return decodeScratch;
}

export function decodeEntry(raw: Uint8Array, length = raw.length): DocEntry {
  const scratch = scratchFor(length);
  const size = decodeEntryWords(raw, length, scratch);
  const words = scratch.slice(0, size);
  const entry: DocEntry = [];
  const count = words[0]!;
  let o = 1;
  for (let f = 0; f < count; f++) {
    const fid = words[o++]!;
    const n = words[o++]!;
    entry.push([fid, words.subarray(o, o + n), words.subarray(o + n, o + 2 * n)]);
    o += 2 * n;
  }
  return entry;
}


/**
 * Exactness of a stored entry against query word ids: 0 when a value (array element or sentence)
 * is exactly the query, 1 when one starts with it, -1 otherwise.
 */
export function entryExactness(raw: Uint8Array, length: number, wanted: readonly number[]): number {
  const e = scratchFor(length);
  decodeEntryWords(raw, length, e);
  const count = e[0]!;
  let o = 1;
  let start = false;
  const m = wanted.length;
  for (let f = 0; f < count; f++) {
    const n = e[o + 1]!;
    const ids = o + 2;
    const pos = ids + n;
    let from = 0;
    for (let i = 1; i <= n; i++) {
      if (i === n || e[pos + i]! - e[pos + i - 1]! >= VALUE_GAP) {
        if (i - from >= m) {
          let ok = true;
          for (let k = 0; k < m && ok; k++) ok = e[ids + from + k] === wanted[k];
          if (ok) {
            if (i - from === m) return 0;
            start = true;
          }
        }
        from = i;
      }
    }
    o = pos + n;
  }
  return start ? 1 : -1;
}
