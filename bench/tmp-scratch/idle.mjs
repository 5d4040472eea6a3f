import { execa } from 'execa';
import { readFileSync, rmSync } from 'node:fs';
const root = process.argv[2]; const n = Number(process.argv[3] ?? 3000);
const db = '/tmp/q/idle-db'; rmSync(db, { recursive: true, force: true });
const port = 7790 + Math.floor(Math.random()*100);
const proc = execa('node', [`${root}/bin/run.js`, 'serve', '--db-path', db, '--http-addr', `127.0.0.1:${port}`, '--log-level', 'WARN'], { stdio: 'inherit', reject: false });
const url = `http://127.0.0.1:${port}`;
for (;;) { try { await fetch(`${url}/health`); break; } catch { await new Promise(r => setTimeout(r, 200)); } }
const cpu = () => { const f = readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) / 100; };
let t = performance.now();
let last;
for (let i = 0; i < n; i++) { const r = await fetch(`${url}/indexes/i${i%3}/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ id: i, title: `doc ${i}` }]) }); last = (await r.json()).taskUid; }
console.log(`enqueued ${n} in ${((performance.now()-t)/1000).toFixed(1)}s`);
for (;;) { const r = await (await fetch(`${url}/tasks?statuses=enqueued,processing&limit=1`)).json(); if (r.total === 0) break; await new Promise(r => setTimeout(r, 500)); }
console.log(`drained after ${((performance.now()-t)/1000).toFixed(1)}s`);
for (let k = 0; k < 4; k++) { const c0 = cpu(); await new Promise(r => setTimeout(r, 5000)); console.log(`idle cpu over 5s: ${((cpu()-c0)/5*100).toFixed(1)}%`); }
proc.kill('SIGTERM'); await proc;
