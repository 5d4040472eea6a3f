/**
 * GloVe-100 vectors for vector store tests, from the committed subset (see test/data.ts: 6,000
 * base rows spread over the whole vocabulary, 150 queries), with ground truth computed by brute
 * force over the vectors a test loads.
 */
import { GLOVE_DIM, gloveBase, gloveQueries } from '../data.js';

export const DIM = GLOVE_DIM;

/** The first `n` base vectors of the subset (every 33rd row of the full set), as copies. */
export function baseSubset(n: number): Float32Array[] {
  return gloveBase(n);
}

/** The first `n` query vectors, as copies. */
export function queries(n: number): Float32Array[] {
  return gloveQueries(n);
}

/** Ids (indexes into `vectors`) of the `k` nearest by `distance`, restricted to `allowed`. */
export function bruteForce(
  vectors: Float32Array[],
  query: Float32Array,
  k: number,
  distance: (a: Float32Array, b: Float32Array) => number,
  allowed?: (id: number) => boolean,
): number[] {
  const scored: Array<[number, number]> = [];
  for (let i = 0; i < vectors.length; i++) {
    if (allowed && !allowed(i)) continue;
    scored.push([distance(query, vectors[i]!), i]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return scored.slice(0, k).map((s) => s[1]);
}

export function recall(found: number[], truth: number[]): number {
  const t = new Set(truth);
  let hit = 0;
  for (const f of found) if (t.has(f)) hit++;
  return truth.length === 0 ? 1 : hit / truth.length;
}
