#!/usr/bin/env node
/**
 * The keyword word dictionary (the typo automaton's sorted words, `KeywordReader.dictionary`):
 * this build against another build (`DICT_BENCH_BASE`, default the main checkout's dist beside
 * this worktree's), each in its own child process, alternating, on the movies
 * (../shared/data/movies.json, keyword extension only, as bench/keyword.bench.js writes them).
 * Per build, in process CPU time (`process.cpuUsage`, steadier than wall time on a shared machine):
 * - load: the dictionary read from LMDB into the reader (at the first search after open or after
 *   a commit), median of 9 fresh readers, and the bytes it holds (V8 heap plus array buffers
 *   after a full collection, with it minus without it);
 * - as typed: the as-typed query set of the keyword bench (every keystroke of 40 queries, 441
 *   searches), CPU per search, best of 3 passes, after one warm-up pass;
 * - the 300 queries with typos, the same way.
 * With `DICT_BENCH_DB=<engine dbPath> DICT_BENCH_INDEX=<uid>` the load figures are taken on that
 * index as well (for example the vector bench's 500,000 ids kept with VECTOR_BENCH_KEEP).
 *
 *   npm run build && node bench/dictionary.bench.mjs
 *   DICT_BENCH_BASE=/path/to/other/dist DICT_BENCH_ROUNDS=3 node bench/dictionary.bench.mjs
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { makeQueries, typedQueries } from './typed-queries.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const FIELDS = ['title', 'cast', 'genres', 'extract'];

/** ../shared/data/movies.json beside the project (looked for upwards: a worktree sits deeper). */
function moviesPath() {
  for (let dir = join(here, '..'); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dirname(dir), 'shared', 'data', 'movies.json');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('movies.json not found in ../shared/data');
}

function collect() {
  v8.setFlagsFromString('--expose_gc');
  runInNewContext('gc')();
  runInNewContext('gc')();
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function held() {
  collect();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Median CPU of loading the dictionary in a fresh reader, and the bytes one loaded dictionary holds. */
function loadFigures(KeywordReader, store) {
  const times = [];
  for (let i = 0; i < 9; i++) {
    const reader = new KeywordReader(store);
    const c = cpuMs();
    reader.dictionary();
    times.push(cpuMs() - c);
  }
  const before = held();
  const reader = new KeywordReader(store);
  const dict = reader.dictionary();
  const after = held();
  return { loadCpuMs: median(times), bytes: after - before, words: dict.size };
}

async function child(dist) {
  const { Index } = await import(join(dist, 'src/engine/index/index.js'));
  const { ChangeSet, prepareExtensions } = await import(join(dist, 'src/engine/index/pipeline.js'));
  const { keywordExtension, search } = await import(join(dist, 'src/engine/search/index.js'));
  const { KeywordReader } = await import(join(dist, 'src/engine/search/keyword/reader.js'));
  const { defaultSettings } = await import(join(dist, 'src/engine/settings/types.js'));
  const docs = JSON.parse(readFileSync(moviesPath(), 'utf8'));
  const dir = mkdtempSync(join(tmpdir(), 'bench-dict-'));
  const out = {};
  try {
    const index = new Index('movies', 'movies', dir, [keywordExtension], {});
    index.store.write(() => index.store.setSettings({ ...defaultSettings(), searchableAttributes: FIELDS }));
    const cs = new ChangeSet(index.store);
    cs.addDocuments(docs, 'replace', 'id');
    const prepared = await prepareExtensions([keywordExtension], cs.list(), index.settings, index.store);
    index.store.write(() => cs.commit([keywordExtension], index.settings, prepared));
    Object.assign(out, loadFigures(KeywordReader, index.store));
    const queries = makeQueries(docs);
    const passes = (list) => {
      for (const q of list) search(index, { q, limit: 10 });
      let best = Infinity;
      for (let pass = 0; pass < 3; pass++) {
        const c = cpuMs();
        for (const q of list) search(index, { q, limit: 10 });
        best = Math.min(best, (cpuMs() - c) / list.length);
      }
      return best;
    };
    out.typedCpuMs = passes(typedQueries(queries));
    out.queryCpuMs = passes(queries);
    await index.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.env.DICT_BENCH_DB) {
    const { Engine } = await import(join(dist, 'src/engine/engine.js'));
    const engine = await Engine.open({ dbPath: process.env.DICT_BENCH_DB, logLevel: 'off', warm: false });
    try {
      const index = engine.indexes.get(process.env.DICT_BENCH_INDEX ?? 'glove');
      out.db = loadFigures(KeywordReader, index.store);
    } finally {
      await engine.close();
    }
  }
  process.stdout.write(JSON.stringify(out));
}

function main() {
  const ours = resolve(here, '..', 'dist');
  const base = process.env.DICT_BENCH_BASE ?? resolve(here, '..', '..', '..', 'main', 'dist');
  const rounds = Number(process.env.DICT_BENCH_ROUNDS ?? 3);
  console.log(`dictionary bench: ${cpus().length} cores, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; this build ${ours} against ${base}`);
  const runs = { base: [], ours: [] };
  for (let r = 0; r < rounds; r++)
    for (const [name, dist] of [['base', base], ['ours', ours]]) {
      const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', dist], { encoding: 'utf8', env: process.env, maxBuffer: 1 << 24 });
      if (res.status !== 0) throw new Error(`${name} failed: ${res.stderr}`);
      const o = JSON.parse(res.stdout);
      runs[name].push(o);
      const db = o.db ? `; db: ${o.db.words} words, load ${o.db.loadCpuMs.toFixed(1)} ms CPU, holds ${(o.db.bytes / 2 ** 20).toFixed(1)} MB` : '';
      console.log(
        `${name} round ${r + 1}: movies ${o.words} words, load ${o.loadCpuMs.toFixed(2)} ms CPU, holds ${(o.bytes / 2 ** 20).toFixed(2)} MB; as typed ${o.typedCpuMs.toFixed(3)} ms CPU per search; queries ${o.queryCpuMs.toFixed(3)} ms${db}`,
      );
    }
  const m = (name, f) => median(runs[name].map(f));
  const ratio = (f) => (m('ours', f) / m('base', f)).toFixed(2);
  console.log(`load average now ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(
    `ours / base (medians of ${rounds} rounds): movies load CPU ${ratio((o) => o.loadCpuMs)}x, bytes held ${ratio((o) => o.bytes)}x, as typed CPU ${ratio((o) => o.typedCpuMs)}x, queries CPU ${ratio((o) => o.queryCpuMs)}x` +
      (runs.ours[0].db ? `; db load CPU ${ratio((o) => o.db.loadCpuMs)}x, bytes held ${ratio((o) => o.db.bytes)}x` : ''),
  );
}

if (process.argv[2] === '--child') await child(process.argv[3]);
else main();
