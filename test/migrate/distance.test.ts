/**
 * `migrate qdrant` carries each collection's distance over: after the move, a search returns
 * the neighbours Qdrant's metric gives over the source's points (Cosine, Euclid, Dot), and a
 * Manhattan vector is refused with a message that says what to do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { EngineTarget } from '../../src/migrate/engine-target.js';
import { migrateQdrant, type MigrateOptions } from '../../src/migrate/pipeline.js';
import { arraySource, type CollectionSpec } from '../qdrant-server/collection.js';
import { startQdrantServer, type QdrantTestServer } from '../qdrant-server/server.js';
import { migrateOptions } from './options.js';
import { cosineSimilarity, gloveOfVariedLength, gloveQueries } from '../data.js';

type QdrantDistance = 'Cosine' | 'Euclid' | 'Dot' | 'Manhattan';
const N = 400;
/** GloVe rows with lengths in [0.5, 2): the metrics disagree on them. */
const rows = gloveOfVariedLength(N);
const queries = gloveQueries(8).map((q) => Array.from(q));

/** Qdrant's metrics as its documentation defines them, smaller is closer. */
const qdrant: Record<QdrantDistance, (a: number[], b: number[]) => number> = {
  Cosine: (a, b) => -cosineSimilarity(a, b),
  Euclid: (a, b) => a.reduce((s, x, i) => s + (x - b[i]!) ** 2, 0),
  Dot: (a, b) => -a.reduce((s, x, i) => s + x * b[i]!, 0),
  Manhattan: (a, b) => a.reduce((s, x, i) => s + Math.abs(x - b[i]!), 0),
};

function collection(distance: QdrantDistance): CollectionSpec {
  return {
    name: distance.toLowerCase(),
    vectors: { size: 100, distance },
    points: arraySource(rows.map((vector, id) => ({ id: BigInt(id), payload: { row: id }, vector }))),
  };
}

function sourceNeighbours(distance: QdrantDistance, q: number[]): number[] {
  return rows
    .map((v, id) => ({ id, d: qdrant[distance](q, v) }))
    .sort((a, b) => a.d - b.d)
    .slice(0, 10)
    .map((x) => x.id);
}

describe('migrate qdrant carries the distance over', () => {
  let server: QdrantTestServer;
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'migrate-distance-'));
    dirs.push(d);
    return d;
  };
  const options = (name: string): MigrateOptions => migrateOptions(server.url, name, tmp(), { verifySample: 10 });

  beforeAll(async () => {
    server = await startQdrantServer({ collections: (['Cosine', 'Euclid', 'Dot', 'Manhattan'] as const).map(collection) });
  });
  afterAll(async () => {
    await server?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const [distance, setting] of [
    ['Cosine', undefined],
    ['Euclid', 'euclidean'],
    ['Dot', 'dot'],
  ] as const) {
    it(`${distance}: the migrated index returns the source's neighbours`, async () => {
      const dbPath = join(tmp(), 'db');
      const target = await EngineTarget.open(dbPath);
      let result;
      try {
        result = await migrateQdrant(options(distance.toLowerCase()), target);
      } finally {
        await target.close();
      }
      expect(result.ok).toBe(true);
      expect(result.collections[0]!.plan.warnings).toEqual([]);
      const engine = await Engine.open({ dbPath, logLevel: 'off' });
      try {
        const index = distance.toLowerCase();
        expect(engine.getSettings(index).embedders.default).toEqual({ source: 'userProvided', dimensions: 100, ...(setting ? { distance: setting } : {}) });
        for (const q of queries) {
          const found = await engine.search(index, { vector: q, hybrid: { embedder: 'default', semanticRatio: 1 }, limit: 10 });
          expect(found.hits.map((h) => Number(h.id))).toEqual(sourceNeighbours(distance, q));
        }
      } finally {
        await engine.close();
      }
    }, 120_000);
  }

  it('Manhattan: refused with what to do, the rest of the collection migrated', async () => {
    const dbPath = join(tmp(), 'db');
    const target = await EngineTarget.open(dbPath);
    try {
      const result = await migrateQdrant(options('manhattan'), target);
      expect(result.ok).toBe(true);
      const warnings = result.collections[0]!.plan.warnings.join('\n');
      expect(warnings).toMatch(/Manhattan distance, which has no equivalent here: skipped/);
      expect(warnings).toMatch(/--unsupported-vectors convert/);
      expect(warnings).toMatch(/--vectors reembed/);
      expect(result.collections[0]!.plan.settings.embedders).toEqual({});
    } finally {
      await target.close();
    }
  }, 120_000);
});
