/**
 * The data side of the Qdrant test server: a collection is a config plus points kept in Qdrant's
 * id order (integer ids ascending, then UUIDs ascending as 128-bit numbers, which is the order of
 * their lowercase hex text). Points may be generated on demand (`PointSource`), so a 200k-point
 * benchmark collection costs no more than its vector file.
 */

export type PointId = bigint | string;
export type SparseVector = { indices: number[]; values: number[] };
export type VectorValue = number[] | number[][] | SparseVector;
export type StoredVector = number[] | Record<string, VectorValue>;

export interface StoredPoint {
  id: PointId;
  payload: Record<string, unknown> | null;
  vector: StoredVector | null;
}

export interface PointSource {
  readonly count: number;
  /** Points in Qdrant order; `at(i)` for 0 <= i < count. */
  id(i: number): PointId;
  at(i: number): StoredPoint;
}

export interface VectorParams {
  size: number;
  distance: 'Cosine' | 'Euclid' | 'Dot' | 'Manhattan';
  multivector_config?: { comparator: 'max_sim' };
  quantization_config?: Record<string, unknown> | null;
}

export interface PayloadIndex {
  data_type: 'keyword' | 'integer' | 'float' | 'geo' | 'text' | 'bool' | 'datetime' | 'uuid';
  params?: Record<string, unknown>;
}

export interface CollectionSpec {
  name: string;
  /** One unnamed vector (VectorParams) or named ones; omitted means no dense vectors. */
  vectors?: VectorParams | Record<string, VectorParams>;
  sparseVectors?: Record<string, { modifier?: 'none' | 'idf' }>;
  quantization?: Record<string, unknown> | null;
  payloadIndexes?: Record<string, PayloadIndex>;
  aliases?: string[];
  points: PointSource;
}

export function normalizeUuid(s: string): string {
  const hex = s.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function compareIds(a: PointId, b: PointId): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint') return -1;
  if (typeof b === 'bigint') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Points held in memory, sorted into Qdrant order once. */
export function arraySource(points: StoredPoint[]): PointSource {
  const sorted = points
    .map((p) => ({ ...p, id: typeof p.id === 'string' ? normalizeUuid(p.id) : p.id }))
    .sort((a, b) => compareIds(a.id, b.id));
  for (let i = 1; i < sorted.length; i++) {
    if (compareIds(sorted[i - 1]!.id, sorted[i]!.id) === 0) throw new Error(`duplicate point id ${String(sorted[i]!.id)}`);
  }
  return { count: sorted.length, id: (i) => sorted[i]!.id, at: (i) => sorted[i]! };
}

/** First position whose id is >= `offset` (Qdrant's scroll offset is inclusive). */
export function lowerBound(source: PointSource, offset: PointId): number {
  let lo = 0;
  let hi = source.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds(source.id(mid), offset) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
