import { Engine } from '../../dist/src/engine/engine.js';
import { planNextBatch } from '../../dist/src/engine/tasks/autobatcher.js';
import { mkdtempSync } from 'node:fs';
for (const n of [1000, 20000, 100000]) {
  const engine = await Engine.open({ dbPath: mkdtempSync('/tmp/q/plan-'), logLevel: 'off', writer: 'inline', autoProcess: false });
  const store = engine.tasks;
  for (let from = 0; from < n; from += 5000) store.write(() => { for (let i = from; i < Math.min(n, from + 5000); i++) store.insert({ batchUid: null, indexUid: `q${i%10}`, status: 'enqueued', type: Math.floor(i/10)%2 ? 'settingsUpdate' : 'documentAdditionOrUpdate', canceledBy: null, error: null, duration: null, details: {}, enqueuedAt: new Date().toISOString(), startedAt: null, finishedAt: null, payload: { kind: 'settings', patch: {}, allowIndexCreation: true } }); });
  let t = performance.now();
  for (let k = 0; k < 200; k++) planNextBatch(store, 1e9, () => 1);
  const plan = (performance.now() - t) / 200;
  // a batch's task writes: mark processing then finished
  t = performance.now();
  for (let k = 0; k < 200; k++) { const p = planNextBatch(store, 1e9, () => 1); const b = store.newBatchUid ? null : null; store.write(() => { for (const task of p.tasks) store.update({ ...task, status: 'processing', startedAt: new Date().toISOString() }); }); store.write(() => { for (const task of p.tasks) store.update({ ...task, status: 'succeeded', finishedAt: new Date().toISOString() }); }); }
  const batch = (performance.now() - t) / 200;
  console.log(n, 'plan', plan.toFixed(3), 'ms; plan+2 writes', batch.toFixed(3), 'ms');
  await engine.close();
}
