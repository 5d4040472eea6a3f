/**
 * End to end through the built CLI: `node bin/run.js migrate qdrant ...` against the Qdrant test
 * server, into a database directory or a running server, for every fixture collection.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { createServer } from '../../src/http/server.js';
import { SearchClient } from '../../src/client/index.js';
import type { MigrationResult } from '../../src/migrate/pipeline.js';
import { citiesCollection, edgeCollection, LEDGER_EDGE_IDS, ledgerCollection, moviesCollection } from '../qdrant-server/fixtures.js';
import { startQdrantServer, type QdrantTestServer } from '../qdrant-server/server.js';

let qdrant: QdrantTestServer;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'migrate-cli-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  qdrant = await startQdrantServer({ collections: [citiesCollection(), moviesCollection(), ledgerCollection(), edgeCollection()], apiKey: 'qkey' });
});
afterAll(async () => {
  await qdrant.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function cli(args: string[], cwd: string): ResultPromise<{ reject: false; cwd: string; env: Record<string, string> }> {
  return execa('node', [join(process.cwd(), 'bin/run.js'), 'migrate', 'qdrant', '--qdrant-url', qdrant.url, ...args], {
    reject: false,
    cwd,
    env: { QDRANT_API_KEY: 'qkey' },
  });
}

function report(stdout: string): MigrationResult {
  return JSON.parse(stdout) as MigrationResult;
}

async function withEngine<T>(dbPath: string, fn: (e: Engine) => Promise<T> | T): Promise<T> {
  const engine = await Engine.open({ dbPath, logLevel: 'off' });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

describe('search migrate qdrant (built CLI)', () => {
  it('migrates every fixture collection into a database directory, JSON report on stdout', async () => {
    const cwd = tmp();
    const r = await cli(['--collection', 'cities', '--collection', 'movies', '--collection', 'ledger', '--collection', 'edge', '--db-path', 'db', '--json', '--batch-size', '150', '--page-size', '50', '--binary-quantized'], cwd);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const rep = report(r.stdout);
    expect(rep.ok).toBe(true);
    expect(rep.collections.map((c) => [c.index, c.verification?.qdrantCount, c.verification?.documentCount, c.verification?.passed])).toEqual([
      ['cities', 500, 500, true],
      ['movies', 400, 400, true],
      ['ledger', 120, 120, true],
      ['edge', 30, 30, true],
    ]);
    expect(rep.peakRssMb).toBeGreaterThan(0);
    // no checkpoint left behind after a verified run
    expect(readdirSync(join(cwd, '.search-migrate'))).toEqual([]);
    await withEngine(join(cwd, 'db'), (e) => {
      expect(e.listIndexes({ limit: 10 }).results.map((i) => [i.uid, i.primaryKey])).toEqual(
        expect.arrayContaining([['cities', 'id'], ['movies', 'id'], ['ledger', 'id'], ['edge', 'id']]),
      );
      for (const id of LEDGER_EDGE_IDS) expect(e.getDocument('ledger', id.toString()).id).toBe(id.toString());
      expect(e.getSettings('ledger').embedders.default).toMatchObject({ source: 'userProvided', dimensions: 8, binaryQuantized: true });
      const first = moviesCollection(1).points.at(0);
      expect(e.getDocument('movies', String(first.id)).title).toBe((first.payload as { title: string }).title);
    });
    await searchesMatchQdrantData(join(cwd, 'db'));
  });

  it('shows listr2 steps and a progress bar with points/s and ETA on a terminal', async () => {
    const cwd = tmp();
    const cmd = ['node', join(process.cwd(), 'bin/run.js'), 'migrate', 'qdrant', '--qdrant-url', qdrant.url, '--collection', 'edge', '--db-path', 'db', '--batch-size', '10', '--page-size', '5'];
    // `script` runs the command in a pseudo-terminal, as a person would
    const r = await execa('script', ['-qec', cmd.join(' '), '/dev/null'], { reject: false, cwd, env: { QDRANT_API_KEY: 'qkey' } });
    expect(r.exitCode).toBe(0);
    const out = r.stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    for (const step of ['Read collection config', 'Create the index and apply settings', 'Copy points', 'Verify count and sampled documents']) expect(out).toContain(step);
    expect(out).toMatch(/100% \| 30\/30 points \| \d+ points\/s \| ETA 0s/);
    expect(out).toMatch(/verification: passed/);
  });

  it('prints the plan on --dry-run and writes nothing', async () => {
    const cwd = tmp();
    const r = await cli(['--collection', 'edge', '--dry-run'], cwd);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/Plan for edge -> index edge: 30 points/);
    expect(r.stdout).toMatch(/warning: sparse vector "keywords" skipped/);
    expect(r.stdout).toMatch(/warning: vector "manhattan" uses Manhattan distance/);
    expect(r.stdout).toMatch(/Dry run: nothing was written/);
    expect(existsSync(join(cwd, 'db'))).toBe(false);
    expect(existsSync(join(cwd, '.search-migrate'))).toBe(false);
  });

  it('resumes after the process is killed in the middle, without duplicates or gaps', async () => {
    const cwd = tmp();
    const args = ['--collection', 'cities', '--db-path', 'db', '--json', '--batch-size', '40', '--page-size', '20'];
    const first = cli(args, cwd);
    const startScroll = qdrant.counts.scroll;
    qdrant.faults.scrollDelayMs = 30;
    qdrant.faults.onScroll = (n) => {
      if (n === startScroll + 15) first.kill('SIGKILL');
    };
    const killed = await first;
    qdrant.faults.onScroll = undefined;
    qdrant.faults.scrollDelayMs = 0;
    expect(killed.signal).toBe('SIGKILL');
    expect(readdirSync(join(cwd, '.search-migrate'))).toHaveLength(1);
    const before = qdrant.requests.length;
    const resumed = await cli([...args, '--resume'], cwd);
    expect(resumed.exitCode).toBe(0);
    const c = report(resumed.stdout).collections[0]!;
    expect(c.resumedFrom).not.toBeNull();
    expect(c.counts.migratedThisRun).toBeLessThan(500);
    expect(c.verification).toMatchObject({ passed: true, qdrantCount: 500, documentCount: 500 });
    const firstScroll = qdrant.requests.slice(before).find((q) => q.route === 'scroll')!;
    expect(String((firstScroll.body as { offset: unknown }).offset)).toBe(c.resumedFrom);
    await withEngine(join(cwd, 'db'), (e) => {
      expect(e.indexStats('cities').numberOfDocuments).toBe(500);
      expect(e.getDocuments('cities', { limit: 1000 }).results.map((d) => d.id).sort()).toEqual([...new Set(e.getDocuments('cities', { limit: 1000 }).results.map((d) => d.id))].sort());
    });
  });

  it('reads pages on its reader thread through retried faults; a page that keeps failing stops the run (exit 6) and --resume finishes', async () => {
    const cwd = tmp();
    const args = ['--collection', 'cities', '--db-path', 'db', '--json', '--batch-size', '40', '--page-size', '20', '--retries', '1'];
    const n = qdrant.counts.scroll;
    // request n+3 is answered 429 once (retried), requests n+9 and n+10 (a page and its one retry) 500
    qdrant.faults.rules.push({ route: 'scroll', nth: [n + 3], status: 429, retryAfter: '0' }, { route: 'scroll', nth: [n + 9, n + 10], status: 500 });
    const failed = await cli(args, cwd);
    qdrant.faults.rules = [];
    expect(failed.exitCode, failed.stderr).toBe(6);
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, error: { kind: 'http', message: expect.stringMatching(/^Qdrant answered 500 to POST \/collections\/cities\/points\/scroll/) } });
    // the batches confirmed before the failure are kept: the second run starts after them
    const resumed = await cli([...args, '--resume'], cwd);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const c = report(resumed.stdout).collections[0]!;
    expect(c.resumedFrom).not.toBeNull();
    expect(c.counts.migratedThisRun).toBeLessThan(500);
    expect(c.verification).toMatchObject({ passed: true, qdrantCount: 500, documentCount: 500 });
    await withEngine(join(cwd, 'db'), (e) => expect(e.indexStats('cities').numberOfDocuments).toBe(500));
  });

  it('stops on Ctrl-C (exit 130) and --resume finishes the job', async () => {
    const cwd = tmp();
    const args = ['--collection', 'movies', '--db-path', 'db', '--batch-size', '40', '--page-size', '20'];
    const first = cli(args, cwd);
    const startScroll = qdrant.counts.scroll;
    qdrant.faults.scrollDelayMs = 30;
    qdrant.faults.onScroll = (n) => {
      if (n === startScroll + 12) first.kill('SIGINT');
    };
    const stopped = await first;
    qdrant.faults.onScroll = undefined;
    qdrant.faults.scrollDelayMs = 0;
    expect(stopped.exitCode, `${stopped.signal} ${stopped.stderr}`).toBe(130);
    expect(stopped.stderr).toMatch(/--resume/);
    const resumed = await cli([...args, '--resume'], cwd);
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stdout).toMatch(/resumed from offset \d+/);
    expect(resumed.stdout).toMatch(/verification: passed \(Qdrant exact count 400, documents 400/);
  });

  it('migrates into a running server through the HTTP API (--url), with --swap on the second run', async () => {
    const cwd = tmp();
    const engine = await Engine.open({ dbPath: join(cwd, 'served'), logLevel: 'off' });
    const server = createServer(engine, { logLevel: process.env.MIGRATE_DEBUG ? 'error' : 'off' });
    const { url } = await server.listen('127.0.0.1:0');
    try {
      // the ledger's vectors use Dot: a remote target (taken for a Meilisearch) has no distance
      // setting, so the run stops and says what to do unless told to rank by cosine
      const refused = await cli(['--collection', 'ledger', '--url', url], cwd);
      expect(refused.exitCode).not.toBe(0);
      expect(refused.stderr).toMatch(/uses Dot distance.*no distance setting/s);
      expect(refused.stderr).toMatch(/--rank-by-cosine/);
      expect(((await (await fetch(`${url}/indexes`)).json()) as { results: unknown[] }).results).toEqual([]);
      const a = await cli(['--collection', 'ledger', '--url', url, '--json', '--rank-by-cosine'], cwd);
      expect(a.exitCode, a.stderr).toBe(0);
      expect(report(a.stdout).collections[0]!.verification).toMatchObject({ passed: true, documentCount: 120 });
      const b = await cli(['--collection', 'ledger', '--url', url, '--json', '--swap', '--rank-by-cosine'], cwd);
      expect(b.exitCode, b.stderr).toBe(0);
      expect(report(b.stdout).collections[0]!.swapped).toBe(true);
      const client = new SearchClient({ url });
      expect((await client.indexStats('ledger')).numberOfDocuments).toBe(120);
      const fetched = await client.fetchDocuments('ledger', { ids: ['18446744073709551615'], retrieveVectors: false });
      expect(fetched.results[0]).toMatchObject({ id: '18446744073709551615', sku: expect.any(String) });
    } finally {
      await server.close();
      await engine.close();
    }
  });

  it('reembed mode configures the embedders from a settings file and copies no vectors', async () => {
    const cwd = tmp();
    writeFileSync(join(cwd, 'embedders.json'), JSON.stringify({ embedders: { title: { source: 'userProvided', dimensions: 3 } } }));
    const r = await cli(['--collection', 'movies', '--db-path', 'db', '--json', '--vectors', 'reembed', '--embedder-from-settings', 'embedders.json'], cwd);
    expect(r.exitCode, r.stderr).toBe(0);
    const c = report(r.stdout).collections[0]!;
    expect(c.plan.withVector).toBe(false);
    expect(c.plan.settings.embedders).toEqual({ title: { source: 'userProvided', dimensions: 3 } });
    const scroll = qdrant.requests.filter((q) => q.route === 'scroll').at(-1)!;
    expect((scroll.body as { with_vector: unknown }).with_vector).toBe(false);
  });

  it('fails clearly: bad Qdrant key (3), unknown collection (4), missing target (2); unreachable hosts: pipeline.test.ts', async () => {
    const cwd = tmp();
    const auth = await execa('node', [join(process.cwd(), 'bin/run.js'), 'migrate', 'qdrant', '--qdrant-url', qdrant.url, '--qdrant-api-key', 'wrong', '--collection', 'edge', '--dry-run'], { reject: false, cwd });
    expect(auth.exitCode).toBe(3);
    expect(oneLine(auth.stderr)).toMatch(/Qdrant refused the request \(401 Invalid API key or JWT\); check --qdrant-api-key/);
    const unknown = await cli(['--collection', 'nope', '--dry-run', '--json'], cwd);
    expect(unknown.exitCode).toBe(4);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ ok: false, error: { kind: 'not_found' } });
    const noTarget = await cli(['--collection', 'edge'], cwd);
    expect(noTarget.exitCode).toBe(2);
    expect(oneLine(noTarget.stderr)).toMatch(/--db-path DIR.*--url URL/);
  });

  it('without a terminal, progress goes to stderr as lines; --json is quiet and has the common report keys', async () => {
    const cwd = tmp();
    const logged = await cli(['--collection', 'edge', '--db-path', 'db'], cwd);
    expect(logged.exitCode, logged.stderr).toBe(0);
    expect(logged.stderr).toMatch(/^\[\d+\.\d s\] edge -> index edge: 30 points$/m);
    expect(logged.stderr).toMatch(/^\[\d+\.\d s\] edge: documents$/m);
    expect(logged.stderr).toMatch(/^\[\d+\.\d s\] edge: 30\/30 points copied \(100%\)$/m);
    expect(logged.stderr).toMatch(/^\[\d+\.\d s\] edge: verify$/m);

    const quiet = await cli(['--collection', 'edge', '--db-path', 'db2', '--json'], cwd);
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(JSON.parse(quiet.stdout)).toMatchObject({ status: 'succeeded', taskUid: null, error: null, ok: true });
    const badFlag = await cli(['--collection', 'edge', '--batch-size', 'many', '--json'], cwd);
    expect(badFlag.exitCode).toBe(2);
    expect(JSON.parse(badFlag.stdout)).toMatchObject({ status: 'failed', taskUid: null, error: { code: 'invalid_flags' } });
  });
});

/** Cosine similarity, as Qdrant ranks a Cosine collection. */
function cosine(a: number[], b: number[]): number {
  let d = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return d / Math.sqrt(na * nb);
}

function haversineMeters(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = (x: number) => (x * Math.PI) / 180;
  const a = Math.sin(r(lat2 - lat1) / 2) ** 2 + Math.cos(r(lat1)) * Math.cos(r(lat2)) * Math.sin(r(lon2 - lon1) / 2) ** 2;
  return 2 * 6371000 * Math.asin(Math.sqrt(a));
}

/** Keyword, vector and filtered searches on the migrated indexes answer what the Qdrant data implies. */
async function searchesMatchQdrantData(dbPath: string): Promise<void> {
  const cities = citiesCollection();
  const movies = moviesCollection();
  const ledger = ledgerCollection();
  const all = <T>(c: typeof cities, f: (p: ReturnType<typeof cities.points.at>) => T) => Array.from({ length: c.points.count }, (_, i) => f(c.points.at(i)));
  await withEngine(dbPath, async (e) => {
    // keyword: the name field (Qdrant text index) is searchable
    const kw = await e.search('cities', { q: 'Ras Al Khaimah', limit: 3 });
    expect(kw.hits[0]).toMatchObject({ id: '291074', name: 'Ras Al Khaimah City' });
    const byTitle = await e.search('movies', { q: (movies.points.at(7).payload as { title: string }).title, limit: 1 });
    expect(byTitle.hits[0]!.id).toBe(String(movies.points.at(7).id));

    // vector: the same query vector ranks like Qdrant's Cosine would
    for (const i of [0, 123, 399]) {
      const query = (movies.points.at(i).vector as Record<string, number[]>).plot!;
      const expected = all(movies, (p) => ({ id: String(p.id), s: cosine(query, (p.vector as Record<string, number[]>).plot!) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 5)
        .map((x) => x.id);
      const res = await e.search('movies', { vector: query, hybrid: { embedder: 'plot', semanticRatio: 1 }, limit: 5 });
      expect(res.hits.map((h) => h.id)).toEqual(expected);
      expect(expected[0]).toBe(String(movies.points.at(i).id));
    }
    const cityQuery = cities.points.at(10).vector as number[];
    const cityHits = await e.search('cities', { vector: cityQuery, hybrid: { embedder: 'default', semanticRatio: 1 }, limit: 1 });
    expect(cityHits.hits[0]!.id).toBe(String(cities.points.at(10).id));

    // filters on migrated payload: keyword index, nested keyword index, numeric range, bool, geo
    const uae = all(cities, (p) => p.payload as { country: string }).filter((p) => p.country === 'United Arab Emirates').length;
    expect((await e.search('cities', { filter: 'country = "United Arab Emirates"', limit: 0 })).estimatedTotalHits).toBe(uae);
    const dubaiTz = all(cities, (p) => p.payload as { place: { timezone: string } }).filter((p) => p.place.timezone === 'Asia/Dubai').length;
    expect((await e.search('cities', { filter: 'place.timezone = "Asia/Dubai"', limit: 0 })).estimatedTotalHits).toBe(dubaiTz);
    const big = all(cities, (p) => p.payload as { population: number }).filter((p) => p.population > 1_000_000).length;
    expect((await e.search('cities', { filter: 'population > 1000000', limit: 0 })).estimatedTotalHits).toBe(big);
    const [lat, lon] = [25.2, 55.27];
    const near = all(cities, (p) => ({ id: String(p.id), l: (p.payload as { location: { lat: number; lon: number } }).location }))
      .filter((p) => haversineMeters(lat, lon, p.l.lat, p.l.lon) <= 100_000)
      .map((p) => p.id)
      .sort();
    const geo = await e.search('cities', { filter: `_geoRadius(${lat}, ${lon}, 100000)`, limit: 100 });
    expect(geo.hits.map((h) => String(h.id)).sort()).toEqual(near);
    expect(near.length).toBeGreaterThan(0);
    const active = all(ledger, (p) => ({ id: String(p.id), ...(p.payload as { qty: number; active: boolean }) })).filter((p) => p.active && p.qty >= 300);
    const res = await e.search('ledger', { filter: 'active = true AND qty >= 300', limit: 200 });
    expect(res.hits.map((h) => String(h.id)).sort()).toEqual(active.map((p) => p.id).sort());
    // sortable numeric payload index: population descending, as Qdrant's order_by would give
    const top = all(cities, (p) => ({ id: String(p.id), n: (p.payload as { population: number }).population })).sort((a, b) => b.n - a.n)[0]!;
    expect((await e.search('cities', { sort: ['population:desc'], limit: 1 })).hits[0]!.id).toBe(top.id);
  });
}

/** oclif wraps error lines to the terminal width and prefixes them with ` ›`. */
function oneLine(stderr: string): string {
  return stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ');
}
