/**
 * Vectors stored but not yet linked into the graph.
 *
 * Their codes sit in the kernels' arena beside the graph's (and in the codes database), so a
 * search scores them with one exact scan on codes, the same way it scores graph candidates:
 * nothing is built in memory, after a restart either (the first search is as fast as any other),
 * and the scan is exact where a temporary graph over far-away queries would lose neighbours.
 * The merge threshold (params.ts) keeps the scan short.
 */
export class PendingSlots {
  private readonly live = new Set<number>();

  get size(): number {
    return this.live.size;
  }

  slots(): number[] {
    return [...this.live];
  }

  /** The pending slots as one array, for a scan (cached until the set changes). */
  private array: Uint32Array | null = null;
  list(): Uint32Array {
    this.array ??= Uint32Array.from(this.live);
    return this.array;
  }

  has(slot: number): boolean {
    return this.live.has(slot);
  }

  add(slot: number): void {
    this.live.add(slot);
    this.array = null;
  }

  remove(slot: number): void {
    if (this.live.delete(slot)) this.array = null;
  }

  clear(): void {
    this.live.clear();
    this.array = null;
  }
}
