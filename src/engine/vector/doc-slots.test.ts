/**
 * The slots' owners as a store reopens them: kept by blocks (an offset for a block of
 * consecutive documents), the documents (the store's `docids()`) listed from them a chunk at a
 * time, and documents with several vectors keeping their lists, whether or not the positions
 * were read (an empty positions array stands for "all 0"); a change makes the owners whole.
 */
import { describe, expect, test } from 'vitest';
import { RoaringBitmap32 } from '../index/store.js';
import { DocSlots, NO_OWNER, SlotOwners } from './doc-slots.js';
import { BLOCK } from './segments.js';

/** The owners as the store reads them: block by block. */
function byBlocks(flat: Uint32Array): SlotOwners {
  const blocks = Math.ceil(flat.length / BLOCK);
  const owners = new SlotOwners(blocks);
  const one = new Uint32Array(BLOCK);
  for (let b = 0; b < blocks; b++) {
    one.fill(NO_OWNER);
    one.set(flat.subarray(b * BLOCK, (b + 1) * BLOCK));
    owners.setBlock(b, one);
  }
  return owners;
}

/** 40,000 slots (more than one chunk of documents): every 7th free, documents 3 * slot, every 11th document given a second slot at the end. */
function scattered(): { owner: Uint32Array; position: Uint16Array; slots: number; lists: Map<number, number[]> } {
  const slots = 40_000;
  const owner = new Uint32Array(slots).fill(NO_OWNER);
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
    const { owner, position, slots, lists } = scattered();
    const docSlots = new DocSlots();
    docSlots.load(byBlocks(owner), position, slots);
    const docs = docSlots.documents(new RoaringBitmap32());
    expect(docs.size).toBe(lists.size);
    expect(docs.toArray()).toEqual([...lists.keys()].sort((a, b) => a - b));
    for (let s = 0; s < slots; s++) if (docSlots.ownerOf(s) !== owner[s]) throw new Error(`slot ${s}`);
    for (const doc of [11 * 3, 12 * 3, 3 * 33_000, 3 * 36_993]) expect(docSlots.get(doc)).toEqual(lists.get(doc));
    expect(docSlots.get(11 * 3)).toHaveLength(2);
    expect(docSlots.get(7 * 3)).toBeUndefined();
    expect(docSlots.ownerOf(39_999)).toBe(NO_OWNER);
  });

  test('blocks of consecutive documents keep one offset; other blocks, free slots and changes read the same', () => {
    // documents 1,000 + slot, except a block with a free slot, one with a slot reused by another
    // document, and a last partial block
    const slots = 100 * BLOCK + 17;
    const owner = new Uint32Array(slots);
    for (let s = 0; s < slots; s++) owner[s] = 1000 + s;
    owner[5 * BLOCK + 9] = NO_OWNER;
    owner[8 * BLOCK + 200] = 7;
    const owners = byBlocks(owner);
    // 98 blocks of one offset, 3 of 256 owners
    expect(owners.byteLength).toBeLessThan(101 * 12 + 3 * BLOCK * 4 + 1);
    expect(SlotOwners.fromFlat(owner).byteLength).toBeGreaterThan(slots * 4);
    const docSlots = new DocSlots();
    docSlots.load(owners, new Uint16Array(0), slots);
    const docs = docSlots.documents(new RoaringBitmap32());
    expect(docs.size).toBe(slots - 1);
    expect(docs.has(7)).toBe(true);
    expect(docs.has(1000 + 5 * BLOCK + 9)).toBe(false);
    for (let s = 0; s < slots + 300; s++) if (docSlots.ownerOf(s) !== (s < slots ? owner[s] : NO_OWNER)) throw new Error(`slot ${s}`);
    expect(docSlots.get(1000 + 42 * BLOCK + 3)).toEqual([42 * BLOCK + 3]);
    // a change: the owners made whole, the rest unchanged
    docSlots.set(5, [5 * BLOCK + 9, slots + 2]);
    expect(docSlots.get(5)).toEqual([5 * BLOCK + 9, slots + 2]);
    expect(docSlots.ownerOf(slots + 2)).toBe(5);
    expect(docSlots.positionOf(slots + 2)).toBe(1);
    docSlots.delete(1000);
    expect(docSlots.ownerOf(0)).toBe(NO_OWNER);
    expect(docSlots.ownerOf(99 * BLOCK)).toBe(1000 + 99 * BLOCK);
    expect(docSlots.get(7)).toEqual([8 * BLOCK + 200]);
  });

  test('without positions (one vector per document), documents and lists are the same', () => {
    const owner = new Uint32Array(20_000).fill(NO_OWNER);
    for (let s = 0; s < 19_000; s++) owner[s] = s % 5 === 0 ? NO_OWNER : 2 * s;
    const docSlots = new DocSlots();
    docSlots.load(SlotOwners.fromFlat(owner), new Uint16Array(0), 19_000);
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
