/**
 * Indexing throughput and peak memory on ../shared/data/movies.json: our engine (the JSON payload
 * as `search serve` receives it, through the task queue to the committed LMDB transaction) against
 * MiniSearch indexing the same documents in memory, every field searchable and stored as ours. Each peer runs in its own process so that its
 * peak RSS is its own. Reported: documents/s, peak RSS, and our figures as ratios to MiniSearch.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DATA = '../shared/data/movies.json';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

async function runEngine(raw) {
  const { Engine } = await import('../dist/src/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'bench-indexing-'));
  const engine = await Engine.open({ dbPath: join(dir, 'data.ms'), logLevel: 'off' });
  try {
    const start = performance.now();
    const task = await engine.addDocuments('movies', { format: 'json', data: raw }, { primaryKey: 'id', method: 'replace' });
    const done = await engine.waitForTask(task.taskUid, { timeoutMs: 600_000 });
    const ms = performance.now() - start;
    if (done.status !== 'succeeded') throw new Error(`indexing failed: ${JSON.stringify(done.error)}`);
    return { ms, count: engine.indexStats('movies').numberOfDocuments };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runMiniSearch(raw) {
  const { default: MiniSearch } = await import('minisearch');
  const start = performance.now();
  const docs = JSON.parse(raw.toString('utf8'));
  // The same work as ours: every field searchable (our default `searchableAttributes: ["*"]`)
  // and every field stored.
  const fields = [...new Set(docs.flatMap((doc) => Object.keys(doc)))];
  const index = new MiniSearch({ fields, storeFields: fields, extractField: (doc, field) => {
    const value = doc[field];
    return Array.isArray(value) ? value.join(' ') : value === undefined ? undefined : String(value);
  } });
  index.addAll(docs);
  return { ms: performance.now() - start, count: index.documentCount };
}

/** Child mode: index once with one peer and print the measurement as JSON. */
async function child(peer) {
  const raw = readFileSync(DATA);
  const result = peer === 'engine' ? await runEngine(raw) : await runMiniSearch(raw);
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify({ ...result, peakRssMiB }));
}

function measure(peer) {
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) {
    const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--peer', peer], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (out.status !== 0) throw new Error(`${peer} run failed:\n${out.stderr}`);
    runs.push(JSON.parse(out.stdout));
  }
  runs.sort((a, b) => a.ms - b.ms);
  const median = runs[Math.floor(runs.length / 2)];
  return { ...median, docsPerSec: median.count / (median.ms / 1000), peakRssMiB: Math.max(...runs.map((r) => r.peakRssMiB)) };
}

const peerArg = process.argv.indexOf('--peer');
if (peerArg !== -1) {
  await child(process.argv[peerArg + 1]);
} else {
  const ours = measure('engine');
  const peer = measure('minisearch');
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  console.log(`movies.json: ${ours.count} documents, median of ${ROUNDS} runs, one process per run`);
  console.log('| peer | documents/s | time | peak RSS |');
  console.log('|---|---|---|---|');
  console.log(`| search (engine, JSON payload → committed) | ${fmt(ours.docsPerSec)} | ${(ours.ms / 1000).toFixed(2)} s | ${fmt(ours.peakRssMiB)} MiB |`);
  console.log(`| MiniSearch (in memory) | ${fmt(peer.docsPerSec)} | ${(peer.ms / 1000).toFixed(2)} s | ${fmt(peer.peakRssMiB)} MiB |`);
  console.log(`ratio search/MiniSearch: throughput ${(ours.docsPerSec / peer.docsPerSec).toFixed(2)}x, peak RSS ${(ours.peakRssMiB / peer.peakRssMiB).toFixed(2)}x`);
  if (ours.count !== peer.count) throw new Error(`document counts differ: ${ours.count} vs ${peer.count}`);
}
