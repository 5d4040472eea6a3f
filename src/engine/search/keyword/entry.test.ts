import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, EntryCursor, entryExactness } from './entry.js';
import { legacyEntryFields } from './legacy.js';
import { MAX_VALUE_FIELD_WORDS, MAX_VALUE_WORDS, START_WORDS } from './layout.js';

type Fields = Array<[number, number[], number[]]>;

let seed = 7;
const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);

/** Random entries: ids up to 2^32 - 1 (every width), positions growing with value gaps. */
function randomEntry(): Fields {
  const fields: Fields = [];
  for (let f = 0, count = rnd(5); f < count; f++) {
    // now and then a long text, which is not split into values
    const n = rnd(8) === 0 ? MAX_VALUE_FIELD_WORDS + rnd(20) : rnd(40);
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

  it('tell exactness: a value equal to the query, a field starting with it, or neither', () => {
    // Two values of field 1 (a gap of 8 positions or more separates them): [10 11] and [12 10 11].
    const bytes = encodeEntry([[0, [99], [0]], [1, [10, 11, 12, 10, 11], [0, 1, 9, 10, 11]]]);
    expect(entryExactness(bytes, [10, 11])).toBe(0);
    expect(entryExactness(bytes, [12, 10, 11])).toBe(0);
    expect(entryExactness(bytes, [99])).toBe(0);
    // the first words of a field, but no value of their own
    expect(entryExactness(bytes, [10])).toBe(1);
    // a value starts with 12, but no field does
    expect(entryExactness(bytes, [12])).toBe(-1);
    expect(entryExactness(bytes, [11])).toBe(-1);
    expect(entryExactness(bytes, [10, 11, 12])).toBe(-1);
    // a long text is not split into values (as kw-values): its first words only start the field
    const long = Array.from({ length: MAX_VALUE_FIELD_WORDS + 1 }, (_, i) => 100 + i);
    const text = encodeEntry([[0, long, long.map((_, i) => i)]]);
    expect(entryExactness(text, long.slice(0, 3))).toBe(1);
    expect(entryExactness(encodeEntry([[0, long.slice(0, 3), [0, 1, 2]]]), long.slice(0, 3))).toBe(0);
  });

  it('tell exactness as the posting lists do, on random entries and queries taken from them', () => {
    /** The definition: a short value of a short field (as kw-values) equal to the query, else a field starting with it. */
    const definition = (fields: Fields, wanted: number[]): number => {
      if (wanted.length <= MAX_VALUE_WORDS) {
        for (const [, ids, positions] of fields) {
          if (ids.length > MAX_VALUE_FIELD_WORDS) continue;
          let from = 0;
          for (let i = 1; i <= ids.length; i++) {
            if (i < ids.length && positions[i]! - positions[i - 1]! < 8) continue;
            const value = ids.slice(from, i);
            if (value.length === wanted.length && wanted.every((w, k) => value[k] === w)) return 0;
            from = i;
          }
        }
      }
      const head = wanted.slice(0, START_WORDS);
      return fields.some(([, ids, positions]) => ids.length > 0 && head.every((id, k) => ids[k] === id && positions[k] === k)) ? 1 : -1;
    };
    const seen = new Set<number>();
    for (let round = 0; round < 2000; round++) {
      const fields = randomEntry();
      // small ids repeat, so that values often start with (or equal) the query
      for (const [, ids] of fields) for (let i = 0; i < ids.length; i++) if (rnd(2) === 0) ids[i] = rnd(4);
      const all = fields.flatMap(([, ids]) => ids);
      const at = rnd(Math.max(1, all.length));
      const field = fields[rnd(Math.max(1, fields.length))]?.[1] ?? [];
      const wanted = [() => [rnd(4), rnd(4)], () => all.slice(at, at + 1 + rnd(3)), () => field.slice(0, 1 + rnd(10))][rnd(3)]!();
      if (wanted.length === 0) continue;
      const expected = definition(fields, wanted);
      seen.add(expected);
      expect(entryExactness(encodeEntry(fields), wanted)).toBe(expected);
    }
    expect([...seen].sort()).toEqual([-1, 0, 1]);
  });

  it('find the words a table marks, and a given word, with a cursor, whatever the id width', () => {
    for (let round = 0; round < 300; round++) {
      const fields = randomEntry();
      const cursor = new EntryCursor();
      cursor.open(encodeEntry(fields));
      const marks = new Int8Array(20_000);
      for (let k = 0; k < 50; k++) marks[rnd(20_000)] = 1;
      for (const [, ids] of fields) {
        cursor.nextField();
        const marked: number[] = [];
        for (let i = cursor.nextMarked(marks, 0); i < cursor.n; i = cursor.nextMarked(marks, i + 1)) marked.push(i);
        // an id beyond the table counts as marked
        expect(marked).toEqual(ids.flatMap((id, i) => (id >= marks.length || marks[id] !== 0 ? [i] : [])));
        const id = ids[rnd(Math.max(1, ids.length))] ?? 5;
        expect(cursor.indexOfId(id, 0)).toBe(ids.includes(id) ? ids.indexOf(id) : ids.length);
      }
    }
  });

  it('convert from the u32 layout of format 1.1.0 without a change', () => {
    for (let round = 0; round < 200; round++) {
      const fields = randomEntry();
      const converted = encodeEntry(legacyEntryFields(u32Entry(fields)));
      expect(plain(decodeEntry(converted))).toEqual(fields);
    }
  });
});
