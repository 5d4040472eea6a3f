#!/usr/bin/env node
/**
 * Vector store benchmark on GloVe-100 (../shared/data/glove-100): our disk-backed HNSW beside
 * hnswlib-node, in the same run, each engine in its own child process so that RSS is per engine.
 *
 *   npm run build && node bench/vector.bench.mjs      (VECTOR_BENCH_N=50000 for a quicker run)
 *
 * Both engines build with the same M and efConstruction (our self-tuned values). Recall@10 is
 * against the data set's exact top-100; QPS is single-threaded over the 1,000 queries; the
 * serving RSS is measured after opening the built index from disk and answering every query.
 * Every figure is reported as a ratio against hnswlib-node.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const DATA = join(here, '..', '..', 'shared', 'data', 'glove-100');
const DIST = process.env.VECTOR_BENCH_DIST ?? join(here, '..', 'dist', 'src', 'engine');
const DIM = 100;
const K = 10;

/** The data set; `withBase` false leaves the 80 MB base out (serving children must not hold it). */
function loadData(n, withBase = true) {
  const meta = JSON.parse(readFileSync(join(DATA, 'meta.json'), 'utf8'));
  const b = withBase ? readFileSync(join(DATA, 'base.f32')) : Buffer.alloc(0);
  const q = readFileSync(join(DATA, 'queries.f32'));
  const g = readFileSync(join(DATA, 'gt.i32'));
  const base = new Float32Array(b.buffer, b.byteOffset, withBase ? n * DIM : 0);
  const queries = new Float32Array(q.buffer, q.byteOffset, q.byteLength / 4);
  const gt = new Int32Array(g.buffer, g.byteOffset, g.byteLength / 4);
  return { meta, base, queries, gt, nQuery: meta.nQuery, gtK: meta.k };
}

/** Exact top-10 per query: from the data set when the whole base is used, else brute force. */
function truth(data, n) {
  const out = [];
  for (let i = 0; i < data.nQuery; i++) {
    if (n === data.meta.nBase) {
      out.push(new Set(data.gt.subarray(i * data.gtK, i * data.gtK + K)));
      continue;
    }
    out.push(new Set(exactTopK(data, i, Array.from({ length: n }, (_, j) => j))));
  }
  return out;
}

/** The K rows of `rows` with the highest dot product with query `i`, best first (brute force). */
function exactTopK(data, i, rows) {
  const q = data.queries.subarray(i * DIM, (i + 1) * DIM);
  const best = [];
  for (const j of rows) {
    let s = 0;
    for (let d = 0; d < DIM; d++) s += q[d] * data.base[j * DIM + d];
    if (best.length < K || s > best[best.length - 1][0]) {
      best.push([s, j]);
      best.sort((a, b) => b[0] - a[0]);
      if (best.length > K) best.pop();
    }
  }
  return best.map((x) => x[1]);
}

const SELECTIVITIES = [0.5, 0.1, 0.01, 0.001];
const FILTER_QUERIES = 100;

/** A deterministic pseudo-random subset of the base, unrelated to vector position. */
function allowedIds(n, selectivity) {
  const out = [];
  for (let i = 0; i < n; i++) if (((i * 2654435761) >>> 0) % 100_000 < selectivity * 100_000) out.push(i);
  return out;
}

/** Exact top-10 of the first queries within each filter (brute force over the allowed rows). */
function filteredTruth(data, n) {
  return SELECTIVITIES.map((selectivity) => {
    const allowed = allowedIds(n, selectivity);
    const truths = [];
    for (let i = 0; i < FILTER_QUERIES; i++) truths.push(exactTopK(data, i, allowed));
    return { selectivity, truths };
  });
}

function runFiltered(data, filtered, n, search) {
  return filtered.map(({ selectivity, truths }) => {
    const allowed = allowedIds(n, selectivity);
    const filter = search.prepare(allowed);
    let hits = 0;
    let wanted = 0;
    const t = performance.now();
    for (let i = 0; i < FILTER_QUERIES; i++) {
      const ids = search.run(data.queries.subarray(i * DIM, (i + 1) * DIM), filter);
      const truth = new Set(truths[i]);
      wanted += truth.size;
      for (const id of ids) if (truth.has(id)) hits++;
    }
    const seconds = (performance.now() - t) / 1000;
    return { selectivity, recall: hits / wanted, qps: FILTER_QUERIES / seconds };
  });
}

function saveTruth(path, sets) {
  const flat = new Int32Array(sets.length * K).fill(-1);
  sets.forEach((s, i) => [...s].forEach((id, j) => (flat[i * K + j] = id)));
  writeFileSync(path, flat);
}

function loadTruth(path) {
  const b = readFileSync(path);
  const flat = new Int32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  const out = [];
  for (let i = 0; i < flat.length / K; i++) out.push(new Set(flat.subarray(i * K, (i + 1) * K)));
  return out;
}

function memory() {
  global.gc?.();
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name) => Number(status.match(new RegExp(`${name}:\\s+(\\d+)`))?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

function runQueries(data, gts, search) {
  const nq = data.nQuery;
  for (let i = 0; i < 100; i++) search(data.queries.subarray(i * DIM, (i + 1) * DIM)); // warm-up
  let hits = 0;
  const t = performance.now();
  for (let i = 0; i < nq; i++) {
    const ids = search(data.queries.subarray(i * DIM, (i + 1) * DIM));
    for (const id of ids) if (gts[i].has(id)) hits++;
  }
  const seconds = (performance.now() - t) / 1000;
  return { recall: hits / (nq * K), qps: nq / seconds };
}

// --- children -------------------------------------------------------------------------------

async function child(role, args) {
  const n = Number(args.n);
  const data = loadData(n, role.endsWith('build'));
  const vec = (i) => data.base.subarray(i * DIM, (i + 1) * DIM);
  const { default: hnswlib } = await import('hnswlib-node');
  if (role === 'hnsw-build') {
    const index = new hnswlib.HierarchicalNSW('cosine', DIM);
    index.initIndex(n, args.M, args.efConstruction, 100);
    const t = performance.now();
    for (let i = 0; i < n; i++) index.addPoint(Array.from(vec(i)), i);
    const seconds = (performance.now() - t) / 1000;
    index.writeIndexSync(args.path);
    return { insertsPerSec: n / seconds, seconds };
  }
  if (role === 'ours-build') {
    const { IndexStore } = await import(join(DIST, 'index', 'store.js'));
    const { VectorStore } = await import(join(DIST, 'vector', 'store.js'));
    const store = new IndexStore(args.path);
    const vs = new VectorStore(store, 'default', { dimensions: DIM, distance: 'cosine' });
    const batch = 10_000;
    const t = performance.now();
    for (let start = 0; start < n; start += batch) {
      store.write(() => {
        for (let i = start; i < Math.min(n, start + batch); i++) vs.upsert(i, [vec(i)]);
        if (start + batch >= n) vs.flush();
      });
    }
    const seconds = (performance.now() - t) / 1000;
    await store.close();
    return { insertsPerSec: n / seconds, seconds };
  }
  const gts = loadTruth(args.truth);
  if (role === 'hnsw-serve') {
    const floor = memory();
    const index = new hnswlib.HierarchicalNSW('cosine', DIM);
    index.readIndexSync(args.path);
    const rows = [];
    for (const ef of args.efs) {
      index.setEf(ef);
      rows.push({ ef, ...runQueries(data, gts, (q) => index.searchKnn(Array.from(q), K).neighbors) });
    }
    const mem = memory();
    index.setEf(128);
    const filtered = runFiltered(data, JSON.parse(readFileSync(args.filtered, 'utf8')), n, {
      prepare: (ids) => new Set(ids),
      run: (q, set) => index.searchKnn(Array.from(q), K, (label) => set.has(label)).neighbors,
    });
    return { rows, memory: mem, floor, filtered };
  }
  if (role === 'ours-serve') {
    const { IndexStore } = await import(join(DIST, 'index', 'store.js'));
    const { VectorStore } = await import(join(DIST, 'vector', 'store.js'));
    const { efSearch } = await import(join(DIST, 'vector', 'params.js'));
    const { RoaringBitmap32 } = await import(join(DIST, 'index', 'store.js'));
    const floor = memory();
    const store = new IndexStore(args.path);
    const vs = new VectorStore(store, 'default', { dimensions: DIM, distance: 'cosine' });
    const rows = [];
    const rerank = process.env.VECTOR_BENCH_RERANK ? Number(process.env.VECTOR_BENCH_RERANK) : undefined;
    for (const ef of args.efs) rows.push({ ef, ...runQueries(data, gts, (q) => vs.search(q, K, undefined, { ef, rerank }).map((h) => h.docid)) });
    const auto = { ef: efSearch(K, n), ...runQueries(data, gts, (q) => vs.search(q, K).map((h) => h.docid)) };
    const mem = memory();
    const filtered = runFiltered(data, JSON.parse(readFileSync(args.filtered, 'utf8')), n, {
      prepare: (ids) => new RoaringBitmap32(ids),
      run: (q, bitmap) => vs.search(q, K, bitmap).map((h) => h.docid),
    });
    await store.close();
    return { rows, auto, memory: mem, floor, graphBytes: vs.memoryBytes, filtered };
  }
  throw new Error(`unknown role ${role}`);
}

function spawn(role, args) {
  return new Promise((resolve, reject) => {
    const p = fork(fileURLToPath(import.meta.url), ['--child', role, JSON.stringify(args)], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    p.on('message', resolve);
    p.on('exit', (code) => code !== 0 && reject(new Error(`${role} exited with ${code}`)));
  });
}

/** QPS of hnswlib at recall 0.95, interpolated between the two efs that bracket it. */
function qpsAtRecall(rows, target) {
  const sorted = [...rows].sort((a, b) => a.recall - b.recall);
  for (let i = 1; i < sorted.length; i++) {
    const lo = sorted[i - 1];
    const hi = sorted[i];
    if (lo.recall <= target && hi.recall >= target) {
      const f = (target - lo.recall) / Math.max(1e-9, hi.recall - lo.recall);
      return lo.qps + f * (hi.qps - lo.qps);
    }
  }
  return sorted.find((r) => r.recall >= target)?.qps ?? NaN;
}

async function main() {
  const n = Number(process.env.VECTOR_BENCH_N ?? 200_000);
  const { BUILD } = await import(join(DIST, 'vector', 'params.js'));
  // VECTOR_BENCH_DIR keeps the built indexes (and reuses them when present) between runs.
  const keep = process.env.VECTOR_BENCH_DIR;
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'vector-bench-'));
  mkdirSync(dir, { recursive: true });
  const builtPath = join(dir, 'build.json');
  const truthPath = join(dir, 'truth.i32');
  const full = loadData(n);
  saveTruth(truthPath, truth(full, n));
  const filteredPath = join(dir, 'filtered.json');
  writeFileSync(filteredPath, JSON.stringify(filteredTruth(full, n)));
  const common = { n, M: BUILD.M, efConstruction: BUILD.efConstruction, truth: truthPath, filtered: filteredPath };
  try {
    console.log(`vector bench: GloVe-100, ${n} base vectors, ${cpus().length} cores, M=${BUILD.M}, efConstruction=${BUILD.efConstruction}`);
    let hb;
    let ob;
    if (keep && existsSync(builtPath)) {
      ({ hb, ob } = JSON.parse(readFileSync(builtPath, 'utf8')));
      console.log('  (reusing the indexes built earlier in', dir, ')');
    } else {
      hb = await spawn('hnsw-build', { ...common, path: join(dir, 'hnsw.idx') });
      ob = await spawn('ours-build', { ...common, path: join(dir, 'ours') });
      writeFileSync(builtPath, JSON.stringify({ hb, ob }));
    }
    console.log(`  hnswlib-node build: ${hb.insertsPerSec.toFixed(0)} inserts/s`);
    console.log(`  our store build:    ${ob.insertsPerSec.toFixed(0)} inserts/s`);
    const efs = (process.env.VECTOR_BENCH_EFS ?? '32,64,100,128,160,200,300').split(',').map(Number);
    const hs = await spawn('hnsw-serve', { ...common, path: join(dir, 'hnsw.idx'), efs });
    const os = await spawn('ours-serve', { ...common, path: join(dir, 'ours'), efs });
    const fmt = (r) => `recall ${r.recall.toFixed(4)} qps ${r.qps.toFixed(0)}`;
    for (let i = 0; i < efs.length; i++) console.log(`  ef ${String(efs[i]).padStart(3)}  hnswlib ${fmt(hs.rows[i])}   ours ${fmt(os.rows[i])}`);
    const peerQps = qpsAtRecall(hs.rows, 0.95);
    const peerAtSameRecall = qpsAtRecall(hs.rows, Math.min(os.auto.recall, hs.rows.reduce((m, r) => Math.max(m, r.recall), 0)));
    const mb = (x) => `${x.toFixed(0)} MB`;
    const table = [
      ['figure', 'ours', 'hnswlib-node', 'ratio', 'target'],
      ['recall@10 (auto ef)', os.auto.recall.toFixed(4), '-', '-', '>= 0.95'],
      ['QPS at recall 0.95 (ours: auto ef ' + os.auto.ef + ')', os.auto.qps.toFixed(0), peerQps.toFixed(0), (os.auto.qps / peerQps).toFixed(2), '>= 0.5'],
      ['QPS, peer at our recall', os.auto.qps.toFixed(0), peerAtSameRecall.toFixed(0), (os.auto.qps / peerAtSameRecall).toFixed(2), ''],
      ['build inserts/s', ob.insertsPerSec.toFixed(0), hb.insertsPerSec.toFixed(0), (ob.insertsPerSec / hb.insertsPerSec).toFixed(2), '>= 0.5'],
      ['serving RSS', mb(os.memory.rss), mb(hs.memory.rss), (os.memory.rss / hs.memory.rss).toFixed(2), '<= 0.5'],
      ['  of which anonymous', mb(os.memory.anon), mb(hs.memory.anon), (os.memory.anon / hs.memory.anon).toFixed(2), ''],
      ['  of which file-backed (mmap)', mb(os.memory.file), mb(hs.memory.file), '-', ''],
      // The process before it opens the index (node, the modules, the query set): the part of the
      // RSS that no index layout can remove, and what the 0.5x target leaves for the index itself.
      ['  process floor before opening the index', mb(os.floor.rss), mb(hs.floor.rss), (os.floor.rss / hs.memory.rss).toFixed(2) + ' of the peer\'s RSS', ''],
      ['  above the floor (the index)', mb(os.memory.rss - os.floor.rss), mb(hs.memory.rss - hs.floor.rss), ((os.memory.rss - os.floor.rss) / (hs.memory.rss - hs.floor.rss)).toFixed(2), ''],
    ];
    for (let i = 0; i < SELECTIVITIES.length; i++) {
      const o = os.filtered[i];
      const h = hs.filtered[i];
      table.push([
        `filtered ${o.selectivity * 100}%: recall@10 / QPS (peer: ef 128 + filter callback)`,
        `${o.recall.toFixed(4)} / ${o.qps.toFixed(0)}`,
        `${h.recall.toFixed(4)} / ${h.qps.toFixed(0)}`,
        `QPS ${(o.qps / h.qps).toFixed(2)}`,
        'recall >= 0.95',
      ]);
    }
    console.log(`\n${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores\n`);
    for (const row of table) console.log('| ' + row.join(' | ') + ' |');
    return { n, hb, ob, hs, os, table };
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  const result = await child(process.argv[3], JSON.parse(process.argv[4]));
  process.send(result, () => process.exit(0));
} else {
  await main();
}
