/**
 * Pending slots as a searching side opens them (one sorted array) and as they change after
 * that (a set made at the first change): the same answers either way.
 */
import { describe, expect, test } from 'vitest';
import { PendingSlots } from './pending.js';

describe('PendingSlots', () => {
  test('loaded slots answer size, has, list and slots without a change', () => {
    const p = new PendingSlots();
    p.load([3, 17, 256, 257, 9000]);
    expect(p.size).toBe(5);
    for (const s of [3, 17, 256, 257, 9000]) expect(p.has(s)).toBe(true);
    for (const s of [0, 4, 255, 258, 8999, 9001]) expect(p.has(s)).toBe(false);
    expect([...p.list()]).toEqual([3, 17, 256, 257, 9000]);
    expect(p.slots()).toEqual([3, 17, 256, 257, 9000]);
  });

  test('changes after a load: removed and added slots, the scan list renewed', () => {
    const p = new PendingSlots();
    p.load([3, 17, 256]);
    expect([...p.list()]).toEqual([3, 17, 256]);
    p.remove(17);
    p.remove(18);
    p.add(5);
    expect(p.size).toBe(3);
    expect(p.has(17)).toBe(false);
    expect(p.has(5)).toBe(true);
    expect([...p.list()].sort((a, b) => a - b)).toEqual([3, 5, 256]);
    p.clear();
    expect(p.size).toBe(0);
    expect(p.has(3)).toBe(false);
    expect([...p.list()]).toEqual([]);
    p.load([]);
    expect(p.size).toBe(0);
    p.add(1);
    expect(p.slots()).toEqual([1]);
  });
});
