/**
 * Diagnostic (not a bench section: no `.bench.` in its name): the as-typed keystrokes of
 * served.bench.mjs's T, over HTTP, one at a time, right after the movies were indexed (as T), then
 * `PASSES` more times; prints each pass's p50/p99/max, the server's CPU per keystroke by thread, and
 * the slowest keystrokes of each pass with their response sizes. Node flags for the server in
 * TIMELINE_NODE_ARGS (e.g. `--trace-gc`); the server's output goes to TIMELINE_LOG when set.
 *
 *   node bench/typed-timeline.mjs [dbDirToReuse]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedDataDir, generatedPayloads } from './generated-docs.mjs';
import { makeQueries, typedQueries } from './typed-queries.mjs';
import { servingPid } from './serving-process.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const PASSES = Number(process.env.PASSES ?? 2);
const BIG = process.env.TIMELINE_200K === '1';
const JSON_TYPE = { 'content-type': 'application/json' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (s, p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];

const port = await new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const dir = mkdtempSync(join(tmpdir(), 'typed-timeline-'));
const out = openSync(process.env.TIMELINE_LOG ?? '/dev/null', 'w');
const nodeArgs = (process.env.TIMELINE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(SEARCH|MEILI)_/.test(k)));
// V8 flags reach the worker threads through NODE_OPTIONS only (a worker refuses them in execArgv)
if (nodeArgs.length) env.NODE_OPTIONS = [env.NODE_OPTIONS ?? '', ...nodeArgs].join(' ').trim();
const child = spawn(process.execPath, [join(root, 'bin/run.js'), 'serve', '--db-path', join(dir, 'data.ms'), '--http-addr', `127.0.0.1:${port}`], { cwd: dir, env, stdio: ['ignore', out, out] });
process.on('exit', () => {
  child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
const url = `http://127.0.0.1:${port}`;
child.on('exit', (code) => {
  console.error(`the server exited (${code})`);
  process.exit(1);
});
for (;;) {
  try {
    if ((await fetch(`${url}/health`)).ok) break;
  } catch {}
  await sleep(100);
}
const serving = servingPid(child.pid);
async function req(path, method = 'GET', body, headers = JSON_TYPE) {
  const res = await fetch(url + path, { method, body, headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return text;
}
async function wait(uid) {
  for (;;) {
    const t = JSON.parse(await req(`/tasks/${uid}`));
    if (t.status === 'succeeded') return;
    if (t.status === 'failed') throw new Error(JSON.stringify(t.error));
    await sleep(50);
  }
}
let docs;
const payloads = [];
if (BIG) {
  docs = [];
  for (const payload of generatedPayloads(200_000, 20_000)) {
    payloads.push(Buffer.from(payload));
    for (const line of payload.split('\n')) if (line) docs.push(JSON.parse(line));
  }
} else {
  docs = JSON.parse(readFileSync(join(sharedDataDir(), 'movies.json'), 'utf8'));
  const size = Math.ceil(docs.length / 4);
  for (let i = 0; i < 4; i++) payloads.push(Buffer.from(JSON.stringify(docs.slice(i * size, (i + 1) * size))));
}
await wait(JSON.parse(await req('/indexes/typed/settings', 'PATCH', JSON.stringify({ searchableAttributes: ['title', 'cast', 'genres', 'extract'] }))).taskUid);
const t0 = performance.now();
const uids = [];
for (const p of payloads) uids.push(JSON.parse(await req('/indexes/typed/documents?primaryKey=id', 'POST', p, { 'content-type': BIG ? 'application/x-ndjson' : 'application/json' })).taskUid);
for (const u of uids) await wait(u);
console.log(`indexed in ${((performance.now() - t0) / 1000).toFixed(1)} s; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

const queries = typedQueries(makeQueries(docs));
const send = (q) => req('/indexes/typed/search', 'POST', JSON.stringify({ q, limit: 20 }));
function cpu() {
  const tasks = {};
  for (const tid of readdirSync(`/proc/${serving}/task`)) {
    try {
      const stat = readFileSync(`/proc/${serving}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      tasks[`${tid} ${name}`] = (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {}
  }
  return tasks;
}
const records = [];
const firstAnswers = new Map();
for (const q of queries.slice(0, 40)) await send(q);
for (let pass = 0; pass <= PASSES; pass++) {
  const before = cpu();
  const times = [];
  for (const q of queries) {
    const t = performance.now();
    const text = await send(q);
    const t1 = performance.now();
    // the same keystroke answers the same in every pass (apart from the time it took)
    const stable = text.replace(/"processingTimeMs":\d+/, '');
    if (!firstAnswers.has(q)) firstAnswers.set(q, stable);
    else if (firstAnswers.get(q) !== stable) console.log(`  pass ${pass}: ${JSON.stringify(q)} answered differently: ${text.length} B, first ${firstAnswers.get(q).length} B: ${text.slice(0, 300)}`);
    times.push({ q, ms: t1 - t, bytes: text.length });
    records.push({ pass, q, send: performance.timeOrigin + t, recv: performance.timeOrigin + t1 });
  }
  const after = cpu();
  const per = Object.entries(after)
    .map(([k, v]) => [k.split(' ')[0], v - (before[k] ?? 0)])
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([tid, v]) => `${Number(tid) === serving ? 'main' : tid} ${((v * 1000) / queries.length).toFixed(0)}`)
    .join(', ');
  const sorted = times.map((t) => t.ms).sort((a, b) => a - b);
  console.log(`pass ${pass}: p50 ${pct(sorted, 0.5).toFixed(2)} p99 ${pct(sorted, 0.99).toFixed(2)} max ${sorted.at(-1).toFixed(1)} ms; load ${loadavg()[0].toFixed(1)}; CPU µs/keystroke: ${per}`);
  console.log('  worst: ' + [...times].sort((a, b) => b.ms - a.ms).slice(0, 10).map((t) => `${JSON.stringify(t.q)} ${t.ms.toFixed(1)} (${t.bytes} B)`).join(', '));
}
const status = readFileSync(`/proc/${serving}/status`, 'utf8');
console.log(status.split('\n').filter((l) => /^(VmRSS|RssAnon|VmHWM)/.test(l)).join('; ').replace(/\s+/g, ' '));
if (process.env.TIMELINE_OUT) writeFileSync(process.env.TIMELINE_OUT, JSON.stringify(records));
child.removeAllListeners('exit');
child.kill('SIGTERM');
await sleep(500);
process.exit(0);
