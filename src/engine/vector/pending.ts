/**
 * Vectors stored but not yet linked into the graph.
 *
 * Their codes sit in the kernels' arena beside the graph's (and in the codes database), so a
 * search scores them with one exact scan on codes, the same way it scores graph candidates:
 * nothing is built in memory, after a restart either (the first search is as fast as any other),
 * and the scan is exact where a temporary graph over far-away queries would lose neighbours.
 * The merge threshold (params.ts) keeps the scan short.
 *
 * As opened by a searching side (`load`), the slots are one sorted array; the set is made at the
 * first change. A set of some thousands of slots made at every open was long-lived heap that V8
 * counts against its young generation's size (bench/README.md, the 500,000-vector process).
 */
import { indexOfSlot } from './sorted-slots.js';

export class PendingSlots {
  private live: Set<number> | null = new Set<number>();
  /** The slots, ascending, while `live` is null (as loaded). */
  private sorted = new Uint32Array(0);

  /** Start from `slots`, ascending (an open: no set is made until something changes). */
  load(slots: ArrayLike<number>): void {
    this.sorted = Uint32Array.from(slots);
    this.live = null;
    this.array = null;
  }

  get size(): number {
    return this.live ? this.live.size : this.sorted.length;
  }

  slots(): number[] {
    return this.live ? [...this.live] : Array.from(this.sorted);
  }

  /** The pending slots as one array, for a scan (cached until the set changes). */
  private array: Uint32Array | null = null;
  list(): Uint32Array {
    this.array ??= this.live ? Uint32Array.from(this.live) : this.sorted;
    return this.array;
  }

  has(slot: number): boolean {
    if (this.live) return this.live.has(slot);
    return indexOfSlot(this.sorted, slot) >= 0;
  }

  add(slot: number): void {
    this.changing().add(slot);
    this.array = null;
  }

  remove(slot: number): void {
    if (this.changing().delete(slot)) this.array = null;
  }

  clear(): void {
    this.live = new Set<number>();
    this.sorted = new Uint32Array(0);
    this.array = null;
  }

  /** The set, made from the loaded slots at the first change. */
  private changing(): Set<number> {
    if (!this.live) {
      this.live = new Set(this.sorted);
      this.sorted = new Uint32Array(0);
    }
    return this.live;
  }
}
