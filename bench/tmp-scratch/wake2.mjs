import { Engine } from '../../dist/src/engine/engine.js';
import { mkdtempSync } from 'node:fs';
const engine = await Engine.open({ dbPath: mkdtempSync('/tmp/q/wake-'), logLevel: 'off' });
let t = performance.now();
const lap = (what) => { console.log(what, (performance.now() - t).toFixed(0), 'ms'); t = performance.now(); };
for (let i = 0; i < 60; i++) await engine.addDocuments(['a','b','c'][i%3], [{ id: i }]);
lap('60 adds');
const c = await engine.cancelTasks({ indexUids: ['b'], statuses: ['enqueued'] });
lap('cancel enqueued');
await engine.waitForTask(c.taskUid, { timeoutMs: 120000 });
lap('cancel done');
for (const x of ['a','b','c']) { await engine.waitForTask((await engine.addDocuments(x, [{ id: 'last' }])).taskUid, { timeoutMs: 120000 }); lap('last ' + x); }
await engine.close();
