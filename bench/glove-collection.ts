/**
 * The migrate benchmark's collection (not a section itself: its name has no `.bench.`): the full
 * GloVe set in `../shared/data/glove-100` (200,000 rows, 100-d float32, L2-normalised), beside the
 * repository, served by the Qdrant test server. Tests use the small GloVe fixture instead.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CollectionSpec, PointSource } from '../test/qdrant-server/collection.js';

const GLOVE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'data', 'glove-100');

/** Reads rows of the full GloVe base file. */
export function gloveReader(): { dim: number; count: number; row(i: number): number[] } {
  const buf = readFileSync(join(GLOVE, 'base.f32'));
  const f = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  return { dim: 100, count: f.length / 100, row: (i) => Array.from(f.subarray(i * 100, i * 100 + 100)) };
}

/** 200k-scale benchmark collection: GloVe rows as vectors, payload generated per read (full set beside the repository). */
export function gloveCollection(count: number): CollectionSpec {
  const glove = gloveReader();
  const words = readFileSync(join(GLOVE, 'words.txt'), 'utf8').split('\n');
  const n = Math.min(count, glove.count);
  const source: PointSource = {
    count: n,
    id: (i) => BigInt(i),
    at: (i) => ({ id: BigInt(i), payload: { word: words[i] ?? '', rank: i, bucket: `b${i % 50}` }, vector: glove.row(i) }),
  };
  return {
    name: 'glove',
    vectors: { size: 100, distance: 'Cosine' },
    payloadIndexes: { rank: { data_type: 'integer' }, bucket: { data_type: 'keyword' } },
    points: source,
  };
}
