/**
 * Indexing throughput and peak memory on ../shared/data/movies.json through the public `Engine`
 * API: the JSON payloads as `search serve` receives them (parsed in the intake thread, processed
 * in the write thread, to the committed LMDB transaction), all enqueued at once, timed until the
 * last task succeeded; against MiniSearch indexing the same documents in memory with `addAll`
 * on the same chunks, every field searchable and stored as ours. Payload sizes: 1,000 and
 * 10,000 documents, and the whole file (`BENCH_BATCHES=1000,10000,all`). Each peer runs in its
 * own process so that its peak memory is its own: peak RSS, and peak anonymous memory (RssAnon,
 * what the process really holds; the rest is page cache the kernel can take back).
 * `SEARCH_PARALLEL_EXTRACTION=1` measures keyword extraction on two threads (off by default, see
 * bench/README.md).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DATA = '../shared/data/movies.json';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCHES = (process.env.BENCH_BATCHES ?? '1000,10000,all').split(',');

function chunks(docs, batch) {
  const size = batch === 'all' ? docs.length : Number(batch);
  const out = [];
  for (let i = 0; i < docs.length; i += size) out.push(docs.slice(i, i + size));
  return out;
}

/** Peak RssAnon of this process, sampled every 20 ms (all threads). */
function sampleAnon() {
  let peak = 0;
  const read = () => {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) peak = Math.max(peak, Number(m[1]) / 1024);
  };
  const timer = setInterval(read, 20);
  return () => {
    clearInterval(timer);
    read();
    return peak;
  };
}

async function runEngine(payloads) {
  const { Engine } = await import('../dist/src/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'bench-indexing-'));
  // BENCH_MAX_INDEXING_MEMORY (bytes) overrides the default budget, e.g. to measure without its 256 MiB cap
  const maxIndexingMemory = Number(process.env.BENCH_MAX_INDEXING_MEMORY ?? 0) || undefined;
  const engine = await Engine.open({ dbPath: join(dir, 'data.ms'), logLevel: 'off', maxIndexingMemory });
  try {
    const start = performance.now();
    let task;
    for (const data of payloads) task = await engine.addDocuments('movies', { format: 'json', data }, { primaryKey: 'id', method: 'replace' });
    const done = await engine.waitForTask(task.taskUid, { timeoutMs: 600_000 });
    const ms = performance.now() - start;
    if (done.status !== 'succeeded') throw new Error(`indexing failed: ${JSON.stringify(done.error)}`);
    return { ms, count: engine.indexStats('movies').numberOfDocuments };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runMiniSearch(payloads) {
  const { default: MiniSearch } = await import('minisearch');
  const start = performance.now();
  const parsed = payloads.map((raw) => JSON.parse(raw.toString('utf8')));
  const docs = parsed.flat();
  // The same work as ours: every field searchable (our default `searchableAttributes: ["*"]`)
  // and every field stored.
  const fields = [...new Set(docs.flatMap((doc) => Object.keys(doc)))];
  const index = new MiniSearch({ fields, storeFields: fields, extractField: (doc, field) => {
    const value = doc[field];
    return Array.isArray(value) ? value.join(' ') : value === undefined ? undefined : String(value);
  } });
  for (const chunk of parsed) index.addAll(chunk);
  return { ms: performance.now() - start, count: index.documentCount };
}

/** Child mode: index once with one peer and print the measurement as JSON. */
async function child(peer, batch) {
  const payloads = chunks(JSON.parse(readFileSync(DATA, 'utf8')), batch).map((docs) => Buffer.from(JSON.stringify(docs)));
  const anon = sampleAnon();
  // CPU of every thread of the process (getrusage), steadier than wall time on a shared machine
  const cpu0 = process.cpuUsage();
  const result = peer === 'engine' ? await runEngine(payloads) : await runMiniSearch(payloads);
  const cpu = process.cpuUsage(cpu0);
  result.cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify({ ...result, peakRssMiB, peakAnonMiB: anon() }));
}

function measure(peer, batch) {
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) {
    const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--peer', peer, '--batch', batch], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (out.status !== 0) throw new Error(`${peer} run failed:\n${out.stderr}`);
    runs.push(JSON.parse(out.stdout));
  }
  runs.sort((a, b) => a.ms - b.ms);
  const median = runs[Math.floor(runs.length / 2)];
  return {
    ...median,
    docsPerSec: median.count / (median.ms / 1000),
    peakRssMiB: Math.max(...runs.map((r) => r.peakRssMiB)),
    peakAnonMiB: Math.max(...runs.map((r) => r.peakAnonMiB)),
  };
}

const peerArg = process.argv.indexOf('--peer');
if (peerArg !== -1) {
  await child(process.argv[peerArg + 1], process.argv[process.argv.indexOf('--batch') + 1]);
} else {
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  console.log(`movies.json through the Engine API, median of ${ROUNDS} runs per peer and payload size, one process per run`);
  console.log(`load average at start: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.log('| payload | peer | documents/s | time | CPU | peak RSS | peak anonymous |');
  console.log('|---|---|---|---|---|---|---|');
  for (const batch of BATCHES) {
    const ours = measure('engine', batch);
    const peer = measure('minisearch', batch);
    const label = batch === 'all' ? 'whole file' : `${batch} docs`;
    console.log(`| ${label} | search (JSON payloads → committed) | ${fmt(ours.docsPerSec)} | ${(ours.ms / 1000).toFixed(2)} s | ${ours.cpuSeconds.toFixed(1)} s | ${fmt(ours.peakRssMiB)} MiB | ${fmt(ours.peakAnonMiB)} MiB |`);
    console.log(`| ${label} | MiniSearch addAll (in memory) | ${fmt(peer.docsPerSec)} | ${(peer.ms / 1000).toFixed(2)} s | ${peer.cpuSeconds.toFixed(1)} s | ${fmt(peer.peakRssMiB)} MiB | ${fmt(peer.peakAnonMiB)} MiB |`);
    console.log(`| ${label} | ratio | ${(ours.docsPerSec / peer.docsPerSec).toFixed(2)}x | | ${(ours.cpuSeconds / peer.cpuSeconds).toFixed(2)}x | ${(ours.peakRssMiB / peer.peakRssMiB).toFixed(2)}x | ${(ours.peakAnonMiB / peer.peakAnonMiB).toFixed(2)}x |`);
    console.log(`load average after ${label}: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    if (ours.count !== peer.count) throw new Error(`document counts differ: ${ours.count} vs ${peer.count}`);
  }
}
