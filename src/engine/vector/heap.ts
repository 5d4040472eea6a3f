/**
 * A binary min-heap of (key, value) pairs in typed arrays, reused across searches so that a
 * query allocates nothing per visited node. A max-heap is the same heap over negated keys.
 */
export class Heap {
  keys: Float64Array;
  vals: Int32Array;
  size = 0;

  constructor(capacity = 256) {
    this.keys = new Float64Array(capacity);
    this.vals = new Int32Array(capacity);
  }

  clear(): void {
    this.size = 0;
  }

  get topKey(): number {
    return this.keys[0]!;
  }

  get topVal(): number {
    return this.vals[0]!;
  }

  push(key: number, val: number): void {
    if (this.size === this.keys.length) this.grow();
    const keys = this.keys;
    const vals = this.vals;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pk = keys[parent]!;
      if (pk <= key) break;
      keys[i] = pk;
      vals[i] = vals[parent]!;
      i = parent;
    }
    keys[i] = key;
    vals[i] = val;
  }

  /** Remove the smallest pair and return its value. */
  pop(): number {
    const keys = this.keys;
    const vals = this.vals;
    const top = vals[0]!;
    const n = --this.size;
    if (n === 0) return top;
    const key = keys[n]!;
    const val = vals[n]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && keys[child + 1]! < keys[child]!) child++;
      if (keys[child]! >= key) break;
      keys[i] = keys[child]!;
      vals[i] = vals[child]!;
      i = child;
    }
    keys[i] = key;
    vals[i] = val;
    return top;
  }

  private grow(): void {
    const keys = new Float64Array(this.keys.length * 2);
    keys.set(this.keys);
    const vals = new Int32Array(this.vals.length * 2);
    vals.set(this.vals);
    this.keys = keys;
    this.vals = vals;
  }
}
