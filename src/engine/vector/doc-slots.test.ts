/**
 * The slots' owners as a store reopens them: the documents (the store's `docids()`) come out of
 * them a chunk at a time, and documents with several vectors keep their lists, whether or not
 * the positions were read (an empty positions array stands for "all 0").
 */
import { describe, expect, test } from 'vitest';
import { RoaringBitmap32 } from '../index/store.js';
import { DocSlots, NO_OWNER } from './doc-slots.js';

/** 40,000 slots (more than one chunk of documents): every 7th free, documents 3 * slot, every 11th document given a second slot at the end. */
function owners(): { owner: Uint32Array; position: Uint16Array; slots: number; lists: Map<number, number[]> } {
  const slots = 40_000;
  const owner = new Uint32Array(slots + 4000).fill(NO_OWNER);
  const position = new Uint16Array(owner.length);
  const lists = new Map<number, number[]>();
  const firsts = slots - 3000;
  let extra = firsts;
  for (let s = 0; s < firsts; s++) {
    if (s % 7 === 0) continue;
    const doc = 3 * s;
    owner[s] = doc;
    lists.set(doc, [s]);
    if (s % 11 === 0 && extra < slots) {
      owner[extra] = doc;
      position[extra] = 1;
      lists.get(doc)!.push(extra++);
    }
  }
  return { owner, position, slots, lists };
}

describe('a store reopened from its owners', () => {
  test('every document with a slot is listed once, across chunks, with its slots in order', () => {
    const { owner, position, slots, lists } = owners();
    const docSlots = new DocSlots();
    docSlots.load(owner, position, slots);
    const docs = docSlots.documents(new RoaringBitmap32());
    expect(docs.size).toBe(lists.size);
    expect(docs.toArray()).toEqual([...lists.keys()].sort((a, b) => a - b));
    for (const doc of [11 * 3, 12 * 3, 3 * 33_000, 3 * 36_993]) expect(docSlots.get(doc)).toEqual(lists.get(doc));
    expect(docSlots.get(11 * 3)).toHaveLength(2);
    expect(docSlots.get(7 * 3)).toBeUndefined();
    expect(docSlots.ownerOf(39_999)).toBe(NO_OWNER);
  });

  test('without positions (one vector per document), documents and lists are the same', () => {
    const owner = new Uint32Array(20_000).fill(NO_OWNER);
    for (let s = 0; s < 19_000; s++) owner[s] = s % 5 === 0 ? NO_OWNER : 2 * s;
    const docSlots = new DocSlots();
    docSlots.load(owner, new Uint16Array(0), 19_000);
    const docs = docSlots.documents(new RoaringBitmap32());
    expect(docs.size).toBe(19_000 - 3800);
    expect(docs.has(2 * 18_999)).toBe(true);
    expect(docs.has(0)).toBe(false);
    expect(docSlots.get(2 * 18_999)).toEqual([18_999]);
    expect(docSlots.positionOf(18_999)).toBe(0);
    // a document given several vectors afterwards
    docSlots.set(2, [1, 19_500]);
    expect(docSlots.get(2)).toEqual([1, 19_500]);
    expect(docSlots.positionOf(19_500)).toBe(1);
  });
});
