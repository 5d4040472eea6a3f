/**
 * Dynamic search rules at search time, through the public Engine API on ../shared/data/movies.json
 * (first 10,000 films): the CPU time of keyword searches with a pin rule, a scale rule (filter),
 * and two overlapping scale rules, each as a ratio to the same searches without rules (the peer,
 * measured in the same run). Then `POST /tasks/compact`'s engine side on a queue of 1,500 tasks of
 * which 1,350 were deleted: sizes before and after, and the CPU time of the copy's worker thread.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';

const DATA = '../shared/data/movies.json';
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const { Engine } = await import('../dist/src/engine/engine.js');

const films = JSON.parse(readFileSync(DATA, 'utf8')).slice(0, 10_000);
const dir = mkdtempSync(join(tmpdir(), 'bench-rules-'));
const engine = await Engine.open({ dbPath: join(dir, 'data.ms'), logLevel: 'off', writer: 'inline' });
const wait = async (task) => {
  const done = await engine.waitForTask(task.taskUid, { timeoutMs: 600_000 });
  if (done.status !== 'succeeded') throw new Error(JSON.stringify(done.error));
};
await wait(await engine.updateSettings('movies', { filterableAttributes: ['genres', 'year'] }));
await wait(await engine.addDocuments('movies', films, { primaryKey: 'id', method: 'replace' }));
engine.updateExperimentalFeatures({ dynamicSearchRules: true });

const QUERIES = ['the', 'love', 'war', 'star', 'man', 'night', 'dead', 'king', 'girl', 'city'];
async function searches() {
  let ms = 0;
  for (let r = 0; r < RUNS; r++)
    for (const q of QUERIES) {
      const start = process.cpuUsage();
      await engine.search('movies', { q, limit: 20 });
      const used = process.cpuUsage(start);
      ms += (used.user + used.system) / 1000;
    }
  return ms;
}
await searches(); // warm up
await searches();
const peer = await searches();
const rows = [['no rules (peer)', peer]];
await wait(await engine.updateSearchRule('pin', { actions: { pin: [{ id: String(films[9_999].id), position: 0 }] } }));
rows.push(['one pin', await searches()]);
await wait(await engine.deleteSearchRule('pin'));
await wait(await engine.updateSearchRule('scale', { actions: { scale: [{ filter: 'genres = Drama', weight: 2 }] } }));
rows.push(['scale by filter (Drama x2)', await searches()]);
await wait(await engine.updateSearchRule('scale2', { actions: { scale: [{ filter: 'year > 2000', weight: 0.5 }] } }));
rows.push(['two overlapping scales', await searches()]);
await wait(await engine.clearSearchRules());
rows.push(['no rules again (noise)', await searches()]);

console.log(`search rules, ${films.length} films, ${QUERIES.length * RUNS} keyword searches each, load average ${loadavg()[0].toFixed(2)}`);
for (const [name, ms] of rows) console.log(`  ${name.padEnd(28)} ${ms.toFixed(0).padStart(6)} ms CPU  ${(ms / peer).toFixed(2)}x`);
await engine.close();
rmSync(dir, { recursive: true, force: true });

// --- task queue compaction ------------------------------------------------------------------------
const qdir = mkdtempSync(join(tmpdir(), 'bench-taskq-'));
const queue = await Engine.open({ dbPath: join(qdir, 'data.ms'), logLevel: 'off', writer: 'inline' });
let last;
for (let i = 0; i < 1_500; i++) last = await queue.addDocuments('q', [{ id: i, title: `film ${i}` }], { primaryKey: 'id', method: 'replace' });
await queue.waitForTask(last.taskUid, { timeoutMs: 600_000 });
const deletion = await queue.deleteTasks({ uids: Array.from({ length: 1_350 }, (_, i) => i) });
await queue.waitForTask(deletion.taskUid, { timeoutMs: 600_000 });
queue.updateExperimentalFeatures({ taskQueueCompactionRoute: true });
const wall = performance.now();
const { preSize, postSize } = await queue.compactTaskQueue();
const elapsed = performance.now() - wall;
console.log(
  `task queue compaction: ${(preSize / 1024).toFixed(0)} KiB -> ${(postSize / 1024).toFixed(0)} KiB (${(postSize / preSize).toFixed(2)}x), ${elapsed.toFixed(0)} ms wall in its worker thread, load average ${loadavg()[0].toFixed(2)}`,
);
await queue.close();
rmSync(qdir, { recursive: true, force: true });
