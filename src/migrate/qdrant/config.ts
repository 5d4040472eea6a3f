/**
 * What a Qdrant collection declares, read from `GET /collections/{name}` and its aliases, reduced
 * to the facts the mapping needs.
 */

export type Distance = 'Cosine' | 'Dot' | 'Euclid' | 'Manhattan';
export type QuantizationKind = 'binary' | 'scalar' | 'product' | 'turbo';
export type PayloadIndexType = 'keyword' | 'integer' | 'float' | 'geo' | 'text' | 'bool' | 'datetime' | 'uuid';

export interface DenseVectorSpec {
  /** null for the collection's single unnamed vector. */
  name: string | null;
  size: number;
  distance: Distance;
  multivector: boolean;
  /** The vector's own quantization, else the collection's. */
  quantization: QuantizationKind | null;
}

export interface SparseVectorSpec {
  name: string;
  modifier: string | null;
}

export interface PayloadIndexSpec {
  /** As Qdrant names it, e.g. `place.timezone` or `tags[]`. */
  key: string;
  type: PayloadIndexType;
  points: number;
}

export interface CollectionConfig {
  name: string;
  aliases: string[];
  /** Qdrant's approximate count from the info endpoint. */
  pointsCount: number | null;
  dense: DenseVectorSpec[];
  sparse: SparseVectorSpec[];
  quantization: QuantizationKind | null;
  payloadIndexes: PayloadIndexSpec[];
}

interface RawVectorParams {
  size: number;
  distance: Distance;
  multivector_config?: unknown;
  quantization_config?: unknown;
}

interface RawCollectionInfo {
  points_count?: number | null;
  config: {
    params: { vectors?: RawVectorParams | Record<string, RawVectorParams>; sparse_vectors?: Record<string, { modifier?: string | null }> | null };
    quantization_config?: unknown;
  };
  payload_schema: Record<string, { data_type: PayloadIndexType; points?: number }>;
}

export function quantizationKind(q: unknown): QuantizationKind | null {
  if (!q || typeof q !== 'object') return null;
  for (const k of ['binary', 'scalar', 'product', 'turbo'] as const) if (k in q) return k;
  return null;
}

function isVectorParams(v: unknown): v is RawVectorParams {
  return !!v && typeof v === 'object' && typeof (v as RawVectorParams).size === 'number' && typeof (v as RawVectorParams).distance === 'string';
}

export function parseCollectionInfo(name: string, info: unknown, aliases: string[]): CollectionConfig {
  const raw = info as RawCollectionInfo;
  const collectionQ = quantizationKind(raw.config.quantization_config);
  const spec = (n: string | null, v: RawVectorParams): DenseVectorSpec => ({
    name: n,
    size: Number(v.size),
    distance: v.distance,
    multivector: !!v.multivector_config,
    quantization: quantizationKind(v.quantization_config) ?? collectionQ,
  });
  const vectors = raw.config.params.vectors;
  const dense: DenseVectorSpec[] = [];
  if (isVectorParams(vectors)) dense.push(spec(null, vectors));
  else if (vectors) for (const [n, v] of Object.entries(vectors)) dense.push(spec(n, v));
  const sparse = Object.entries(raw.config.params.sparse_vectors ?? {}).map(([n, s]) => ({ name: n, modifier: s?.modifier ?? null }));
  const payloadIndexes = Object.entries(raw.payload_schema ?? {})
    .map(([key, p]) => ({ key, type: p.data_type, points: Number(p.points ?? 0) }))
    .sort((a, b) => a.key.localeCompare(b.key));
  return {
    name,
    aliases,
    pointsCount: raw.points_count == null ? null : Number(raw.points_count),
    dense,
    sparse,
    quantization: collectionQ,
    payloadIndexes,
  };
}
