/** Sort buckets on mixed values: numbers before strings, multi-valued documents, missing last. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RoaringBitmap32 } from '../../src/engine/index/store.js';
import { sortBuckets } from '../../src/engine/search/sort/buckets.js';
import { DEFAULT_RANKING_RULES } from '../../src/engine/settings/types.js';
import { TestIndex } from './helpers.js';

const DOCS = [
  { id: 'a', v: 3 },
  { id: 'b', v: 'banana' },
  { id: 'c', v: [10, 'apple'] },
  { id: 'd' },
  { id: 'e', v: -1.5 },
  { id: 'f', v: 'Apple' },
  { id: 'g', v: null },
  { id: 'h', v: [2, 7] },
  { id: 'i', v: 3 },
];

describe('sort buckets', () => {
  let index: TestIndex;
  beforeAll(async () => {
    index = new TestIndex('id', { sortableAttributes: ['v'] });
    await index.add(DOCS);
    // enough filler documents with distinct values to exercise both strategies
    await index.add(Array.from({ length: 3000 }, (_, i) => ({ id: `z${i}`, v: 1000 + i })));
  });
  afterAll(() => index.close());

  const order = (candidates: Iterable<number>, direction: 'asc' | 'desc') =>
    [...sortBuckets(index.store, new RoaringBitmap32(candidates), { kind: 'field', field: 'v', order: direction })].map((b) => index.ids(b).join('+'));

  it('orders numbers, then strings, then documents without a value', () => {
    const fixture = DOCS.map((d) => index.store.docidOf(d.id)!);
    // few candidates over many values: the in-memory strategy
    expect(order(fixture, 'asc')).toEqual(['e', 'h', 'a+i', 'c', 'f', 'b', 'd+g']);
    expect(order(fixture, 'desc')).toEqual(['c', 'h', 'a+i', 'e', 'b', 'f', 'd+g']);
  });

  it('gives the same order when walking the facet keys', () => {
    const all = [...index.store.docids()];
    const asc = order(all, 'asc');
    expect(asc.slice(0, 4)).toEqual(['e', 'h', 'a+i', 'c']);
    expect(asc.slice(-3)).toEqual(['f', 'b', 'd+g']);
    const desc = order(all, 'desc');
    expect(desc[0]).toBe('z2999');
    expect(desc.slice(-7)).toEqual(['c', 'h', 'a+i', 'e', 'b', 'f', 'd+g']);
  });

  it('stores the field of a custom ranking rule even when it is not sortable', async () => {
    const ranked = new TestIndex('id', { rankingRules: [...DEFAULT_RANKING_RULES, 'v:desc'] });
    try {
      await ranked.add(DOCS);
      const buckets = [...sortBuckets(ranked.store, ranked.store.docids(), { kind: 'field', field: 'v', order: 'desc' })];
      expect(buckets.map((b) => ranked.ids(b).join('+'))).toEqual(['c', 'h', 'a+i', 'e', 'b', 'f', 'd+g']);
    } finally {
      await ranked.close();
    }
  });
});
