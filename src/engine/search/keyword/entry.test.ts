import { describe, expect, it } from 'vitest';
import { decodeEntry, decodeEntryWords, encodeEntry, entryExactness } from './entry.js';
import { legacyEntryFields } from './legacy.js';

type Fields = Array<[number, number[], number[]]>;

let seed = 7;
const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);

/** Random entries: ids up to 2^32 - 1 (every varint length), positions growing with value gaps. */
function randomEntry(): Fields {
  const fields: Fields = [];
  for (let f = 0, count = rnd(5); f < count; f++) {
    const n = rnd(40);
    const ids = Array.from({ length: n }, () => [rnd(128), rnd(20_000), rnd(300_000), 0xffff_ffff - rnd(10)][rnd(4)]!);
    const positions: number[] = [];
    for (let i = 0, p = rnd(3); i < n; i++, p += 1 + (rnd(6) === 0 ? 8 + rnd(5000) : 0)) positions.push(p);
    fields.push([rnd(70_000), ids, positions]);
  }
  return fields;
}

/** The format 1.1.0 bytes of an entry: u32 LE [count, (fid, n, ids, positions)...]. */
function u32Entry(fields: Fields): Buffer {
  const words = [fields.length];
  for (const [fid, ids, positions] of fields) words.push(fid, ids.length, ...ids, ...positions);
  return Buffer.from(new Uint32Array(words).buffer);
}

const plain = (entry: ReturnType<typeof decodeEntry>) => entry.map(([fid, ids, positions]) => [fid, [...ids], [...positions]]);

describe('document entries', () => {
  it('decode to what was encoded, whatever the ids, field ids and position gaps', () => {
    for (let round = 0; round < 500; round++) {
      const fields = randomEntry();
      const bytes = encodeEntry(fields);
      expect(plain(decodeEntry(bytes))).toEqual(fields);
      const words = new Uint32Array(bytes.length);
      const size = decodeEntryWords(bytes, bytes.length, words);
      expect([...words.subarray(0, size)]).toEqual([...new Uint32Array(u32Entry(fields).buffer)]);
    }
  });

  it('keep positions that go back exact (zigzag deltas)', () => {
    const fields: Fields = [[3, [5, 6, 7], [40, 2, 1_000_000]]];
    expect(plain(decodeEntry(encodeEntry(fields)))).toEqual(fields);
  });

  it('are read from a shared buffer by the given length, not the buffer size', () => {
    const bytes = encodeEntry([[0, [1, 2], [0, 1]]]);
    const shared = Buffer.alloc(64, 0xff);
    bytes.copy(shared);
    const words = new Uint32Array(64);
    expect([...words.subarray(0, decodeEntryWords(shared, bytes.length, words))]).toEqual([1, 0, 2, 1, 2, 0, 1]);
  });

  it('take about a third of the bytes of u32 pairs on text-like entries', () => {
    let varint = 0;
    let u32 = 0;
    for (let round = 0; round < 200; round++) {
      const n = 50 + rnd(200);
      const ids = Array.from({ length: n }, () => rnd(250_000));
      const positions = Array.from({ length: n }, (_, i) => i);
      varint += encodeEntry([[0, ids, positions]]).length;
      u32 += u32Entry([[0, ids, positions]]).length;
    }
    expect(varint / u32).toBeLessThan(0.55);
  });

  it('tell exactness: a value equal to the query, a value starting with it, or neither', () => {
    // Two values of field 1 (a gap of 8 positions or more separates them): [10 11] and [12 10 11].
    const bytes = encodeEntry([[0, [99], [0]], [1, [10, 11, 12, 10, 11], [0, 1, 9, 10, 11]]]);
    expect(entryExactness(bytes, bytes.length, [10, 11])).toBe(0);
    expect(entryExactness(bytes, bytes.length, [12])).toBe(1);
    expect(entryExactness(bytes, bytes.length, [12, 10, 11])).toBe(0);
    expect(entryExactness(bytes, bytes.length, [11])).toBe(-1);
    expect(entryExactness(bytes, bytes.length, [99])).toBe(0);
  });

  it('convert from the u32 layout of format 1.1.0 without a change', () => {
    for (let round = 0; round < 200; round++) {
      const fields = randomEntry();
      const converted = encodeEntry(legacyEntryFields(u32Entry(fields)));
      expect(plain(decodeEntry(converted))).toEqual(fields);
    }
  });
});
