#!/usr/bin/env node
/**
 * The cost of the logger to the searches it could log: one engine (the 7,943 films of
 * fixtures/movies.json) behind one server in this process, POST /indexes/movies/search `star wars`
 * sent BENCH_REQUESTS times (default 2,000; autocannon, 8 connections) in three states:
 *   none      no `/logs/stream` client (the peer);
 *   excluded  a stream open whose target excludes request events (`search::tasks=info`): the
 *             events are refused by the level check before anything is built;
 *   listening a stream of every request (`search::http=info`, json), read by a client in this process.
 * The figure is CPU time per request of this whole process (server, client and stream reader:
 * process.cpuUsage), the states in turn (the order rotating), BENCH_ROUNDS (default 3) rounds, the lowest kept,
 * each as a ratio to `none`.
 *
 *   npm run build && node bench/logs.bench.mjs
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import autocannon from 'autocannon';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { Engine } = await import(join(root, 'dist/src/index.js'));
const { createServer } = await import(join(root, 'dist/src/http/server.js'));
const { setStderrTargets } = await import(join(root, 'dist/src/engine/logs/logger.js'));
const { LogTargets } = await import(join(root, 'dist/src/engine/logs/targets.js'));

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'search-bench-logs-'));
// stderr stays quiet: only the stream is measured
setStderrTargets(LogTargets.parse('off'));
const engine = await Engine.open({ dbPath: join(dir, 'data.ms'), logLevel: 'trace', searchThreads: 0 });
try {
  const movies = JSON.parse(readFileSync(join(root, 'fixtures/data/movies.json'), 'utf8'));
  const task = await engine.addDocuments('movies', movies, { method: 'replace', primaryKey: 'id' });
  await engine.waitForTask(task.taskUid, { timeoutMs: 600_000 });
  const server = createServer(engine);
  const { url } = await server.listen('127.0.0.1:0');
  await fetch(`${url}/experimental-features`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"logsRoute":true}' });

  const search = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q: 'star wars' }) };
  const load = () =>
    new Promise((resolve, reject) =>
      autocannon({ url: `${url}/indexes/movies/search`, ...search, connections: 8, amount: REQUESTS }, (error, result) =>
        error ? reject(error) : resolve(result),
      ),
    );
  /** Open a stream and read it to the end in the background (node:http: no idle timeout); `done` resolves with the bytes read once DELETEd. */
  const openStream = (target) =>
    new Promise((opened, failed) => {
      const request = http.request(`${url}/logs/stream`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
        if (response.statusCode !== 200) return failed(new Error(`stream: ${response.statusCode}`));
        let bytes = 0;
        const done = new Promise((resolve) => {
          response.on('data', (chunk) => (bytes += chunk.length));
          response.on('end', () => resolve(bytes));
        });
        // wrapped: resolving with the promise itself would wait for the stream's end
        opened({ done });
      });
      request.on('error', failed);
      request.end(JSON.stringify({ target, mode: 'json' }));
    });
  const states = {
    none: null,
    excluded: 'search::tasks=info',
    listening: 'search::http=info',
  };
  const best = Object.fromEntries(Object.keys(states).map((name) => [name, Infinity]));
  const streamed = {};
  await load(); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    // the order turns each round, so that no state always follows the same one
    const entries = Object.entries(states);
    for (const [name, target] of [...entries.slice(round % entries.length), ...entries.slice(0, round % entries.length)]) {
      const reading = target ? await openStream(target) : null;
      if (process.env.BENCH_VERBOSE) console.error(name, 'opened');
      const before = process.cpuUsage();
      const started = performance.now();
      const result = await load();
      if (process.env.BENCH_VERBOSE) console.error(name, round, `${(performance.now() - started).toFixed(0)} ms`, result.requests.total);
      const used = process.cpuUsage(before);
      if (result.errors || result.non2xx) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx`);
      if (reading) {
        await fetch(`${url}/logs/stream`, { method: 'DELETE' });
        if (process.env.BENCH_VERBOSE) console.error(name, 'deleted');
        streamed[name] = await reading.done;
      }
      best[name] = Math.min(best[name], (used.user + used.system) / result.requests.total);
    }
  }
  console.log(`logs: CPU per search request, this process (server + client), ${REQUESTS} requests x ${ROUNDS} rounds, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const name of Object.keys(states))
    console.log(
      `  ${name.padEnd(9)} ${best[name].toFixed(0).padStart(5)} us  ${(best[name] / best.none).toFixed(3)}x none${streamed[name] !== undefined ? `  (last stream ${streamed[name]} bytes)` : ''}`,
    );
  await server.close();
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
