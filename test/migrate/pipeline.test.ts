import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineTarget } from '../../src/migrate/engine-target.js';
import { migrateQdrant, type MigrateOptions } from '../../src/migrate/pipeline.js';
import { citiesCollection, edgeCollection, ledgerCollection, moviesCollection } from '../qdrant-server/fixtures.js';
import { startQdrantServer, type QdrantTestServer } from '../qdrant-server/server.js';

let server: QdrantTestServer;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'migrate-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  server = await startQdrantServer({ collections: [citiesCollection(), moviesCollection(), ledgerCollection(), edgeCollection()] });
});
afterAll(async () => {
  await server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function options(collection: string, over: Partial<MigrateOptions> = {}): MigrateOptions {
  return {
    qdrantUrl: server.url,
    collections: [collection],
    batchSize: 100,
    batchBytes: 10 * 1024 * 1024,
    pageSize: 64,
    mapping: { vectors: 'keep', unsupported: 'skip', binaryQuantized: false },
    resume: false,
    swap: false,
    dryRun: false,
    checkpointDir: tmp(),
    verifySample: 50,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    ...over,
  };
}

describe('migrate pipeline into the embedded engine', () => {
  it('migrates the cities collection and verifies it', async () => {
    const target = await EngineTarget.open(join(tmp(), 'db'));
    try {
      const r = await migrateQdrant(options('cities'), target);
      console.log(JSON.stringify(r.collections[0]!.verification, null, 1).slice(0, 2000));
      expect(r.ok).toBe(true);
    } finally {
      await target.close();
    }
  });
});
