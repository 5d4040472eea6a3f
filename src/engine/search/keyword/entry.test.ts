import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, EntryCursor, entryExactness } from './entry.js';
import { legacyEntryFields } from './legacy.js';

type Fields = Array<[number, number[], number[]]>;

let seed = 7;
const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);

/** Random entries: ids up to 2^32 - 1 (every width), positions growing with value gaps. */
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
      expect(plain(decodeEntry(encodeEntry(fields)))).toEqual(fields);
    }
  });

  it('are read in place by a cursor, field by field, any word at its offset', () => {
    const fields: Fields = [[3, [5, 300, 70_000, 0xffff_ffff], [40, 2, 1_000_000, 7]], [200, [], []], [1, [9], [0]]];
    const cursor = new EntryCursor();
    // A shared buffer longer than the value, as lmdb's fast reads hand out.
    const shared = Buffer.alloc(256, 0xff);
    encodeEntry(fields).copy(shared);
    expect(cursor.open(shared)).toBe(3);
    const seen: Fields = [];
    while (cursor.nextField()) {
      const ids: number[] = [];
      const positions: number[] = [];
      for (let i = cursor.n - 1; i >= 0; i--) {
        ids.unshift(cursor.id(i));
        positions.unshift(cursor.position(i));
      }
      seen.push([cursor.fid, ids, positions]);
    }
    expect(seen).toEqual(fields);
    expect(cursor.nextField()).toBe(false);
  });

  it('take about 0.6 of the bytes of u32 pairs on text-like entries', () => {
    let ours = 0;
    let u32 = 0;
    for (let round = 0; round < 200; round++) {
      const n = 50 + rnd(200);
      const ids = Array.from({ length: n }, () => rnd(250_000));
      const positions = Array.from({ length: n }, (_, i) => i);
      ours += encodeEntry([[0, ids, positions]]).length;
      u32 += u32Entry([[0, ids, positions]]).length;
    }
    expect(ours / u32).toBeLessThan(0.65);
  });

  it('tell exactness: a value equal to the query, a value starting with it, or neither', () => {
    // Two values of field 1 (a gap of 8 positions or more separates them): [10 11] and [12 10 11].
    const bytes = encodeEntry([[0, [99], [0]], [1, [10, 11, 12, 10, 11], [0, 1, 9, 10, 11]]]);
    expect(entryExactness(bytes, [10, 11])).toBe(0);
    expect(entryExactness(bytes, [12])).toBe(1);
    expect(entryExactness(bytes, [12, 10, 11])).toBe(0);
    expect(entryExactness(bytes, [11])).toBe(-1);
    expect(entryExactness(bytes, [99])).toBe(0);
  });

  it('convert from the u32 layout of format 1.1.0 without a change', () => {
    for (let round = 0; round < 200; round++) {
      const fields = randomEntry();
      const converted = encodeEntry(legacyEntryFields(u32Entry(fields)));
      expect(plain(decodeEntry(converted))).toEqual(fields);
    }
  });
});
