/**
 * Exact distances between float vectors and their mapping to a similarity in [0, 1].
 *
 * Every distance is "smaller is closer". The similarity is what `_rankingScore` shows:
 * cosine maps to (1 + cos) / 2 as the reference engine does; the others map monotonically.
 */

export type Distance = 'cosine' | 'euclidean' | 'dot' | 'hamming';

export const DISTANCES: readonly Distance[] = ['cosine', 'euclidean', 'dot', 'hamming'];

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export function norm(a: Float32Array): number {
  return Math.sqrt(dot(a, a));
}

/** A unit-length copy (the zero vector stays zero). */
export function normalized(a: Float32Array): Float32Array {
  const n = norm(a);
  const out = new Float32Array(a.length);
  if (n === 0) return out;
  for (let i = 0; i < a.length; i++) out[i] = a[i]! / n;
  return out;
}

export function squaredEuclidean(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    s += d * d;
  }
  return s;
}

/** Number of dimensions whose sign bit (value > 0) differs. */
export function hammingFloat(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > 0 !== b[i]! > 0) s++;
  return s;
}

/**
 * Exact distance as reported to callers: cosine distance (1 - cos), euclidean distance,
 * negated dot product, or the count of differing bits.
 */
export function exactDistance(metric: Distance, a: Float32Array, b: Float32Array, aNorm?: number): number {
  switch (metric) {
    case 'cosine': {
      const na = aNorm ?? norm(a);
      let ab = 0;
      let bb = 0;
      for (let i = 0; i < a.length; i++) {
        const y = b[i]!;
        ab += a[i]! * y;
        bb += y * y;
      }
      if (na === 0 || bb === 0) return 1;
      return 1 - ab / (na * Math.sqrt(bb));
    }
    case 'euclidean':
      return Math.sqrt(squaredEuclidean(a, b));
    case 'dot':
      return -dot(a, b);
    case 'hamming':
      return hammingFloat(a, b);
  }
}

/** Map a distance to [0, 1], 1 being identical. `dimensions` scales hamming counts. */
export function similarity(metric: Distance, distance: number, dimensions: number): number {
  let s: number;
  switch (metric) {
    case 'cosine':
      s = 1 - distance / 2;
      break;
    case 'euclidean':
      s = 1 / (1 + distance);
      break;
    case 'dot':
      s = (1 - distance) / 2;
      break;
    case 'hamming':
      s = 1 - distance / dimensions;
      break;
  }
  return Math.min(1, Math.max(0, s));
}
