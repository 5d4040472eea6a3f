#!/usr/bin/env node
/**
 * The cost of `/metrics` to the requests it counts: the same engine (the 7,943 films of
 * fixtures/movies.json) behind two servers in this process, one bare and one with the metrics
 * module (its onResponse hook counts and times every request). autocannon, 32 connections, 5 s,
 * on POST /indexes/movies/search `star wars` and on GET /health (where the hook's share is the
 * largest); the two servers alternate, BENCH_ROUNDS (default 3) runs each, the best of each kept.
 * Then the time of one scrape of GET /metrics (median of 20).
 *
 *   npm run build && node bench/metrics.bench.mjs
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { Engine } = await import(join(root, 'dist/src/index.js'));
const { createServer } = await import(join(root, 'dist/src/http/server.js'));
const { metricsRoutes } = await import(join(root, 'dist/src/http/routes/metrics.js'));
const { ServerMetrics, engineMetricsSources } = await import(join(root, 'dist/src/http/metrics.js'));

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'search-bench-metrics-'));
const engine = await Engine.open({ dbPath: join(dir, 'data.ms'), logLevel: 'off', searchThreads: 0 });
try {
  const movies = JSON.parse(readFileSync(join(root, 'fixtures/data/movies.json'), 'utf8'));
  const task = await engine.addDocuments('movies', movies, { method: 'replace', primaryKey: 'id' });
  await engine.waitForTask(task.taskUid, { timeoutMs: 600_000 });

  const bare = createServer(engine);
  const metrics = new ServerMetrics(engineMetricsSources(engine, { outcomes: { delivered: 0, failed: 0 } }));
  const measured = createServer(engine, { routes: [metricsRoutes(metrics, () => true)] });
  const urls = { bare: (await bare.listen('127.0.0.1:0')).url, metrics: (await measured.listen('127.0.0.1:0')).url };

  const scenarios = {
    search: { path: '/indexes/movies/search', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q: 'star wars' }) },
    health: { path: '/health', method: 'GET' },
  };
  const load = (url, { path, ...request }) =>
    new Promise((resolve, reject) =>
      autocannon({ url: url + path, ...request, connections: 32, duration: 5 }, (error, result) => (error ? reject(error) : resolve(result))),
    );
  const best = {};
  for (const [scenario, request] of Object.entries(scenarios)) {
    best[scenario] = { bare: { rps: 0, p99: Infinity }, metrics: { rps: 0, p99: Infinity } };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ['bare', 'metrics']) {
        const result = await load(urls[name], request);
        if (result.errors || result.non2xx) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx`);
        const kept = best[scenario][name];
        kept.rps = Math.max(kept.rps, result.requests.average);
        kept.p99 = Math.min(kept.p99, result.latency.p99);
      }
    }
  }
  const scrapes = [];
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    const response = await fetch(`${urls.metrics}/metrics`);
    await response.text();
    scrapes.push(performance.now() - start);
  }
  scrapes.sort((a, b) => a - b);

  console.log('metrics: requests per second, 32 connections (shared, noisy 2-core machine)');
  for (const [scenario, { bare: b, metrics: m }] of Object.entries(best)) {
    console.log(`  ${scenario.padEnd(7)} bare ${b.rps.toFixed(0)} req/s (p99 ${b.p99} ms); with the metrics hook ${m.rps.toFixed(0)} req/s (p99 ${m.p99} ms): ${(m.rps / b.rps).toFixed(2)}x`);
  }
  console.log(`  one GET /metrics scrape: median ${scrapes[10].toFixed(1)} ms`);
  await bare.close();
  await measured.close();
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
