/**
 * Compact codes the graph is traversed on.
 *
 * - int8: one signed byte per dimension with one global scale, so that squared euclidean
 *   distance and dot product of codes are the float ones times scale² (one SIMD kernel each).
 *   Cosine vectors are normalised before coding, so euclidean order on codes is cosine order.
 * - bits: one bit per dimension (value > 0), compared by hamming distance.
 *
 * Codes are padded with zeros to a multiple of 16 bytes, the SIMD width.
 */
import { normalized, type Distance } from './distance.js';

export type CodeKind = 'int8' | 'bits';
/** The distance computed on codes: smaller is closer for all three. */
export type CodeMetric = 'l2' | 'dot' | 'hamming';

export function codeKind(distance: Distance, binaryQuantized: boolean): CodeKind {
  return binaryQuantized || distance === 'hamming' ? 'bits' : 'int8';
}

export function codeMetric(distance: Distance, binaryQuantized: boolean): CodeMetric {
  if (codeKind(distance, binaryQuantized) === 'bits') return 'hamming';
  return distance === 'dot' ? 'dot' : 'l2';
}

export function codeBytes(kind: CodeKind, dimensions: number): number {
  return kind === 'bits' ? Math.ceil(dimensions / 8) : dimensions;
}

export function codeStride(kind: CodeKind, dimensions: number): number {
  return Math.ceil(codeBytes(kind, dimensions) / 16) * 16;
}

/**
 * The int8 scale for a sample: the 99.99th percentile of |value| maps to 127, so that one
 * outlier does not flatten every other value (outliers are clamped).
 */
export function int8Scale(sample: Float32Array[], distance: Distance): number {
  const values: number[] = [];
  for (const v of sample) {
    const x = distance === 'cosine' ? normalized(v) : v;
    for (let i = 0; i < x.length; i++) values.push(Math.abs(x[i]!));
  }
  if (values.length === 0) return 1 / 127;
  values.sort((a, b) => a - b);
  const q = values[Math.min(values.length - 1, Math.floor(values.length * 0.9999))]!;
  return (q > 0 ? q : 1) / 127;
}

/** Pack the sign bits of `v` (value > 0 -> 1), dimension i at byte i >> 3, bit i & 7. */
export function packBits(v: Float32Array, out: Uint8Array, offset = 0): void {
  const bytes = Math.ceil(v.length / 8);
  out.fill(0, offset, offset + bytes);
  for (let i = 0; i < v.length; i++) if (v[i]! > 0) out[offset + (i >> 3)]! |= 1 << (i & 7);
}

/** The ±1 vector a bit code stands for. */
export function unpackBits(bits: Uint8Array, dimensions: number): Float32Array {
  const out = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) out[i] = bits[i >> 3]! & (1 << (i & 7)) ? 1 : -1;
  return out;
}

export class Quantizer {
  readonly kind: CodeKind;
  readonly metric: CodeMetric;
  readonly stride: number;

  constructor(
    readonly distance: Distance,
    readonly dimensions: number,
    readonly binaryQuantized: boolean,
    /** int8 only: value of one code step. */
    public scale: number,
  ) {
    this.kind = codeKind(distance, binaryQuantized);
    this.metric = codeMetric(distance, binaryQuantized);
    this.stride = codeStride(this.kind, dimensions);
  }

  /** Write the code of `v` at `out[offset .. offset + stride)`. */
  encode(v: Float32Array, out: Uint8Array, offset: number): void {
    if (this.kind === 'bits') {
      out.fill(0, offset, offset + this.stride);
      packBits(v, out, offset);
      return;
    }
    let inv = 1 / this.scale;
    if (this.distance === 'cosine') {
      let n = 0;
      for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
      if (n > 0) inv /= Math.sqrt(n);
    }
    for (let i = 0; i < v.length; i++) {
      const c = Math.round(v[i]! * inv);
      // Two's complement byte of the clamped code.
      out[offset + i] = (c > 127 ? 127 : c < -127 ? -127 : c) & 0xff;
    }
    out.fill(0, offset + v.length, offset + this.stride);
  }
}
