/**
 * Keyword indexing at 200,000 documents: peak anonymous memory (RssAnon) of the whole engine (task
 * queue, update files, batches, write thread), beside MiniSearch indexing the same documents in
 * the same run (in memory, its peak is its own process's). Total RSS is printed too, but it counts
 * mapped pages of the LMDB files that the kernel takes back under pressure: how the build fares
 * inside a memory limit is `cgroup.bench.mjs`'s to say.
 *
 * No real 200k-document text corpus is at hand, so the documents are built from real data
 * (`generated-docs.mjs`, shared with served.bench.mjs): the 36,273 movies repeated with fresh ids
 * (title, cast, genres, extract), each given three GloVe vocabulary words
 * (`../shared/data/glove-100/words.txt`, 200,000 distinct English tokens) as a `keywords` field,
 * so that the vocabulary grows as a larger corpus's would (about 250k words). The parent writes
 * them as ten NDJSON payloads of 20,000 documents; the engine child sends each payload as a
 * client would (`addDocuments` with the raw NDJSON), waits for every task, then runs
 * the keyword query set; MiniSearch parses the same files. Both then add five batches of 1,000 new
 * documents one after the other, as a live index receives them. A third run indexes the same
 * payloads while searching every 20 ms, and reports how long those searches took (they wait for
 * any synchronous stretch of indexing).
 *
 *   npm run build && node bench/keyword-200k.bench.js
 *   BENCH_DOCS=100000 node bench/keyword-200k.bench.js
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { generatedPayloads } from './generated-docs.mjs';

const DIST = process.env.BENCH_DIST ?? '../dist';
const TOTAL = Number(process.env.BENCH_DOCS ?? 200_000);
const PER_PAYLOAD = 20_000;
const FIELDS = ['title', 'cast', 'genres', 'extract', 'keywords'];

function writePayloads(dir) {
  let file = 0;
  for (const payload of generatedPayloads(TOTAL, PER_PAYLOAD)) writeFileSync(join(dir, `payload-${String(file++).padStart(3, '0')}.ndjson`), payload);
}

/** Five batches of 1,000 new documents (the last payload's, with fresh ids), added one by one after the bulk load. */
const SMALL_BATCH = 1_000;
function smallBatches(dir) {
  const files = payloadFiles(dir);
  const docs = readFileSync(files[files.length - 1], 'utf8').split('\n').filter(Boolean).slice(0, 5 * SMALL_BATCH).map((line) => {
    const doc = JSON.parse(line);
    doc.id += 10_000_000;
    return doc;
  });
  return Array.from({ length: docs.length / SMALL_BATCH }, (_, i) => docs.slice(i * SMALL_BATCH, (i + 1) * SMALL_BATCH));
}

const payloadFiles = (dir) => readdirSync(dir).filter((f) => f.endsWith('.ndjson')).sort().map((f) => join(dir, f));

/** Queries with one typo in most, as in keyword.bench.js, from the movie titles. */
function queries(dir) {
  const out = [];
  for (const line of readFileSync(payloadFiles(dir)[0], 'utf8').split('\n').slice(0, 300)) {
    if (!line) continue;
    const words = String(JSON.parse(line).title).toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 2);
    if (words.length === 0) continue;
    const q = words.slice(0, 2);
    if (q[0].length >= 5) q[0] = q[0].slice(0, 2) + q[0][3] + q[0][2] + q[0].slice(4);
    out.push(q.join(' '));
  }
  return out;
}

const peers = {
  /** `probe`: also search every 20 ms while indexing, and report how long those searches waited. */
  async engine(dir, probe = false) {
    const { Engine } = await import(`${DIST}/src/index.js`);
    const db = mkdtempSync(join(tmpdir(), 'bench-200k-db-'));
    const engine = await Engine.open({ dbPath: db, logLevel: 'off' });
    await engine.waitForTask((await engine.updateSettings('docs', { searchableAttributes: FIELDS })).taskUid);
    const start = performance.now();
    const tasks = [];
    for (const file of payloadFiles(dir)) tasks.push(await engine.addDocuments('docs', { format: 'ndjson', data: readFileSync(file) }, { primaryKey: 'id' }));
    // A search every 20 ms: its latency includes the time it waits for the event loop.
    const waits = [];
    let indexing = true;
    const probing = probe
      ? (async () => {
          while (indexing) {
            // Timed from when the search is due: a synchronous stretch of indexing delays the timer itself.
            const due = performance.now() + 20;
            await new Promise((resolve) => setTimeout(resolve, 20));
            await engine.search('docs', { q: 'the black', limit: 10 });
            waits.push(performance.now() - due);
          }
        })()
      : null;
    for (const t of tasks) {
      const done = await engine.waitForTask(t.taskUid, { timeoutMs: 3_600_000 });
      if (done.status !== 'succeeded') throw new Error(JSON.stringify(done.error));
    }
    indexing = false;
    await probing;
    waits.sort((a, b) => a - b);
    const ms = performance.now() - start;
    const batches = new Set(tasks.map((t) => engine.getTask(t.taskUid).batchUid)).size;
    return {
      ms,
      batches,
      probe: probe ? { searches: waits.length, p99: waits[Math.floor(0.99 * waits.length)], max: waits[waits.length - 1] } : undefined,
      count: engine.indexStats('docs').numberOfDocuments,
      query: async (q) => (await engine.search('docs', { q, limit: 10 })).hits.length,
      addSmall: async (docs) => {
        const task = await engine.addDocuments('docs', docs, { primaryKey: 'id' });
        if ((await engine.waitForTask(task.taskUid)).status !== 'succeeded') throw new Error('small batch failed');
      },
      close: async () => {
        await engine.close();
        rmSync(db, { recursive: true, force: true });
      },
    };
  },
  /** The same load with a search every 20 ms (whose timing it reports): does indexing starve searches? */
  engineWhileSearching: (dir) => peers.engine(dir, true),
  async minisearch(dir) {
    const { default: MiniSearch } = await import('minisearch');
    const start = performance.now();
    const text = (doc, field) => (Array.isArray(doc[field]) ? doc[field].join(' ') : (doc[field] ?? ''));
    const index = new MiniSearch({ fields: FIELDS, storeFields: ['title'], extractField: text });
    let count = 0;
    for (const file of payloadFiles(dir)) {
      const docs = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      index.addAll(docs);
      count += docs.length;
    }
    return {
      ms: performance.now() - start,
      batches: null,
      count,
      query: (q) => index.search(q, { fuzzy: 0.2, prefix: true }).slice(0, 10).length,
      addSmall: async (docs) => index.addAll(docs),
    };
  },
};

/**
 * The peak's split between anonymous memory (heap, write buffers) and file-backed pages (the LMDB
 * map): maxRSS alone does not say which one to work on. A worker samples /proc/self/status every
 * 50 ms, because the main thread is blocked inside the write transactions, where the peak is.
 */
function startRssSampler() {
  const source = `
    const { readFileSync } = require('node:fs');
    const { parentPort } = require('node:worker_threads');
    const kib = (status, name) => Number(new RegExp('^' + name + ':\\\\s+(\\\\d+)', 'm').exec(status)?.[1] ?? 0) / 1024;
    let peak = { rss: 0, anon: 0, file: 0 };
    const sample = () => {
      const s = readFileSync('/proc/self/status', 'utf8');
      peak = { rss: Math.max(peak.rss, kib(s, 'VmRSS')), anon: Math.max(peak.anon, kib(s, 'RssAnon')), file: Math.max(peak.file, kib(s, 'RssFile')) };
    };
    const timer = setInterval(sample, 50);
    parentPort.on('message', () => { clearInterval(timer); sample(); parentPort.postMessage(peak); });`;
  const worker = new Worker(source, { eval: true });
  return () => new Promise((resolve) => {
    worker.once('message', (peak) => { void worker.terminate(); resolve(peak); });
    worker.postMessage('stop');
  });
}

async function child(peer, dir) {
  const stopSampler = startRssSampler();
  const p = await peers[peer](dir);
  const qs = queries(dir);
  for (const q of qs.slice(0, 20)) await p.query(q);
  const times = [];
  for (const q of qs) {
    const s = performance.now();
    await p.query(q);
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  const pct = (x) => times[Math.min(times.length - 1, Math.floor(x * times.length))];
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  const peak = await stopSampler();
  // Then what a live index sees: small batches of new documents added to the full one.
  const small = smallBatches(dir);
  const start = performance.now();
  for (const docs of small) await p.addSmall(docs);
  const smallDocsPerSec = (small.length * SMALL_BATCH) / ((performance.now() - start) / 1000);
  await p.close?.();
  process.stdout.write(JSON.stringify({ docs: p.count, batches: p.batches, docsPerSec: p.count / (p.ms / 1000), p50: pct(0.5), p99: pct(0.99), peakRssMiB, peakAnonMiB: peak.anon, peakFileMiB: peak.file, smallDocsPerSec, probe: p.probe }));
}

function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-200k-'));
  try {
    writePayloads(dir);
    const results = {};
    for (const peer of Object.keys(peers)) {
      const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--peer', peer, dir], { encoding: 'utf8', maxBuffer: 1 << 20 });
      if (out.status !== 0) throw new Error(`${peer} failed:\n${out.stderr}`);
      results[peer] = JSON.parse(out.stdout);
    }
    const f = (n, d = 0) => n.toFixed(d);
    const us = results.engine;
    const them = results.minisearch;
    console.log(`keyword indexing at ${us.docs} documents (movies repeated + GloVe keywords, ${TOTAL / PER_PAYLOAD} NDJSON payloads) (${new Date().toISOString().slice(0, 10)}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
    console.log('peer        docs/s   peak RssAnon MiB (peak RssFile, peak RSS)   p50 ms   p99 ms   batches');
    for (const [peer, r] of Object.entries(results))
      console.log(`${peer.padEnd(10)} ${f(r.docsPerSec).padStart(7)} ${f(r.peakAnonMiB).padStart(17)} (${f(r.peakFileMiB)}, ${f(r.peakRssMiB)})`.padEnd(64) + `${f(r.p50, 3).padStart(8)} ${f(r.p99, 3).padStart(8)}   ${r.batches ?? '-'}`);
    const probe = results.engineWhileSearching.probe;
    console.log(`searches during indexing (one every 20 ms, ${probe.searches} of them): p99 ${f(probe.p99)} ms, max ${f(probe.max)} ms, while indexing at ${f(results.engineWhileSearching.docsPerSec)} docs/s`);
    console.log(`then 5 batches of ${SMALL_BATCH} new documents each: engine ${f(us.smallDocsPerSec)} docs/s, minisearch ${f(them.smallDocsPerSec)} docs/s (${f(us.smallDocsPerSec / them.smallDocsPerSec, 2)}x)`);
    console.log(`engine / minisearch: indexing ${f(us.docsPerSec / them.docsPerSec, 2)}x, peak RssAnon ${f(us.peakAnonMiB / them.peakAnonMiB, 2)}x (inside a memory limit: bench/cgroup.bench.mjs)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const i = process.argv.indexOf('--peer');
if (i >= 0) await child(process.argv[i + 1], process.argv[i + 2]);
else main();
