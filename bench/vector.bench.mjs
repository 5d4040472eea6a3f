#!/usr/bin/env node
/**
 * Vector search as users get it: GloVe-100 (../shared/data/glove-100) sent as documents with
 * `_vectors` to a `userProvided` embedder through the `Engine` API (task pipeline, defaults),
 * for each ingestion pattern, beside hnswlib-node built on the same final vectors in the same run
 * (each engine in its own child process).
 *
 *   npm run build && node bench/vector.bench.mjs
 *   VECTOR_BENCH_PATTERNS=25k,delete node bench/vector.bench.mjs     (a subset of the patterns)
 *
 * Patterns (50,000 vectors unless said): 2 payloads of 25k, 10 of 5k, 100 of 500, 10 of 5k then
 * 30% deleted, 10 of 5k then 30% of the vectors replaced by others, 200k in 10 payloads of 20k;
 * then the first search after a restart, with and without VECTORSTORE_READER_PREFETCH_MEMORY
 * (in a fresh process: at once after `Engine.open`, and once the background warm-up is done),
 * recall per distance metric (vectors given deterministic lengths so that the metrics
 * disagree), and `memory`: anonymous memory (RssAnon) of fresh processes serving 50,000 and
 * 500,000 vectors of 100 dimensions, beside hnswlib-node serving the same vectors from its saved
 * index: with defaults, without the engine's warm-up (vector searches only), and with defaults
 * under the allocator settings `search serve` uses inside a memory limit (GLIBC_TUNABLES), and
 * with the node options it uses with 4 GiB or more (SERVING_HEAP_OPTIONS); the
 * median of VECTOR_BENCH_MEMORY_RUNS (default 5) fresh processes per size and configuration, with
 * the spread and every single figure, and the ratio of the medians (`memoryRows`). GloVe-100 has 200,000 vectors: rows beyond are mixes of two of them, normalised
 * (`rowVector`). Recall@10 is against brute force over the final vectors, with the pattern's metric.
 * Our QPS and recall are those of the third pass over the 1,000 queries after 100 warm-up searches
 * (the steady state: the store calibrates its beam on the searches it serves, mostly during the
 * first pass, which is reported beside it); hnswlib-node's is taken at our recall, interpolated
 * between the efs around it. Builds: documents per second through the task pipeline (ours:
 * parsing, storing the documents, the task store) against hnswlib-node's inserts per second.
 * The machine is shared and noisy: read ratios, not absolute figures.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

const here = dirname(fileURLToPath(import.meta.url));
/** ../shared/data/glove-100 beside the project (looked for upwards: a worktree sits deeper). */
function dataDir() {
  for (let dir = join(here, '..'); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dirname(dir), 'shared', 'data', 'glove-100');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('GloVe-100 not found in ../shared/data/glove-100');
}
const DATA = process.env.VECTOR_BENCH_DATA ?? dataDir();
const DIST = process.env.VECTOR_BENCH_DIST ?? join(here, '..', 'dist', 'src', 'engine');
const DIM = 100;
const K = 10;
const WARMUP = 100;
/** Passes over the 1,000 queries after the warm-up: the first (with the beam's calibration) and the last (steady state) are reported. */
const PASSES = 3;
const M = 16;
const EF_CONSTRUCTION = 64;

const PATTERNS = {
  '25k': { n: 50_000, payloads: 2 },
  '5k': { n: 50_000, payloads: 10 },
  '500': { n: 50_000, payloads: 100 },
  delete: { n: 50_000, payloads: 10, then: 'delete' },
  update: { n: 50_000, payloads: 10, then: 'update' },
  '200k': { n: 200_000, payloads: 10 },
  restart: { n: 50_000, payloads: 10, restart: true },
  euclidean: { n: 50_000, payloads: 10, distance: 'euclidean', lengths: true },
  dot: { n: 50_000, payloads: 10, distance: 'dot', lengths: true },
  hamming: { n: 50_000, payloads: 10, distance: 'hamming' },
  // VECTOR_BENCH_MEMORY_SIZES=2000,5000: a quick check of the pattern itself
  memory: { sizes: (process.env.VECTOR_BENCH_MEMORY_SIZES ?? '50000,500000').split(',').map(Number), per: 10_000 },
};
/** How long the serving process of `restart` and `memory` leaves the background warm-up. */
const WARM_WAIT_MS = 2000;

function loadData() {
  const meta = JSON.parse(readFileSync(join(DATA, 'meta.json'), 'utf8'));
  const b = readFileSync(join(DATA, 'base.f32'));
  const q = readFileSync(join(DATA, 'queries.f32'));
  return {
    nBase: meta.nBase,
    base: new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4),
    queries: new Float32Array(q.buffer, q.byteOffset, q.byteLength / 4),
    nQuery: meta.nQuery,
  };
}

/**
 * Row `i` of an extended GloVe-100: the data set's rows, then (beyond them) a mix of two rows,
 * normalised, so that sizes past 200,000 keep the dimension and the spread of the real vectors.
 */
function rowVector(data, i) {
  if (i < data.nBase) return data.base.subarray(i * DIM, (i + 1) * DIM);
  const a = i % data.nBase;
  const c = (i * 7919 + 13) % data.nBase;
  const t = 0.3 + (((i * 2654435761) >>> 0) % 400) / 1000;
  const v = new Float32Array(DIM);
  let n = 0;
  for (let d = 0; d < DIM; d++) {
    v[d] = data.base[a * DIM + d] * (1 - t) + data.base[c * DIM + d] * t;
    n += v[d] * v[d];
  }
  n = Math.sqrt(n);
  for (let d = 0; d < DIM; d++) v[d] /= n;
  return v;
}

/** A full collection after `gc()` (exposed at run time: the engine's worker threads refuse --expose-gc). */
function collect() {
  v8.setFlagsFromString('--expose_gc');
  runInNewContext('gc')();
}

const chosen = (i, percent) => ((i * 2654435761) >>> 0) % 100 < percent;

/**
 * The final documents of a pattern (id -> base row) and its steps: payloads of [id, row] pairs
 * to add, or ids to delete. Vectors of
 * the metric patterns get a length in [0.5, 2) from their id, so euclidean and dot disagree
 * with cosine.
 */
function plan(p, nBase) {
  const rows = new Map();
  for (let i = 0; i < p.n; i++) rows.set(i, i);
  const steps = [];
  const per = Math.ceil(p.n / p.payloads);
  for (let s = 0; s < p.n; s += per) steps.push({ add: Array.from({ length: Math.min(per, p.n - s) }, (_, j) => [s + j, s + j]) });
  if (p.then === 'delete') {
    const gone = [...rows.keys()].filter((i) => chosen(i, 30));
    for (const i of gone) rows.delete(i);
    steps.push({ delete: gone });
  }
  if (p.then === 'update') {
    const changed = [...rows.keys()].filter((i) => chosen(i, 30));
    // replaced by rows the pattern never used, so that each document moves somewhere else
    changed.forEach((id, j) => rows.set(id, (p.n + j) % nBase));
    steps.push({ add: changed.map((id) => [id, rows.get(id)]) });
  }
  return { rows, steps };
}

function vectorOf(data, p, id, row) {
  const v = data.base.subarray(row * DIM, (row + 1) * DIM);
  if (!p.lengths) return v;
  const length = 0.5 + (((id * 2246822519) >>> 0) % 1500) / 1000;
  return v.map((x) => x * length);
}

function distanceFn(metric) {
  switch (metric) {
    case 'euclidean':
      return (a, b) => {
        let s = 0;
        for (let i = 0; i < DIM; i++) s += (a[i] - b[i]) ** 2;
        return s;
      };
    case 'dot':
      return (a, b) => {
        let s = 0;
        for (let i = 0; i < DIM; i++) s -= a[i] * b[i];
        return s;
      };
    case 'hamming':
      return (a, b) => {
        let s = 0;
        for (let i = 0; i < DIM; i++) if (a[i] > 0 !== b[i] > 0) s++;
        return s;
      };
    default:
      return (a, b) => {
        let ab = 0;
        let bb = 0;
        for (let i = 0; i < DIM; i++) {
          ab += a[i] * b[i];
          bb += b[i] * b[i];
        }
        return -ab / Math.sqrt(bb);
      };
  }
}

/**
 * Exact top-10 ids per query. Hamming distances tie a lot: the true set is every id within the
 * 10th distance, and a hit is any returned id in it.
 */
function truth(data, p, rows) {
  // every base row, by cosine: the data set's own exact neighbours (a brute force over 200,000
  // rows took 27 minutes of a loaded machine)
  if (!p.distance && !p.lengths && !p.then && p.n === data.nBase && existsSync(join(DATA, 'gt.i32'))) {
    const g = readFileSync(join(DATA, 'gt.i32'));
    const gt = new Int32Array(g.buffer, g.byteOffset, g.byteLength / 4);
    const per = gt.length / data.nQuery;
    return Array.from({ length: data.nQuery }, (_, qi) => Array.from(gt.subarray(qi * per, qi * per + K)));
  }
  const dist = distanceFn(p.distance ?? 'cosine');
  const ids = [...rows.keys()];
  const vectors = ids.map((id) => vectorOf(data, p, id, rows.get(id)));
  const out = [];
  for (let qi = 0; qi < data.nQuery; qi++) {
    const q = data.queries.subarray(qi * DIM, (qi + 1) * DIM);
    const scored = vectors.map((v, j) => [dist(q, v), ids[j]]);
    scored.sort((a, b) => a[0] - b[0]);
    const kth = scored[K - 1][0];
    out.push(scored.filter(([d], j) => j < K || (p.distance === 'hamming' && d === kth)).map(([, id]) => id));
  }
  return out;
}

// --- children -------------------------------------------------------------------------------

function memory() {
  collect();
  const status = readFileSync('/proc/self/status', 'utf8');
  const mb = (name) => Number(status.match(new RegExp(`${name}:\\s+(\\d+)`))?.[1] ?? 0) / 1024;
  return { rss: mb('VmRSS'), anon: mb('RssAnon') };
}

/** CPU seconds of this process since `from` (a `process.cpuUsage()`): on a shared machine, searches per CPU-second are steadier than per wall-second. */
function cpuSeconds(from) {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1e6;
}

function score(results, truths) {
  let hits = 0;
  for (let i = 0; i < results.length; i++) {
    const t = new Set(truths[i]);
    for (const id of results[i]) if (t.has(id)) hits++;
  }
  return hits / (results.length * K);
}

async function ours(args) {
  const data = loadData();
  const p = PATTERNS[args.pattern];
  const { rows, steps } = plan(p, data.nBase);
  const truths = JSON.parse(readFileSync(args.truth, 'utf8'));
  const { Engine } = await import(join(DIST, 'engine.js'));
  let engine = await Engine.open({ dbPath: args.path, logLevel: 'off' });
  const wait = async (task) => {
    const done = await engine.waitForTask((await task).taskUid, { timeoutMs: 3_600_000 });
    if (done.status !== 'succeeded') throw new Error(JSON.stringify(done.error));
  };
  await wait(engine.createIndex('glove', { primaryKey: 'id' }));
  const embedder = { source: 'userProvided', dimensions: DIM, ...(p.distance ? { distance: p.distance } : {}) };
  await wait(engine.updateSettings('glove', { embedders: { default: embedder } }));
  const doc = ([id, row]) => ({ id, _vectors: { default: Array.from(vectorOf(data, p, id, row)) } });
  // every step is enqueued back to back, as a client sending them would; the build is the time
  // until the first p.n documents are searchable
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const tasks = steps.map((step) => (step.add ? engine.addDocuments('glove', step.add.map(doc), { method: 'replace' }) : engine.deleteDocuments('glove', step.delete)));
  let buildSeconds = 0;
  let buildCpu = 0;
  let added = 0;
  for (let i = 0; i < tasks.length; i++) {
    await wait(tasks[i]);
    added += steps[i].add?.length ?? 0;
    if (added >= p.n && buildSeconds === 0) {
      buildSeconds = (performance.now() - t0) / 1000;
      buildCpu = cpuSeconds(c0);
    }
  }
  const totalSeconds = (performance.now() - t0) / 1000;
  const search = async (qi) => {
    const res = await engine.search('glove', {
      vector: Array.from(data.queries.subarray(qi * DIM, (qi + 1) * DIM)),
      hybrid: { embedder: 'default', semanticRatio: 1 },
      limit: K,
    });
    return res.hits.map((h) => h.id);
  };
  // CPU of the whole process: this thread, the write thread and its merge helper
  const out = { docsPerSec: p.n / buildSeconds, docsPerCpuSec: p.n / buildCpu, totalSeconds };
  if (p.restart) {
    await engine.close();
    return out;
  }
  for (let i = 0; i < WARMUP; i++) await search(i);
  // PASSES passes over the queries: the first holds most of the beam's calibration (probes
  // answered by the walk and by a scan, every other search until the tuner settles), which a
  // serving process pays once per start; the last is the steady state, which the peer's figures
  // (a fixed beam after 100 warm-up searches) are compared with. Both are reported.
  const passes = [];
  for (let pass = 0; pass < PASSES; pass++) {
    const results = [];
    const t = performance.now();
    const c = process.cpuUsage();
    for (let qi = 0; qi < data.nQuery; qi++) results.push(await search(qi));
    passes.push({ qps: data.nQuery / ((performance.now() - t) / 1000), cpuQps: data.nQuery / cpuSeconds(c), recall: score(results, truths) });
  }
  Object.assign(out, passes[passes.length - 1]);
  out.first = passes[0];
  out.memory = memory();
  await engine.close();
  return out;
}

/**
 * The first searches of a fresh process over a built index: the first at once after
 * `Engine.open` (`waitMs` 0) or once the background warm-up is done, then the median of the next
 * 49 (the tuner probes every other one of them, as it does in any fresh process).
 */
async function restart(args) {
  const data = loadData();
  const { Engine } = await import(join(DIST, 'engine.js'));
  const t0 = performance.now();
  const engine = await Engine.open({ dbPath: args.path, logLevel: 'off' });
  const openMs = performance.now() - t0;
  if (args.waitMs) await new Promise((resolve) => setTimeout(resolve, args.waitMs));
  const search = (qi) =>
    engine.search('glove', { vector: Array.from(data.queries.subarray(qi * DIM, (qi + 1) * DIM)), hybrid: { embedder: 'default', semanticRatio: 1 }, limit: K });
  // CPU time of the whole process as well: wall times on a shared machine are mostly waiting
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const t = performance.now();
  const c = cpuMs();
  await search(0);
  const firstMs = performance.now() - t;
  const firstCpuMs = cpuMs() - c;
  const warm = [];
  const warmCpu = [];
  for (let i = 1; i < 50; i++) {
    const s = performance.now();
    const sc = cpuMs();
    await search(i);
    warm.push(performance.now() - s);
    warmCpu.push(cpuMs() - sc);
  }
  warm.sort((a, b) => a - b);
  warmCpu.sort((a, b) => a - b);
  await engine.close();
  return { openMs, firstMs, warmMs: warm[warm.length >> 1], firstCpuMs, warmCpuMs: warmCpu[warmCpu.length >> 1] };
}

/** Build `n` rows of the extended set through the Engine API (payloads of `per`), at `path`. */
async function buildRows(args) {
  const data = loadData();
  const { Engine } = await import(join(DIST, 'engine.js'));
  const engine = await Engine.open({ dbPath: args.path, logLevel: 'off' });
  const wait = async (task) => {
    const done = await engine.waitForTask((await task).taskUid, { timeoutMs: 3_600_000 });
    if (done.status !== 'succeeded') throw new Error(JSON.stringify(done.error));
  };
  await wait(engine.createIndex('glove', { primaryKey: 'id' }));
  await wait(engine.updateSettings('glove', { embedders: { default: { source: 'userProvided', dimensions: DIM } } }));
  const t0 = performance.now();
  let last;
  for (let s = 0; s < args.n; s += args.per) {
    const docs = [];
    for (let i = s; i < Math.min(args.n, s + args.per); i++) docs.push({ id: i, _vectors: { default: Array.from(rowVector(data, i)) } });
    last = engine.addDocuments('glove', docs, { method: 'replace' });
    // one payload in flight at a time: the builder's own memory stays small
    await wait(last);
  }
  const seconds = (performance.now() - t0) / 1000;
  await engine.close();
  return { docsPerSec: args.n / seconds };
}

/** A fresh process serving the index at `path`: warm-up, 100 + 1,000 searches, then RssAnon. */
async function serveRows(args) {
  const q = readFileSync(join(DATA, 'queries.f32'));
  const queries = new Float32Array(q.buffer, q.byteOffset, q.byteLength / 4);
  const { Engine } = await import(join(DIST, 'engine.js'));
  // warm: false leaves out the engine's warm-up, whose keyword part loads the index's word
  // dictionary (here the 500,000 ids as words): what a process answering vector searches only holds
  const engine = await Engine.open({ dbPath: args.path, logLevel: 'off', ...(args.warm === false ? { warm: false } : {}) });
  await new Promise((resolve) => setTimeout(resolve, WARM_WAIT_MS));
  const search = (qi) => engine.search('glove', { vector: Array.from(queries.subarray(qi * DIM, (qi + 1) * DIM)), hybrid: { embedder: 'default', semanticRatio: 1 }, limit: K });
  for (let i = 0; i < WARMUP; i++) await search(i);
  const t = performance.now();
  const c = process.cpuUsage();
  for (let qi = 0; qi < 1000; qi++) await search(qi);
  const qps = 1000 / ((performance.now() - t) / 1000);
  const cpu = process.cpuUsage(c);
  const heap = () => {
    const m = process.memoryUsage();
    return { heapMb: m.heapTotal / 2 ** 20, arrayBuffersMb: m.arrayBuffers / 2 ** 20 };
  };
  // RssAnon at once (what the process holds while serving), then after a full collection
  const status = readFileSync('/proc/self/status', 'utf8');
  const anonNow = Number(status.match(/RssAnon:\s+(\d+)/)?.[1] ?? 0) / 1024;
  const mem = memory();
  await engine.close();
  return { qps, cpuMsPerSearch: (cpu.user + cpu.system) / 1e6, anonNow, ...mem, ...heap() };
}

/** hnswlib-node: build `n` rows and save the index (role `peerBuild`), or serve it from the file (`peerServe`). */
async function peerRows(args, serve) {
  const { default: hnswlib } = await import('hnswlib-node');
  const index = new hnswlib.HierarchicalNSW('cosine', DIM);
  if (!serve) {
    const data = loadData();
    index.initIndex(args.n, M, EF_CONSTRUCTION, 100);
    const t0 = performance.now();
    for (let i = 0; i < args.n; i++) index.addPoint(Array.from(rowVector(data, i)), i);
    const insertsPerSec = args.n / ((performance.now() - t0) / 1000);
    index.writeIndexSync(args.file);
    return { insertsPerSec };
  }
  const q = readFileSync(join(DATA, 'queries.f32'));
  const queries = new Float32Array(q.buffer, q.byteOffset, q.byteLength / 4);
  index.readIndexSync(args.file);
  index.setEf(200);
  for (let i = 0; i < WARMUP; i++) index.searchKnn(Array.from(queries.subarray(i * DIM, (i + 1) * DIM)), K);
  const t = performance.now();
  for (let qi = 0; qi < 1000; qi++) index.searchKnn(Array.from(queries.subarray(qi * DIM, (qi + 1) * DIM)), K);
  const qps = 1000 / ((performance.now() - t) / 1000);
  return { qps, ...memory() };
}

async function peer(args) {
  const data = loadData();
  const p = PATTERNS[args.pattern];
  const { rows } = plan(p, data.nBase);
  const truths = JSON.parse(readFileSync(args.truth, 'utf8'));
  const { default: hnswlib } = await import('hnswlib-node');
  const space = p.distance === 'euclidean' || p.distance === 'hamming' ? 'l2' : p.distance === 'dot' ? 'ip' : 'cosine';
  const point = (v) => (p.distance === 'hamming' ? Array.from(v, (x) => (x > 0 ? 1 : 0)) : Array.from(v));
  const index = new hnswlib.HierarchicalNSW(space, DIM);
  index.initIndex(rows.size, M, EF_CONSTRUCTION, 100);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const [id, row] of rows) index.addPoint(point(vectorOf(data, p, id, row)), id);
  const insertsPerSec = rows.size / ((performance.now() - t0) / 1000);
  const insertsPerCpuSec = rows.size / cpuSeconds(c0);
  const efs = [32, 64, 100, 150, 200, 300, 400, 600, 800];
  const curve = [];
  for (const ef of efs) {
    index.setEf(ef);
    for (let i = 0; i < WARMUP; i++) index.searchKnn(point(data.queries.subarray(i * DIM, (i + 1) * DIM)), K);
    const results = [];
    const t = performance.now();
    const c = process.cpuUsage();
    for (let qi = 0; qi < data.nQuery; qi++) results.push(index.searchKnn(point(data.queries.subarray(qi * DIM, (qi + 1) * DIM)), K).neighbors);
    curve.push({ ef, qps: data.nQuery / ((performance.now() - t) / 1000), cpuQps: data.nQuery / cpuSeconds(c), recall: score(results, truths) });
  }
  return { insertsPerSec, insertsPerCpuSec, curve };
}

function spawn(role, args) {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--child', role, JSON.stringify(args)], {
      execArgv: args.execArgv ?? [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, ...(args.env ?? {}) },
    });
    child.on('message', resolve);
    child.on('exit', (code) => code !== 0 && reject(new Error(`${role} exited with ${code}`)));
  });
}

/** The peer's QPS at `recall`, interpolated on its curve; its best point when it never gets there. */
function peerAt(curve, recall) {
  const sorted = [...curve].sort((a, b) => a.recall - b.recall);
  for (let i = 1; i < sorted.length; i++) {
    const lo = sorted[i - 1];
    const hi = sorted[i];
    if (lo.recall <= recall && hi.recall >= recall) {
      const f = (recall - lo.recall) / Math.max(1e-9, hi.recall - lo.recall);
      return { qps: lo.qps + f * (hi.qps - lo.qps), cpuQps: lo.cpuQps + f * (hi.cpuQps - lo.cpuQps), reached: true };
    }
  }
  const best = sorted[sorted.length - 1];
  return best.recall >= recall ? { qps: sorted[0].qps, cpuQps: sorted[0].cpuQps, reached: true } : { qps: best.qps, cpuQps: best.cpuQps, recall: best.recall, reached: false };
}

/** Fresh serving processes per size and configuration (`VECTOR_BENCH_MEMORY_RUNS`, default 5). */
const MEMORY_RUNS = Number(process.env.VECTOR_BENCH_MEMORY_RUNS ?? 5);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/**
 * `memory`: each size built once (ours through the Engine API, hnswlib-node's saved index), then
 * MEMORY_RUNS rounds, each serving every size from a fresh process per configuration, sizes and
 * configurations alternating so that both sizes see the same load. One process's RssAnon varies by
 * 10-15 MB from one process to the next (V8's young generation doubling from 16 to 32 MB or not
 * before the measurement, the allocator's free lists), more than what grows with N: the figure is
 * the median of the fresh processes per size, with their spread, and the ratio of the medians.
 */
async function memoryRows(name, p, dir) {
  const { MALLOC_TUNABLES, SERVING_HEAP_OPTIONS } = await import(join(DIST, '..', 'cli', 'process-settings.js'));
  const configs = [
    { key: 'defaults', short: 'defaults', label: 'defaults', args: {} },
    { key: 'vectorOnly', short: 'without the warm-up', label: "without the engine's warm-up (vector searches only)", args: { warm: false } },
    // the allocator settings `search serve` runs itself with inside a memory limit
    // (src/cli/process-settings.ts): glibc's per-thread arenas keep freed native memory
    { key: 'tunables', short: 'with the allocator settings', label: "defaults with search serve's allocator settings (as inside a memory limit)", args: { env: { GLIBC_TUNABLES: MALLOC_TUNABLES } } },
    // the node options `search serve` runs itself with at 4 GiB and more: young generations at full size from the start
    { key: 'serveHeap', short: "with serve's heap options", label: `defaults with search serve's heap options (${SERVING_HEAP_OPTIONS.join(' ')}, as with 4 GiB or more)`, args: { execArgv: SERVING_HEAP_OPTIONS } },
  ];
  const sizes = p.sizes.map((n) => ({ n, path: join(dir, `${name}-${n}`), file: join(dir, `${name}-${n}.hnsw`), runs: Object.fromEntries([...configs.map((c) => [c.key, []]), ['peer', []]]) }));
  const loads = [load()];
  for (const size of sizes) {
    size.build = await spawn('build', { n: size.n, per: p.per, path: size.path });
    size.peerBuild = await spawn('peerBuild', { n: size.n, file: size.file });
  }
  for (let r = 0; r < MEMORY_RUNS; r++) {
    for (const size of sizes) {
      for (const c of configs) size.runs[c.key].push(await spawn('serve', { path: size.path, ...c.args }));
      size.runs.peer.push(await spawn('peerServe', { n: size.n, file: size.file }));
    }
    loads.push(load());
  }
  for (const size of sizes) {
    if (process.env.VECTOR_BENCH_KEEP) console.log(`kept ${size.path}`);
    else rmSync(size.path, { recursive: true, force: true });
    rmSync(size.file, { force: true });
  }
  const mb = (x) => x.toFixed(1);
  const figure = (runs) => {
    const anon = runs.map((x) => x.anon);
    return { median: median(anon), min: Math.min(...anon), max: Math.max(...anon), singles: anon };
  };
  const describe = (runs) => {
    const f = figure(runs);
    const spread = `median ${mb(f.median)} MB (spread ${mb(f.min)}-${mb(f.max)}; runs ${f.singles.map(mb).join(' / ')}`;
    if (runs[0].heapMb === undefined) return `${spread})`;
    const heap = runs.map((x) => x.heapMb.toFixed(0)).join('/');
    const buffers = runs.map((x) => x.arrayBuffersMb.toFixed(0)).join('/');
    return `${spread}; V8 heap ${heap} MB, array buffers ${buffers} MB)`;
  };
  const rows = [];
  const first = sizes[0];
  for (const size of sizes) {
    const o = size.runs.defaults;
    const h = size.runs.peer;
    const notes = [
      `RssAnon after a full collection, ${MEMORY_RUNS} fresh processes each: defaults ${describe(o)}`,
      ...configs.slice(1).map((c) => `${c.label} ${describe(size.runs[c.key])}`),
      `hnswlib-node ${describe(h)}`,
    ];
    if (size !== first) {
      const ratio = (key) => {
        const a = figure(size.runs[key]);
        const b = figure(first.runs[key]);
        const pairs = size.runs[key].map((x, i) => (x.anon / first.runs[key][i].anon).toFixed(2)).join(' / ');
        return `${(a.median / b.median).toFixed(2)}x (round by round ${pairs})`;
      };
      notes.push(
        `ratio of the medians to the ${first.n.toLocaleString('en')} figure: defaults **${ratio('defaults')}**; ` +
          configs
            .slice(1)
            .map((c) => `${c.short} ${ratio(c.key)}`)
            .join('; ') +
          `; hnswlib-node ${ratio('peer')}`,
      );
    }
    notes.push(`load ${loads.join(' -> ')}`);
    const qps = median(o.map((x) => x.qps));
    const cpuMs = median(o.map((x) => x.cpuMsPerSearch));
    rows.push([
      `memory: serving ${size.n.toLocaleString('en')} vectors (fresh processes, after 1,100 searches)`,
      '-',
      `${qps.toFixed(0)}, ${cpuMs.toFixed(2)} ms CPU per search (medians; hnswlib at ef 200: ${median(h.map((x) => x.qps)).toFixed(0)})`,
      `${size.build.docsPerSec.toFixed(0)} (${(size.build.docsPerSec / size.peerBuild.insertsPerSec).toFixed(2)}x)`,
      notes.join('; '),
    ]);
  }
  return rows;
}

async function main() {
  const names = (process.env.VECTOR_BENCH_PATTERNS ?? Object.keys(PATTERNS).join(',')).split(',');
  const data = loadData();
  const dir = mkdtempSync(join(tmpdir(), 'vector-bench-'));
  console.log(`vector bench: GloVe-100 through the Engine API, ${cpus().length} cores, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  const table = [['pattern', 'recall@10', 'QPS (ratio to hnswlib at our recall; per CPU-second)', 'build docs/s (ratio to hnswlib inserts/s)', 'notes']];
  try {
    for (const name of names) {
      const p = PATTERNS[name];
      if (!p) throw new Error(`unknown pattern ${name} (known: ${Object.keys(PATTERNS).join(', ')})`);
      if (p.sizes) {
        for (const row of await memoryRows(name, p, dir)) {
          console.log(row.join(' | '));
          table.push(row);
        }
        continue;
      }
      const { rows } = plan(p, data.nBase);
      const truthPath = join(dir, `${name}.truth.json`);
      writeFileSync(truthPath, JSON.stringify(truth(data, p, rows)));
      if (p.restart) {
        const path = join(dir, name);
        await spawn('ours', { pattern: name, truth: truthPath, path });
        for (const prefetch of [false, true]) {
          for (const waitMs of [0, WARM_WAIT_MS]) {
            const o = await spawn('restart', { path, waitMs, env: prefetch ? { VECTORSTORE_READER_PREFETCH_MEMORY: 'true' } : {} });
            const when = waitMs ? `${waitMs} ms after open (background warm-up done)` : 'at once after open';
            const row = [`first search after restart, ${when}${prefetch ? ', prefetch on' : ''}`, '-', '-', '-', `${o.firstMs.toFixed(1)} ms, then median ${o.warmMs.toFixed(2)} ms (${(o.firstMs / o.warmMs).toFixed(1)}x); CPU ${o.firstCpuMs.toFixed(1)} ms, then median ${o.warmCpuMs.toFixed(2)} ms (${(o.firstCpuMs / o.warmCpuMs).toFixed(1)}x); open ${o.openMs.toFixed(0)} ms`];
            console.log(row.join(' | '));
            table.push(row);
          }
        }
        continue;
      }
      const o = await spawn('ours', { pattern: name, truth: truthPath, path: join(dir, name) });
      const h = await spawn('peer', { pattern: name, truth: truthPath });
      const at = peerAt(h.curve, o.recall);
      const peerNote = at.reached ? '' : `hnswlib's best: recall ${at.recall.toFixed(4)} at ef 800`;
      const row = [
        `${name}: ${p.n.toLocaleString('en')} in ${p.payloads} payloads${p.then ? `, then ${p.then} 30%` : ''}${p.distance ? `, ${p.distance}` : ''}`,
        o.recall.toFixed(4),
        `${o.qps.toFixed(0)} (${(o.qps / at.qps).toFixed(2)}x; per CPU-second ${o.cpuQps.toFixed(0)} vs ${at.cpuQps.toFixed(0)}, ${(o.cpuQps / at.cpuQps).toFixed(2)}x)`,
        `${o.docsPerSec.toFixed(0)} (${(o.docsPerSec / h.insertsPerSec).toFixed(2)}x; per CPU-second ${(o.docsPerCpuSec / h.insertsPerCpuSec).toFixed(2)}x)`,
        [
          peerNote,
          `first pass (the tuner calibrating): recall ${o.first.recall.toFixed(4)}, ${o.first.qps.toFixed(0)} QPS (${(o.first.qps / at.qps).toFixed(2)}x), per CPU-second ${o.first.cpuQps.toFixed(0)} (${(o.first.cpuQps / at.cpuQps).toFixed(2)}x)`,
          `RssAnon ${o.memory.anon.toFixed(0)} MB`,
        ]
          .filter(Boolean)
          .join('; '),
      ];
      console.log(row.join(' | '));
      table.push(row);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${new Date().toISOString().slice(0, 16)} UTC, ${cpus().length} cores, M=${M}, efConstruction=${EF_CONSTRUCTION} for both\n`);
  for (const row of table) console.log('| ' + row.join(' | ') + ' |');
}

if (process.argv[2] === '--child') {
  const [role, args] = [process.argv[3], JSON.parse(process.argv[4])];
  const roles = { ours, peer, restart, build: buildRows, serve: serveRows, peerBuild: (a) => peerRows(a, false), peerServe: (a) => peerRows(a, true) };
  const result = await roles[role](args);
  process.send(result, () => process.exit(0));
} else {
  await main();
}
