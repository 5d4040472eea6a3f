import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineTarget } from '../../src/migrate/engine-target.js';
import { MigrationError } from '../../src/migrate/errors.js';
import type { DocumentBatch, Target } from '../../src/migrate/target.js';
import { migrateQdrant, type MigrateOptions } from '../../src/migrate/pipeline.js';
import { citiesCollection, edgeCollection, LEDGER_EDGE_IDS, ledgerCollection, moviesCollection } from '../qdrant-server/fixtures.js';
import { startQdrantServer, type QdrantTestServer } from '../qdrant-server/server.js';
import { arraySource } from '../qdrant-server/collection.js';
import { migrateOptions } from './options.js';

let server: QdrantTestServer;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'migrate-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  const empty = { name: 'empty', vectors: { size: 2, distance: 'Cosine' as const }, points: arraySource([]) };
  server = await startQdrantServer({ collections: [citiesCollection(), moviesCollection(), ledgerCollection(), edgeCollection(), empty] });
});
afterAll(async () => {
  await server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function options(collection: string, over: Partial<MigrateOptions> = {}): MigrateOptions {
  return migrateOptions(server.url, collection, tmp(), over);
}

async function withTarget<T>(fn: (t: EngineTarget, dbPath: string) => Promise<T>, dbPath = join(tmp(), 'db')): Promise<T> {
  const target = await EngineTarget.open(dbPath);
  try {
    return await fn(target, dbPath);
  } finally {
    await target.close();
  }
}

describe('migrate pipeline into the embedded engine', () => {
  it('cities: geo, nested payload, mixed integer/UUID ids, settings from payload indexes', async () => {
    await withTarget(async (target) => {
      const r = await migrateQdrant(options('cities_live'), target);
      const c = r.collections[0]!;
      expect(r.ok).toBe(true);
      expect(c.collection).toBe('cities');
      expect(c.viaAlias).toBe('cities_live');
      expect(c.index).toBe('cities');
      expect(c.verification).toMatchObject({ passed: true, qdrantCount: 500, documentCount: 500, mismatches: [] });
      expect(c.counts).toMatchObject({ qdrantPoints: 500, migratedThisRun: 500, pages: 8, batches: 5 });
      const settings = await target.getSettings('cities');
      expect(settings.filterableAttributes).toEqual(expect.arrayContaining(['_geo', 'country', 'population', 'place.timezone']));
      expect(settings.sortableAttributes).toEqual(expect.arrayContaining(['_geo', 'population']));
      expect(settings.searchableAttributes).toEqual(['name']);
      expect(settings.embedders).toEqual({ default: expect.objectContaining({ source: 'userProvided', dimensions: 16 }) });
      const docs = await target.getDocuments('cities', ['291074']);
      expect(docs.get('291074')).toMatchObject({ id: '291074', name: 'Ras Al Khaimah City', _geo: { lat: 25.78953, lng: 55.9432 }, place: { timezone: 'Asia/Dubai' } });
      expect(docs.get('291074')!.location).toBeUndefined();
      expect(c.report.converted).toEqual([expect.objectContaining({ what: 'location', count: 500 })]);
    });
  });

  it('migrates an empty collection into an empty, configured index', async () => {
    await withTarget(async (target) => {
      const r = await migrateQdrant(options('empty'), target);
      expect(r.collections[0]).toMatchObject({ status: 'migrated', verification: { passed: true, qdrantCount: 0, documentCount: 0 } });
      expect((await target.getSettings('empty')).embedders).toEqual({ default: expect.objectContaining({ source: 'userProvided', dimensions: 2 }) });
    });
  });

  it('caps batches by bytes as well as by count', async () => {
    await withTarget(async (target) => {
      const r = await migrateQdrant(options('cities', { batchSize: 1000, pageSize: 100, batchBytes: 64 * 1024 }), target);
      const c = r.collections[0]!;
      expect(c.verification?.passed).toBe(true);
      // about 0.5 KB per point: 500 points do not fit in one 64 KB batch
      expect(c.counts.batches).toBeGreaterThanOrEqual(4);
    });
  });

  it('movies: named vectors of different sizes, points lacking one, distances carried over', async () => {
    await withTarget(async (target) => {
      const r = await migrateQdrant(options('movies'), target);
      const c = r.collections[0]!;
      expect(c.verification).toMatchObject({ passed: true, qdrantCount: 400, documentCount: 400 });
      expect(Object.keys(c.plan.settings.embedders!).sort()).toEqual(['plot', 'poster', 'rating']);
      expect(c.report.skipped).toEqual([expect.objectContaining({ what: 'vector poster', count: 80 })]);
      // into our engine the source's metrics carry over: nothing is re-ranked by cosine, so nothing to warn about
      expect(c.plan.settings.embedders).toMatchObject({ poster: { distance: 'euclidean' }, rating: { distance: 'dot' } });
      expect(c.plan.settings.embedders!.plot).not.toHaveProperty('distance');
      expect(c.plan.warnings).toEqual([]);
      expect(c.norms).toEqual({});
    });
  });

  it('ledger: integer ids up to 2^64-1 exact, every payload index type, binary quantization on request', async () => {
    await withTarget(async (target) => {
      const r = await migrateQdrant(options('ledger', { mapping: { vectors: 'keep', unsupported: 'skip', binaryQuantized: true } }), target);
      const c = r.collections[0]!;
      expect(c.verification).toMatchObject({ passed: true, qdrantCount: 120, documentCount: 120 });
      const ids = LEDGER_EDGE_IDS.map(String);
      const docs = await target.getDocuments('ledger', ids);
      expect([...docs.keys()].sort()).toEqual([...ids].sort());
      expect(docs.get('18446744073709551615')!.id).toBe('18446744073709551615');
      expect(docs.get('9007199254740993')!.id).toBe('9007199254740993');
      const s = await target.getSettings('ledger');
      expect((s.filterableAttributes as string[]).sort()).toEqual(['_geo', 'active', 'at', 'price', 'qty', 'ref', 'sku']);
      expect((s.sortableAttributes as string[]).sort()).toEqual(['_geo', 'at', 'price', 'qty']);
      expect(s.searchableAttributes).toEqual(['note']);
      expect((s.embedders as Record<string, unknown>).default).toMatchObject({ source: 'userProvided', dimensions: 8, binaryQuantized: true });
      expect(c.report.converted.map((e) => e.what)).toContain('serial');
    });
  });

  it('edge: sparse, multi and Manhattan vectors skipped and reported; reserved names renamed', async () => {
    await withTarget(async (target) => {
      const r = await migrateQdrant(options('edge'), target);
      const c = r.collections[0]!;
      expect(c.verification).toMatchObject({ passed: true, qdrantCount: 30, documentCount: 30 });
      expect(Object.keys(c.plan.settings.embedders!)).toEqual(['dense']);
      expect(c.plan.warnings.filter((w) => /skipped/.test(w))).toHaveLength(3);
      expect(c.report.renamed.map((e) => `${e.what}${e.detail}`).sort()).toEqual([
        '_geo-> payload__geo (reserved name)',
        '_private-> payload__private (reserved name)',
        '_vectors-> payload__vectors (reserved name)',
        'id-> payload_payload_id (reserved name)',
      ]);
      expect(c.report.renamed.every((e) => e.count === 28)).toBe(true);
      // scroll asked only for the copied vector
      const scrolls = server.requests.filter((q) => q.route === 'scroll' && q.path.includes('/edge/'));
      expect(scrolls.every((q) => JSON.stringify((q.body as { with_vector: unknown }).with_vector) === '["dense"]')).toBe(true);
    });
  });

  it('edge with --unsupported-vectors convert keeps multivectors and sparse data', async () => {
    await withTarget(async (target) => {
      const r = await migrateQdrant(options('edge', { mapping: { vectors: 'keep', unsupported: 'convert', binaryQuantized: false } }), target);
      const c = r.collections[0]!;
      expect(c.verification?.passed).toBe(true);
      expect(Object.keys(c.plan.settings.embedders!).sort()).toEqual(['colbert', 'dense', 'manhattan']);
      const docs = [...(await target.getDocuments('edge', await firstIds('edge', 30))).values()];
      const sparse = docs.filter((d) => d.qdrant_sparse);
      expect(sparse).toHaveLength(15);
      expect(sparse[0]!.qdrant_sparse).toEqual({ keywords: { indices: [expect.any(Number), expect.any(Number)], values: [0.5, expect.any(Number)] } });
    });
  });

  it('resumes after a failure in the middle without duplicates or gaps', async () => {
    const dbPath = join(tmp(), 'db');
    const checkpointDir = tmp();
    const startScroll = server.counts.scroll;
    // the 4th scroll of this run fails every time: retries exhausted, the run stops
    server.faults.rules.push({ route: 'scroll', nth: [1, 2, 3, 4, 5, 6, 7].map((k) => startScroll + 3 + k), status: 500 });
    await expect(withTarget((t) => migrateQdrant(options('cities', { checkpointDir, retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 2 } }), t), dbPath)).rejects.toThrow(/500/);
    server.faults.rules = [];
    const cp = readdirSync(checkpointDir);
    expect(cp).toHaveLength(1);
    const before = server.requests.length;
    const r = await withTarget((t) => migrateQdrant(options('cities', { checkpointDir, resume: true }), t), dbPath);
    const c = r.collections[0]!;
    expect(c.resumedFrom).not.toBeNull();
    expect(c.counts.migratedThisRun).toBeLessThan(500);
    expect(c.counts.migratedThisRun).toBeGreaterThan(0);
    expect(c.verification).toMatchObject({ passed: true, qdrantCount: 500, documentCount: 500 });
    // the resumed run started at the checkpoint's offset, not at the beginning
    const firstScroll = server.requests.slice(before).find((q) => q.route === 'scroll')!;
    expect((firstScroll.body as { offset?: unknown }).offset).toBeDefined();
    expect(readdirSync(checkpointDir).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('retries 429 honouring Retry-After, and 500 on a page', async () => {
    const n = server.counts.scroll;
    server.faults.rules.push({ route: 'scroll', nth: [n + 2], status: 429, retryAfter: '1' }, { route: 'scroll', nth: [n + 4], status: 500 });
    const retries: Array<{ delayMs: number; reason: string }> = [];
    const t0 = Date.now();
    const r = await withTarget((t) => migrateQdrant(options('movies', { onEvent: (e) => e.type === 'retry' && retries.push(e) }), t));
    server.faults.rules = [];
    expect(r.ok).toBe(true);
    expect(retries[0]).toMatchObject({ delayMs: 1000, reason: expect.stringMatching(/^429/) });
    expect(retries[1]!.reason).toMatch(/^500/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });

  it('re-migrates behind the index with --swap; refuses to write into a non-empty index without it', async () => {
    await withTarget(async (target) => {
      await migrateQdrant(options('ledger'), target);
      await expect(migrateQdrant(options('ledger'), target)).rejects.toThrow(/already holds 120 documents.*--swap/);
      const r = await migrateQdrant(options('ledger', { swap: true }), target);
      expect(r.collections[0]).toMatchObject({ swapped: true, verification: { passed: true } });
      expect(await target.getIndex('ledger__migrating')).toBeNull();
      expect(await target.getIndex('ledger')).toMatchObject({ numberOfDocuments: 120, primaryKey: 'id' });
    });
  });

  it('fails verification when a document or a vector differs, and keeps the checkpoint', async () => {
    await withTarget(async (inner) => {
      // a target that loses one document and alters a field and a vector on the way
      let tampered = false;
      const lossy: Target = Object.assign(Object.create(inner) as Target, {
        addDocuments: (uid: string, batch: DocumentBatch, pk: string) => {
          if (!tampered) {
            tampered = true;
            const docs = batch.docs.slice(1).map((d, i) => (i === 0 ? { ...d, sku: 'forged', _vectors: { default: (d._vectors as { default: number[] }).default.map((x) => x + 0.5) } } : d));
            return inner.addDocuments(uid, { ...batch, docs }, pk);
          }
          return inner.addDocuments(uid, batch, pk);
        },
      });
      const checkpointDir = tmp();
      const r = await migrateQdrant(options('ledger', { checkpointDir, verifySample: 200 }), lossy);
      const v = r.collections[0]!.verification!;
      expect(r.ok).toBe(false);
      expect(r.collections[0]!.status).toBe('failed');
      expect(v).toMatchObject({ passed: false, qdrantCount: 120, documentCount: 119 });
      const fields = v.mismatches.map((m) => m.field);
      expect(fields).toContain('(document)');
      expect(fields).toContain('sku');
      expect(fields.some((f) => f.startsWith('_vectors.default[0]'))).toBe(true);
      expect(readdirSync(checkpointDir)).toHaveLength(1);
    });
  });

  it('plans without writing on --dry-run', async () => {
    const r = await migrateQdrant(options('movies', { dryRun: true }), null);
    expect(r.collections[0]).toMatchObject({ status: 'planned', counts: { qdrantPoints: 400 } });
    expect(r.collections[0]!.plan.settings.searchableAttributes).toEqual(['title']);
  });

  it('clear errors for auth, unknown collection and unreachable host', async () => {
    const locked = await startQdrantServer({ collections: [edgeCollection(3)], apiKey: 'k' });
    try {
      const e1 = await migrateQdrant({ ...options('edge', { dryRun: true }), qdrantUrl: locked.url }, null).catch((e: MigrationError) => e);
      expect(e1).toMatchObject({ kind: 'auth' });
      expect(e1.message).toMatch(/401.*API key.*--qdrant-api-key/);
      const e2 = await migrateQdrant({ ...options('nope', { dryRun: true }), qdrantUrl: locked.url, qdrantApiKey: 'k' }, null).catch((e: MigrationError) => e);
      expect(e2).toMatchObject({ kind: 'not_found' });
      expect(e2.message).toMatch(/no collection or alias named "nope"; collections: edge/);
    } finally {
      await locked.close();
    }
    const port = await closedPort();
    const e3 = await migrateQdrant({ ...options('edge', { dryRun: true, retry: { baseDelayMs: 1, maxDelayMs: 2 } }), qdrantUrl: `http://127.0.0.1:${port}` }, null).catch((e: MigrationError) => e);
    expect(e3).toMatchObject({ kind: 'unreachable' });
    expect(e3.message).toBe(`cannot reach Qdrant at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });
});

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function firstIds(collection: string, n: number): Promise<string[]> {
  const res = await fetch(`${server.url}/collections/${collection}/points/scroll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ limit: n, with_payload: false }) });
  const j = (await res.json()) as { result: { points: Array<{ id: string }> } };
  return j.result.points.map((p) => String(p.id));
}
