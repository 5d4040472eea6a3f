/**
 * A cache of decoded values bounded both by count and by the bytes they hold, dropping the
 * oldest entries first. The keyword reader keeps decoded posting lists, word records and stored
 * entries in them (counted alone, a few thousand lists of a large index could hold hundreds of
 * MB); the typo dictionary its recent derivations.
 */
export class BoundedCache<V, K = string> {
  private readonly entries = new Map<K, { value: V; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  /** The value under `key`, left where it is in the eviction order. */
  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** The value under `key`, moved to the newest end of the eviction order. */
  use(key: K): V | undefined {
    const known = this.entries.get(key);
    if (!known) return undefined;
    this.entries.delete(key);
    this.entries.set(key, known);
    return known.value;
  }

  /** Keep `value` (holding `bytes`), dropping the oldest entries until both bounds hold. */
  set(key: K, value: V, bytes: number): void {
    while (this.entries.size > 0 && (this.entries.size >= this.maxEntries || this.bytes + bytes > this.maxBytes)) {
      const [oldest, entry] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
