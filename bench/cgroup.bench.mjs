#!/usr/bin/env node
/**
 * Memory as a container gives it: the engine inside a memory cgroup, beside the same work in a
 * cgroup with no limit, alternating in the same run, everything through the public `Engine` API
 * in child processes. (Until 2026-11-25 it also compared runs with and without the
 * resident-pages addon, since removed: see bench/README.md.)
 *
 *   K "keyword 200k": the 200,000 generated documents (generated-docs.mjs, ten NDJSON payloads of
 *     20,000, as keyword-200k.bench.js) indexed from a fresh database, then the 300 keyword
 *     queries (typed-queries.mjs, one typo in 2 of 3) and the 441 keystrokes of the as-typed set.
 *     Constrained: BENCH_KEYWORD_LIMIT_MIB (512). Targets: indexing >= 0.7x the unconstrained
 *     rate, search p99 <= 2x the unconstrained.
 *   V "vectors 200k": GloVe-100 (../shared/data/glove-100) as documents with `_vectors` for a
 *     `userProvided` embedder, ten payloads of 20,000, built once (no limit); then served by
 *     fresh processes: 100 warm-up searches, the 1,000 queries timed (QPS) and scored (recall@10
 *     against the exact neighbours). Constrained: the process floor (the peak charge of a process
 *     that opens an empty database with the same index and settings and searches it) + 50% of the
 *     database's on-disk size (allocated blocks). Targets: recall >= 0.95, QPS >= 0.3x the
 *     unconstrained.
 *
 * Every child runs in a cgroup of its own (limited or not), entered before node starts (a shell
 * writes its pid to cgroup.procs, then execs node), so that all its memory is charged there.
 * The parent samples the child's /proc/<pid>/status (summed over its descendants: the engine's write
 * side may be a child process of its own) every 50 ms (RssAnon: anonymous memory, the
 * part that a container cannot give back without swap; RssFile for reference) and reads the
 * group's peak charge, its failcnt (times the limit was hit, so the kernel reclaimed) and OOM
 * kills. Before every serving run the database files are written back and dropped from the page
 * cache (`dd iflag=nocache count=0`, per file): pages cached by an earlier process are charged to
 * its group, not to the next one, so a constrained run would otherwise read them for free.
 *
 * cgroup v2 (when /sys/fs/cgroup/cgroup.controllers exists): groups under BENCH_CGROUP_PARENT or
 * the root, with `memory.max`. cgroup v1: groups under BENCH_CGROUP_PARENT or this process's own
 * memory cgroup (so that whatever contains this process still contains the children), with
 * `memory.limit_in_bytes`. Needs root (or a delegated subtree).
 *
 *   npm run build && node bench/cgroup.bench.mjs
 *   BENCH_CGROUP=V BENCH_ROUNDS=3 node bench/cgroup.bench.mjs        the vector part, 3 rounds
 *   BENCH_VECTOR_DB=/tmp/glove-db BENCH_KEEP_VECTOR_DB=1 ...          build once, keep it, rerun serving
 *
 * Environment: BENCH_CGROUP (K,V), BENCH_ROUNDS (1), BENCH_DOCS (200000), BENCH_KEYWORD_LIMIT_MIB (512), BENCH_VECTORS
 * (200000), BENCH_VECTOR_LIMIT_MIB (instead of floor + 50%), BENCH_VECTOR_DB, BENCH_KEEP_VECTOR_DB,
 * BENCH_CGROUP_PARENT, BENCH_DIST (../dist), BENCH_KEYWORD_FREE=0 (the constrained keyword runs only), BENCH_MALLOC=1
 * (each part also with the glibc allocator settings of MALLOC_TUNABLES; `only`: with them only), BENCH_SMAPS=1 (the K child
 * prints where its anonymous memory is), BENCH_PAUSE_MS (the K child pauses after the build, to be looked at),
 * BENCH_SEARCH=0 (the K child builds only), BENCH_MALLOC_TUNABLES (instead of MALLOC_TUNABLES).
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedPayloads, sharedDataDir } from './generated-docs.mjs';
import { makeQueries, typedQueries } from './typed-queries.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const DIST = process.env.BENCH_DIST ?? join(root, 'dist');
const GLOVE = join(sharedDataDir(), 'glove-100');
const MIB = 1024 * 1024;
const KEYWORD_DOCS = Number(process.env.BENCH_DOCS ?? 200_000);
const PER_PAYLOAD = 20_000;
const KEYWORD_LIMIT = Number(process.env.BENCH_KEYWORD_LIMIT_MIB ?? 512) * MIB;
const VECTORS = Number(process.env.BENCH_VECTORS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const FIELDS = ['title', 'cast', 'genres', 'extract', 'keywords'];
const DIM = 100;
const K = 10;
const WARMUP = 100;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const f = (n, d = 1) => (n === undefined || n === null || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const started = performance.now();
const log = (line) => console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

// ---------------------------------------------------------------------------------------------
// cgroups

function cgroupSystem() {
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    const parent = process.env.BENCH_CGROUP_PARENT ?? '/sys/fs/cgroup';
    const control = join(parent, 'cgroup.subtree_control');
    if (!readFileSync(control, 'utf8').split(/\s+/).includes('memory')) writeFileSync(control, '+memory');
    return { version: 2, parent };
  }
  if (existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes')) {
    const own = /^\d+:memory:(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '/';
    return { version: 1, parent: process.env.BENCH_CGROUP_PARENT ?? join('/sys/fs/cgroup/memory', own) };
  }
  throw new Error('no memory cgroup controller found (neither /sys/fs/cgroup/cgroup.controllers nor /sys/fs/cgroup/memory)');
}

const readNumber = (file) => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : undefined);
const keyed = (file, key) => (existsSync(file) ? Number(new RegExp(`^${key} (\\d+)`, 'm').exec(readFileSync(file, 'utf8'))?.[1] ?? 0) : undefined);

let groupCount = 0;
/** A fresh memory cgroup limited to `limit` bytes (null: no limit). */
function createGroup(system, limit) {
  const dir = join(system.parent, `search-bench-${process.pid}-${groupCount++}`);
  mkdirSync(dir);
  if (system.version === 1) writeFileSync(join(dir, 'memory.limit_in_bytes'), limit === null ? '-1' : String(limit));
  else writeFileSync(join(dir, 'memory.max'), limit === null ? 'max' : String(limit));
  return {
    dir,
    limit,
    /** Peak charge (anonymous memory and the page cache the group's processes brought in). */
    peak: () => (system.version === 1 ? readNumber(join(dir, 'memory.max_usage_in_bytes')) : readNumber(join(dir, 'memory.peak'))),
    /** How many times a charge hit the limit (the kernel then reclaims within the group). */
    limitHits: () => (system.version === 1 ? readNumber(join(dir, 'memory.failcnt')) : keyed(join(dir, 'memory.events'), 'max')),
    oomKills: () => (system.version === 1 ? keyed(join(dir, 'memory.oom_control'), 'oom_kill') : keyed(join(dir, 'memory.events'), 'oom_kill')),
    async remove() {
      for (let i = 0; i < 50; i++) {
        try {
          rmdirSync(dir);
          return;
        } catch {
          await sleep(100);
        }
      }
    },
  };
}

const statusKiB = (status, name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;

/** `pid` and its descendants (the engine's write side may be a child process: src/engine/tasks/write-host.ts). */
function processTree(pid) {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${tree[i]}/task`)) {
        const children = readFileSync(`/proc/${tree[i]}/task/${task}/children`, 'utf8');
        for (const child of children.split(' ').filter(Boolean)) tree.push(Number(child));
      }
    } catch {
      // exited meanwhile
    }
  }
  return tree;
}

/** A /proc status figure summed over `pid` and its descendants, in bytes. */
function treeStatus(pid, names) {
  const sums = Object.fromEntries(names.map((name) => [name, 0]));
  for (const member of processTree(pid)) {
    try {
      const s = readFileSync(`/proc/${member}/status`, 'utf8');
      for (const name of names) sums[name] += statusKiB(s, name);
    } catch {
      // exited meanwhile
    }
  }
  return sums;
}

const TICKS_PER_SECOND = 100;

/**
 * CPU seconds of this process, its live descendants and the descendants it has reaped (user,
 * system, and children's user and system from /proc/<pid>/stat), so that the figure counts a
 * write side run as a child process.
 */
/** CPU seconds of this process and its descendants; `system` counts the kernel's part alone (page faults, reclaim, I/O). */
function treeCpuSeconds(system = false) {
  let ticks = 0;
  for (const member of processTree(process.pid)) {
    try {
      const fields = readFileSync(`/proc/${member}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      // after the command: state is field 3, utime..cstime are fields 14..17
      ticks += system ? Number(fields[12]) + Number(fields[14]) : Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // exited meanwhile: its ticks reach its parent's children's times once reaped
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/**
 * `node <this file> --child <role> ...args` inside `group`; resolves with its JSON answer and the
 * memory figures, or with `failed` when it died (an OOM kill shows as SIGKILL).
 */
/** The child under way and its group: killed and removed when this process is interrupted. */
let current;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    current?.child.kill('SIGKILL');
    setTimeout(() => {
      try {
        if (current) rmdirSync(current.group.dir);
      } finally {
        process.exit(130);
      }
    }, 500);
  });

async function runChild(group, role, args, env = {}) {
  const script = `echo $$ > "${group.dir}/cgroup.procs" && exec "$0" "$@"`;
  const child = spawn('sh', ['-c', script, process.execPath, fileURLToPath(import.meta.url), '--child', role, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(SEARCH|MEILI)_/.test(k))), ...env },
  });
  current = { child, group };
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const peak = { anon: 0, file: 0, rss: 0 };
  const timer = setInterval(() => {
    const s = treeStatus(child.pid, ['RssAnon', 'RssFile', 'VmRSS']);
    peak.anon = Math.max(peak.anon, s.RssAnon);
    peak.file = Math.max(peak.file, s.RssFile);
    peak.rss = Math.max(peak.rss, s.VmRSS);
  }, 50);
  const [code, signal] = await new Promise((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  clearInterval(timer);
  current = undefined;
  const figures = { peakAnon: peak.anon, peakFile: peak.file, peakRss: peak.rss, groupPeak: group.peak(), limitHits: group.limitHits(), oomKills: group.oomKills() };
  if (code !== 0) return { ...figures, failed: `exit ${code ?? signal}${figures.oomKills ? ' (OOM kill)' : ''}` };
  return { ...figures, ...JSON.parse(out.trim().split('\n').at(-1)) };
}

async function inGroup(system, limit, role, args, env) {
  const group = createGroup(system, limit);
  try {
    return await runChild(group, role, args, env);
  } finally {
    await group.remove();
  }
}

/** Written back, then dropped from the page cache, file by file (the next process reads them from disk, charged to its own group). */
function evictFromPageCache(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const fd = openSync(file, 'r+');
    fsyncSync(fd);
    closeSync(fd);
    execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
  }
}

/** Bytes allocated on disk under `dir` (LMDB data files are sparse: their size is the map's). */
function diskBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) total += statSync(join(entry.parentPath ?? entry.path, entry.name)).blocks * 512;
  return total;
}

// ---------------------------------------------------------------------------------------------
// children

async function openEngine(dbPath) {
  const { Engine } = await import(join(DIST, 'src/index.js'));
  return Engine.open({ dbPath, logLevel: 'off' });
}

async function waitAll(engine, tasks) {
  const done = [];
  for (const t of tasks) {
    const task = await engine.waitForTask(t.taskUid, { timeoutMs: 3_600_000 });
    if (task.status !== 'succeeded') throw new Error(JSON.stringify(task.error));
    done.push(task);
  }
  return done;
}

async function timed(list, run) {
  const times = [];
  for (const q of list) {
    const t = performance.now();
    await run(q);
    times.push({ q, ms: performance.now() - t });
  }
  const sorted = times.map((t) => t.ms).sort((a, b) => a - b);
  const worst = [...times].sort((a, b) => b.ms - a.ms).slice(0, 5).map((t) => `${t.q} ${t.ms.toFixed(0)}`);
  return { n: sorted.length, p50: pct(sorted, 0.5), p99: pct(sorted, 0.99), max: sorted.at(-1), worst };
}

/** Anonymous memory of this process and its descendants (a write side run as a child process). */
const ownAnon = () => treeStatus(process.pid, ['RssAnon']).RssAnon;
const SETTLE_MS = 2000;

/**
 * Where this process's anonymous memory is (BENCH_SMAPS=1): resident anonymous KiB of its
 * mappings by kind, from /proc/self/smaps: glibc's main heap, 64 MiB-aligned arena heaps (mappings
 * of up to 64 MiB that glibc reserves per arena), and the rest (V8's heap pages, large blocks
 * mapped on their own, thread stacks), with V8's own figures for this thread.
 */
function anonymousMappings() {
  const kinds = { heap: 0, arenas: 0, other: 0 };
  let kind = 'other';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (range) {
      const size = Number.parseInt(range[2], 16) - Number.parseInt(range[1], 16);
      const start = Number.parseInt(range[1], 16);
      kind = range[3] === '[heap]' ? 'heap' : range[3] ? 'file' : size <= 64 * MIB && start % (64 * MIB) === 0 ? 'arenas' : 'other';
    } else if (line.startsWith('Anonymous:') && kind !== 'file') kinds[kind] += Number(/(\d+)/.exec(line)[1]);
  }
  const m = process.memoryUsage();
  return `main heap ${mib(kinds.heap * 1024)} MiB, arena heaps ${mib(kinds.arenas * 1024)} MiB, other anonymous ${mib(kinds.other * 1024)} MiB; main thread V8 heap ${mib(m.heapTotal)} MiB (${mib(m.heapUsed)} used), array buffers ${mib(m.arrayBuffers)} MiB`;
}

/** The 200k keyword build and its searches, from a fresh database. */
async function keywordChild(payloadDir, dbPath) {
  const { queries, typed } = JSON.parse(readFileSync(join(payloadDir, 'queries.json'), 'utf8'));
  const engine = await openEngine(dbPath);
  await waitAll(engine, [await engine.updateSettings('docs', { searchableAttributes: FIELDS })]);
  const cpu0 = treeCpuSeconds();
  const sys0 = treeCpuSeconds(true);
  const t0 = performance.now();
  const tasks = [];
  for (const file of readdirSync(payloadDir).filter((n) => n.endsWith('.ndjson')).sort()) tasks.push(await engine.addDocuments('docs', { format: 'ndjson', data: readFileSync(join(payloadDir, file)) }, { primaryKey: 'id' }));
  const done = await waitAll(engine, tasks);
  const seconds = (performance.now() - t0) / 1000;
  const cpuSeconds = treeCpuSeconds() - cpu0;
  const sysSeconds = treeCpuSeconds(true) - sys0;
  const anonAfterBuild = ownAnon();
  // what stays once the engine has let the build's memory go (the write thread ends after 1 s idle under a limit)
  await sleep(SETTLE_MS);
  const anonSettled = ownAnon();
  if (process.env.BENCH_SMAPS === '1') process.stderr.write(`after the build + ${SETTLE_MS} ms: ${anonymousMappings()}\n`);
  if (process.env.BENCH_PAUSE_MS) {
    // time to look at the process from outside (gdb -p <pid>: `call (void) malloc_stats()`)
    process.stderr.write(`pid ${process.pid}: pausing ${process.env.BENCH_PAUSE_MS} ms\n`);
    await sleep(Number(process.env.BENCH_PAUSE_MS));
    process.stderr.write(`after the pause: RssAnon ${mib(ownAnon())} MiB; ${anonymousMappings()}\n`);
  }
  const docs = engine.indexStats('docs').numberOfDocuments;
  if (process.env.BENCH_SEARCH === '0') {
    await engine.close();
    return { docs, docsPerSec: docs / seconds, cpuSeconds, sysSeconds, batches: new Set(done.map((t) => t.batchUid)).size, keyword: { worst: [] }, asTyped: { worst: [] }, anonAfterBuild, anonSettled };
  }
  const search = (q) => engine.search('docs', { q, limit: 20 });
  for (const q of queries.slice(0, 20)) await search(q);
  const keyword = await timed(queries, search);
  const asTyped = await timed(typed, search);
  const anonAfterSearches = ownAnon();
  if (process.env.BENCH_SMAPS === '1') process.stderr.write(`after the searches: ${anonymousMappings()}\n`);
  await engine.close();
  return { docs, docsPerSec: docs / seconds, cpuSeconds, sysSeconds, batches: new Set(done.map((t) => t.batchUid)).size, keyword, asTyped, anonAfterBuild, anonSettled, anonAfterSearches };
}

function glove() {
  const meta = JSON.parse(readFileSync(join(GLOVE, 'meta.json'), 'utf8'));
  const read = (name) => {
    const b = readFileSync(join(GLOVE, name));
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  };
  return { meta, read };
}

/** 200k GloVe vectors as documents, ten payloads, defaults; the database is kept for serving. */
async function vectorBuildChild(dbPath) {
  const { read } = glove();
  const base = new Float32Array(read('base.f32'));
  const engine = await openEngine(dbPath);
  await waitAll(engine, [await engine.createIndex('glove', { primaryKey: 'id' })]);
  await waitAll(engine, [await engine.updateSettings('glove', { embedders: { default: { source: 'userProvided', dimensions: DIM } } })]);
  const t0 = performance.now();
  const per = Math.ceil(VECTORS / 10);
  const tasks = [];
  for (let s = 0; s < VECTORS; s += per) {
    const docs = [];
    for (let id = s; id < Math.min(VECTORS, s + per); id++) docs.push({ id, _vectors: { default: Array.from(base.subarray(id * DIM, (id + 1) * DIM)) } });
    tasks.push(await engine.addDocuments('glove', docs, { method: 'replace' }));
  }
  await waitAll(engine, tasks);
  const seconds = (performance.now() - t0) / 1000;
  await engine.close();
  return { docsPerSec: VECTORS / seconds };
}

/** Opens the vector database (or, for the floor, an empty one with the same index and settings), warms up, times the 1,000 queries. */
async function vectorServeChild(dbPath, truthFile, floor) {
  const { meta, read } = glove();
  const queries = new Float32Array(read('queries.f32'));
  const truth = JSON.parse(readFileSync(truthFile, 'utf8'));
  const engine = await openEngine(dbPath);
  if (floor === 'floor') {
    await waitAll(engine, [await engine.createIndex('glove', { primaryKey: 'id' })]);
    await waitAll(engine, [await engine.updateSettings('glove', { embedders: { default: { source: 'userProvided', dimensions: DIM } } })]);
  }
  const search = async (qi) => (await engine.search('glove', { vector: Array.from(queries.subarray(qi * DIM, (qi + 1) * DIM)), hybrid: { embedder: 'default', semanticRatio: 1 }, limit: K })).hits.map((h) => h.id);
  const t0 = performance.now();
  await search(0);
  const firstMs = performance.now() - t0;
  for (let i = 0; i < WARMUP; i++) await search(i);
  let hits = 0;
  const t = performance.now();
  for (let qi = 0; qi < meta.nQuery; qi++) {
    const expected = new Set(truth[qi]);
    for (const id of await search(qi)) if (expected.has(id)) hits++;
  }
  const qps = meta.nQuery / ((performance.now() - t) / 1000);
  await engine.close();
  return { qps, recall: hits / (meta.nQuery * K), firstMs };
}

// ---------------------------------------------------------------------------------------------
// the parent

/**
 * The configurations: the engine with its defaults, and (BENCH_MALLOC=1) the same process started
 * with glibc's allocator told to serve blocks of 128 KiB and more from their own mappings, given
 * back when freed, and to keep two arenas for all threads (`GLIBC_TUNABLES`, read when the process
 * starts: a deployment setting, see bench/README.md) instead of a threshold that rises after
 * the first large free and an arena per thread.
 */
const MALLOC_TUNABLES = process.env.BENCH_MALLOC_TUNABLES ?? 'glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2';
function variants() {
  const list = [{ name: 'engine', env: {} }];
  if (process.env.BENCH_MALLOC === 'only') return [{ name: 'engine+malloc', env: { GLIBC_TUNABLES: MALLOC_TUNABLES } }];
  if (process.env.BENCH_MALLOC === '1') list.push({ name: 'engine+malloc', env: { GLIBC_TUNABLES: MALLOC_TUNABLES } });
  return list;
}

const mib = (bytes) => (bytes === undefined ? '-' : f(bytes / MIB, 0));
const memoryLine = (r) => `RssAnon peak ${mib(r.peakAnon)} MiB (RssFile ${mib(r.peakFile)}), group peak ${mib(r.groupPeak)} MiB, limit hits ${r.limitHits ?? '-'}, OOM kills ${r.oomKills ?? '-'}`;
const summary = [];

async function keywordPart(system, configs) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cgroup-kw-'));
  try {
    log(`K: writing ${KEYWORD_DOCS.toLocaleString('en-US')} documents as NDJSON payloads of ${PER_PAYLOAD.toLocaleString('en-US')}`);
    const titles = [];
    let n = 0;
    for (const payload of generatedPayloads(KEYWORD_DOCS, PER_PAYLOAD)) {
      writeFileSync(join(dir, `payload-${String(n++).padStart(3, '0')}.ndjson`), payload);
      for (const line of payload.split('\n')) if (line) titles.push({ title: JSON.parse(line).title });
    }
    const queries = makeQueries(titles);
    writeFileSync(join(dir, 'queries.json'), JSON.stringify({ queries, typed: typedQueries(queries) }));
    const results = new Map();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const variant of configs) {
        for (const limit of process.env.BENCH_KEYWORD_FREE === '0' ? [KEYWORD_LIMIT] : [null, KEYWORD_LIMIT]) {
          const label = `${variant.name}, ${limit === null ? 'no limit' : `limit ${mib(limit)} MiB`}`;
          const db = join(dir, `db-${round}-${variant.name.replace(' ', '-')}-${limit ?? 'none'}`);
          log(`K round ${round}: ${label} (load ${load()})`);
          const r = await inGroup(system, limit, 'keyword', [dir, db], variant.env);
          rmSync(db, { recursive: true, force: true });
          if (r.failed) log(`K: ${label}: FAILED ${r.failed}; ${memoryLine(r)}`);
          else log(`K: ${label}: ${f(r.docsPerSec, 0)} docs/s (${r.batches} batches, CPU ${f(r.cpuSeconds, 0)} s, of which the kernel's ${f(r.sysSeconds, 0)} s); queries p50/p99 ${f(r.keyword.p50, 2)}/${f(r.keyword.p99, 1)} ms, worst ${r.keyword.worst.join(', ')}; as typed p50/p99 ${f(r.asTyped.p50, 2)}/${f(r.asTyped.p99, 1)} ms, worst ${r.asTyped.worst.join(', ')}; RssAnon after the build ${mib(r.anonAfterBuild)} MiB, ${SETTLE_MS / 1000} s later ${mib(r.anonSettled)} MiB, after the searches ${mib(r.anonAfterSearches)} MiB; ${memoryLine(r)}`);
          const key = `${variant.name}|${limit === null ? 'free' : 'limited'}`;
          results.set(key, [...(results.get(key) ?? []), r]);
        }
      }
    }
    // the best run of each configuration (the machine is shared: a burst elsewhere slows one run)
    const best = (key) => (results.get(key) ?? []).filter((r) => !r.failed).sort((a, b) => b.docsPerSec - a.docsPerSec)[0];
    for (const variant of configs) {
      const free = best(`${variant.name}|free`);
      const limited = best(`${variant.name}|limited`);
      if (!limited) {
        summary.push(`K ${variant.name}: the constrained run failed`);
        continue;
      }
      if (!free) {
        if (process.env.BENCH_KEYWORD_FREE === '0') summary.push(`K ${variant.name}, ${mib(KEYWORD_LIMIT)} MiB: ${f(limited.docsPerSec, 0)} docs/s (CPU ${f(limited.cpuSeconds, 0)} s), query p50/p99 ${f(limited.keyword.p50, 1)}/${f(limited.keyword.p99, 1)} ms, as-typed p50/p99 ${f(limited.asTyped.p50, 1)}/${f(limited.asTyped.p99, 1)} ms`);
        else summary.push(`K ${variant.name}: ${!limited ? 'the constrained run failed' : 'the unconstrained run failed'}`);
        continue;
      }
      summary.push(
        `K ${variant.name}, ${mib(KEYWORD_LIMIT)} MiB vs no limit: indexing ${f(limited.docsPerSec, 0)} vs ${f(free.docsPerSec, 0)} docs/s = ${f(limited.docsPerSec / free.docsPerSec, 2)}x (target >= 0.7x); ` +
          `query p99 ${f(limited.keyword.p99, 1)} vs ${f(free.keyword.p99, 1)} ms = ${f(limited.keyword.p99 / free.keyword.p99, 2)}x (target <= 2x); as-typed p99 ${f(limited.asTyped.p99, 1)} vs ${f(free.asTyped.p99, 1)} ms = ${f(limited.asTyped.p99 / free.asTyped.p99, 2)}x; ` +
          `RssAnon after the build (${SETTLE_MS / 1000} s later) ${mib(limited.anonAfterBuild)} (${mib(limited.anonSettled)}) vs ${mib(free.anonAfterBuild)} (${mib(free.anonSettled)}) MiB, peak ${mib(limited.peakAnon)} vs ${mib(free.peakAnon)} MiB; group peak ${mib(limited.groupPeak)} vs ${mib(free.groupPeak)} MiB`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}


function vectorTruth(dir) {
  const { meta, read } = glove();
  const file = join(dir, 'truth.json');
  let truth;
  if (VECTORS === meta.nBase) {
    const gt = new Int32Array(read('gt.i32'));
    truth = Array.from({ length: meta.nQuery }, (_, q) => Array.from(gt.subarray(q * meta.k, q * meta.k + K)));
  } else {
    // exact cosine over the first VECTORS rows (L2-normalised: the dot product ranks the same)
    const base = new Float32Array(read('base.f32'));
    const queries = new Float32Array(read('queries.f32'));
    truth = [];
    for (let q = 0; q < meta.nQuery; q++) {
      const scored = [];
      for (let i = 0; i < VECTORS; i++) {
        let s = 0;
        for (let d = 0; d < DIM; d++) s += queries[q * DIM + d] * base[i * DIM + d];
        scored.push([s, i]);
      }
      truth.push(scored.sort((a, b) => b[0] - a[0]).slice(0, K).map(([, i]) => i));
    }
  }
  writeFileSync(file, JSON.stringify(truth));
  return file;
}

async function vectorPart(system, configs) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cgroup-vec-'));
  const db = process.env.BENCH_VECTOR_DB ?? join(dir, 'db');
  try {
    const truthFile = vectorTruth(dir);
    if (!existsSync(db)) {
      log(`V: building ${VECTORS.toLocaleString('en-US')} GloVe-100 vectors in 10 payloads (no limit, load ${load()})`);
      const built = await inGroup(system, null, 'vector-build', [db], {});
      if (built.failed) throw new Error(`the vector build failed: ${built.failed}`);
      log(`V: built at ${f(built.docsPerSec, 0)} docs/s; ${memoryLine(built)}`);
    } else log(`V: serving the existing database ${db}`);
    const disk = diskBytes(db);
    const emptyDb = join(dir, 'floor-db');
    const floor = await inGroup(system, null, 'vector-serve', [emptyDb, truthFile, 'floor'], {});
    if (floor.failed) throw new Error(`the floor process failed: ${floor.failed}`);
    const limit = process.env.BENCH_VECTOR_LIMIT_MIB ? Number(process.env.BENCH_VECTOR_LIMIT_MIB) * MIB : Math.round(floor.groupPeak + disk / 2);
    log(`V: database ${mib(disk)} MiB on disk; floor (an empty index searched) group peak ${mib(floor.groupPeak)} MiB, RssAnon ${mib(floor.peakAnon)} MiB, VmRSS ${mib(floor.peakRss)} MiB; limit ${mib(limit)} MiB`);
    const results = new Map();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const variant of configs) {
        for (const l of [null, limit]) {
          const label = `${variant.name}, ${l === null ? 'no limit' : `limit ${mib(l)} MiB`}`;
          evictFromPageCache(db);
          log(`V round ${round}: ${label} (load ${load()})`);
          const r = await inGroup(system, l, 'vector-serve', [db, truthFile, 'index'], variant.env);
          if (r.failed) log(`V: ${label}: FAILED ${r.failed}; ${memoryLine(r)}`);
          else log(`V: ${label}: recall@10 ${f(r.recall, 4)}, ${f(r.qps, 0)} QPS, first search ${f(r.firstMs, 0)} ms; ${memoryLine(r)}`);
          const key = `${variant.name}|${l === null ? 'free' : 'limited'}`;
          results.set(key, [...(results.get(key) ?? []), r]);
        }
      }
    }
    const best = (key) => (results.get(key) ?? []).filter((r) => !r.failed).sort((a, b) => b.qps - a.qps)[0];
    for (const variant of configs) {
      const free = best(`${variant.name}|free`);
      const limited = best(`${variant.name}|limited`);
      if (!free || !limited) {
        summary.push(`V ${variant.name}: ${!limited ? 'the constrained run failed' : 'the unconstrained run failed'}`);
        continue;
      }
      summary.push(
        `V ${variant.name}, ${mib(limit)} MiB (floor ${mib(floor.groupPeak)} + 50% of ${mib(disk)} on disk) vs no limit: recall@10 ${f(limited.recall, 4)} vs ${f(free.recall, 4)} (target >= 0.95); ` +
          `QPS ${f(limited.qps, 0)} vs ${f(free.qps, 0)} = ${f(limited.qps / free.qps, 2)}x (target >= 0.3x); RssAnon peak ${mib(limited.peakAnon)} vs ${mib(free.peakAnon)} MiB; group peak ${mib(limited.groupPeak)} vs ${mib(free.groupPeak)} MiB`,
      );
    }
  } finally {
    // a database given by BENCH_VECTOR_DB is never removed; one built here is kept with BENCH_KEEP_VECTOR_DB=1
    const keep = process.env.BENCH_KEEP_VECTOR_DB === '1' && !process.env.BENCH_VECTOR_DB;
    if (keep) {
      for (const name of ['truth.json', 'floor-db']) rmSync(join(dir, name), { recursive: true, force: true });
      log(`V: database kept in ${db} (rerun with BENCH_VECTOR_DB=${db})`);
    } else rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  if (!existsSync(join(DIST, 'src/index.js'))) throw new Error('dist/ is not built: run `npm run build` first');
  const system = cgroupSystem();
  const configs = variants();
  const parts = (process.env.BENCH_CGROUP ?? 'K,V').toUpperCase().split(',');
  console.log(`cgroup bench: cgroup v${system.version} under ${system.parent}; parts ${parts.join(',')}; ${ROUNDS} round(s); load average ${load()}`);
  if (parts.includes('K')) await keywordPart(system, configs);
  if (parts.includes('V')) await vectorPart(system, configs);
  console.log(`\ncgroup bench summary (${new Date().toISOString().slice(0, 16)}Z, load average ${load()}; best of ${ROUNDS} per configuration)`);
  for (const line of summary) console.log(`- ${line}`);
}

const i = process.argv.indexOf('--child');
if (i >= 0) {
  const [role, ...args] = process.argv.slice(i + 1);
  const run = { keyword: keywordChild, 'vector-build': vectorBuildChild, 'vector-serve': vectorServeChild }[role];
  process.stdout.write(`${JSON.stringify(await run(...args))}\n`);
  process.exit(0);
} else await main();
