/**
 * A GloVe-100 subset for vector store tests, read from the shared data set (never copied into
 * the repository), with ground truth computed by brute force.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const DIR = join(process.cwd(), '../shared/data/glove-100');
export const DIM = 100;

let cache: { base: Float32Array; queries: Float32Array } | null = null;

function load(): { base: Float32Array; queries: Float32Array } {
  if (!cache) {
    const base = readFileSync(join(DIR, 'base.f32'));
    const queries = readFileSync(join(DIR, 'queries.f32'));
    cache = {
      base: new Float32Array(base.buffer, base.byteOffset, base.byteLength / 4),
      queries: new Float32Array(queries.buffer, queries.byteOffset, queries.byteLength / 4),
    };
  }
  return cache;
}

/** `n` base vectors spread over the whole vocabulary (every `step`-th row), as copies. */
export function baseSubset(n: number, step = 13): Float32Array[] {
  const { base } = load();
  const out: Float32Array[] = [];
  for (let i = 0; i < n; i++) out.push(base.slice(i * step * DIM, (i * step + 1) * DIM));
  return out;
}

export function queries(n: number): Float32Array[] {
  const { queries: q } = load();
  const out: Float32Array[] = [];
  for (let i = 0; i < n; i++) out.push(q.slice(i * DIM, (i + 1) * DIM));
  return out;
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
