/**
 * The temporary in-memory index of vectors not yet merged into the disk graph (`hnswlib-node`).
 *
 * Labels are store slots. Bit codes are indexed as 0/1 floats under squared euclidean
 * distance, which equals their hamming distance. Its distances are only used to pick
 * candidates (the store re-ranks them exactly).
 *
 * Vectors are queued when they arrive and indexed when a search needs them: a bulk load that
 * reaches the merge threshold before anyone searches never pays for a temporary graph, and a
 * restart re-indexes the persisted pending vectors on the first search, not at open.
 */
import hnswlib from 'hnswlib-node';
import type { Distance } from './distance.js';

const { HierarchicalNSW } = hnswlib;
type Hnsw = InstanceType<typeof HierarchicalNSW>;

export class PendingIndex {
  private index: Hnsw | null = null;
  private capacity = 0;
  private readonly live = new Set<number>();
  private queued = new Set<number>();

  constructor(
    private readonly distance: Distance,
    private readonly dimensions: number,
    private readonly bits: boolean,
  ) {}

  get size(): number {
    return this.live.size;
  }

  slots(): number[] {
    return [...this.live];
  }

  has(slot: number): boolean {
    return this.live.has(slot);
  }

  private space(): 'l2' | 'ip' | 'cosine' {
    if (this.bits) return 'l2';
    return this.distance === 'cosine' ? 'cosine' : this.distance === 'dot' ? 'ip' : 'l2';
  }

  private point(v: Float32Array): number[] {
    const out = new Array<number>(this.dimensions);
    if (this.bits) for (let i = 0; i < this.dimensions; i++) out[i] = v[i]! > 0 ? 1 : 0;
    else for (let i = 0; i < this.dimensions; i++) out[i] = v[i]!;
    return out;
  }

  /** Queue a slot (its vector is read through `load` when a search first needs it). */
  add(slot: number): void {
    this.live.add(slot);
    this.queued.add(slot);
  }

  private index1(slot: number, v: Float32Array): void {
    if (!this.index) {
      this.index = new HierarchicalNSW(this.space(), this.dimensions);
      this.capacity = 1024;
      this.index.initIndex(this.capacity, 16, 100, 7, false);
    }
    if (this.index.getCurrentCount() + 1 > this.capacity) {
      this.capacity *= 2;
      this.index.resizeIndex(this.capacity);
    }
    // An existing label (even one marked deleted) is updated in place and unmarked by hnswlib.
    this.index.addPoint(this.point(v), slot);
  }

  remove(slot: number): void {
    if (!this.live.delete(slot)) return;
    if (this.queued.delete(slot)) return;
    this.index?.markDelete(slot);
  }

  /** Up to `k` slots closest to `q` among those `accept` admits, closest first. */
  search(q: Float32Array, k: number, load: (slot: number) => Float32Array, accept?: (slot: number) => boolean): number[] {
    if (this.live.size === 0) return [];
    for (const slot of this.queued) this.index1(slot, load(slot));
    this.queued.clear();
    if (!this.index) return [];
    const n = Math.min(k, this.live.size);
    this.index.setEf(Math.max(64, n));
    const filter = accept ? (label: number) => accept(label) && this.live.has(label) : (label: number) => this.live.has(label);
    return this.index.searchKnn(this.point(q), n, filter).neighbors;
  }

  clear(): void {
    this.index = null;
    this.capacity = 0;
    this.live.clear();
    this.queued.clear();
  }
}
