import roaring from 'roaring';
import { describe, expect, it } from 'vitest';
import { appendAscending, bucketTag, decodeWordRecord, encodeWordRecord, fieldTag, recordId, recordPart, serializeAscending } from './layout.js';

const { RoaringBitmap32 } = roaring;

describe('serializeAscending', () => {
  it('writes the bytes of roaring portable serialization, array and bitmap containers alike', () => {
    let seed = 11;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    for (let round = 0; round < 200; round++) {
      // Sparse, dense (over 4,096 in a container: bitmap) and spread over several containers.
      const step = [1, 2, 3, 17, 300, 70_000][rnd(6)]!;
      const ids: number[] = [];
      for (let v = rnd(50), n = rnd(9000); ids.length < n; v += 1 + rnd(step)) ids.push(v);
      const ours = serializeAscending(ids)!;
      expect(Buffer.compare(ours, Buffer.from(new RoaringBitmap32(ids).serialize(true)))).toBe(0);
      expect([...RoaringBitmap32.deserialize(ours, true)]).toEqual(ids);
    }
  });
  it('declines lists that are not strictly ascending', () => {
    expect(serializeAscending([3, 2])).toBeUndefined();
    expect(serializeAscending([3, 3])).toBeUndefined();
  });
});

describe('appendAscending', () => {
  it('writes the bytes roaring writes after adding docids above a stored list, whatever the containers', () => {
    let seed = 5;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const steps = [1, 2, 3, 17, 300, 70_000];
    const run = (from: number, n: number, step: number) => {
      const ids: number[] = [];
      for (let v = from; ids.length < n; v += 1 + rnd(step)) ids.push(v);
      return ids;
    };
    for (let round = 0; round < 300; round++) {
      const stored = run(rnd(100), 1 + rnd(9000), steps[rnd(6)]!);
      const max = stored[stored.length - 1]!;
      // Additions starting in the last container, right after it, or far beyond.
      const gap = [1, 1 + rnd(50), 65_536 - (max & 0xffff) + rnd(10), 200_000][rnd(4)]!;
      const add = run(max + gap, 1 + rnd(9000), steps[rnd(6)]!);
      const raw = Buffer.from(new RoaringBitmap32(stored).serialize(true));
      const expected = new RoaringBitmap32(stored);
      expected.addMany(add);
      const ours = appendAscending(raw, Uint32Array.from(add))!;
      expect(ours).toBeDefined();
      expect(Buffer.compare(ours, Buffer.from(expected.serialize(true)))).toBe(0);
    }
  });
  it('declines additions that are not all above the stored list', () => {
    const raw = Buffer.from(new RoaringBitmap32([5, 10, 70_000]).serialize(true));
    expect(appendAscending(raw, Uint32Array.from([69_999]))).toBeUndefined();
    expect(appendAscending(raw, Uint32Array.from([70_000]))).toBeUndefined();
    expect(appendAscending(raw, Uint32Array.from([70_002, 70_001]))).toBeUndefined();
    expect(appendAscending(raw, Uint32Array.from([70_001]))).toBeDefined();
  });
});

describe('word records', () => {
  it('keep the id and give back each part by tag', () => {
    const bitmap = (ids: number[]) => new Uint8Array(new RoaringBitmap32(ids).serialize(true));
    const parts = [
      { tag: fieldTag(0), bitmap: bitmap([1, 2, 3]) },
      { tag: fieldTag(3), bitmap: bitmap([2]) },
      { tag: bucketTag(0), bitmap: bitmap([1]) },
      { tag: bucketTag(16), bitmap: bitmap([2, 3]) },
    ];
    const raw = encodeWordRecord(42, parts);
    expect(recordId(raw)).toBe(42);
    const plain = (list: Array<{ tag: number; bitmap: Uint8Array }>) => list.map((p) => ({ tag: p.tag, bytes: [...p.bitmap] }));
    expect(plain(decodeWordRecord(raw))).toEqual(plain(parts));
    expect([...RoaringBitmap32.deserialize(Buffer.from(recordPart(raw, bucketTag(16))!), true)]).toEqual([2, 3]);
    expect([...RoaringBitmap32.deserialize(Buffer.from(recordPart(raw, fieldTag(3))!), true)]).toEqual([2]);
    expect(recordPart(raw, fieldTag(1))).toBeUndefined();
    expect(recordPart(raw, bucketTag(5))).toBeUndefined();
  });
});
