import { Engine } from '../../dist/src/engine/engine.js';
import { mkdtempSync } from 'node:fs';
const engine = await Engine.open({ dbPath: mkdtempSync('/tmp/q/wake-'), logLevel: 'off' });
for (let i = 0; i < 12; i++) {
  const t = performance.now();
  const s = await engine.addDocuments(['a','b','c'][i%3], [{ id: i }]);
  await engine.waitForTask(s.taskUid, { timeoutMs: 120000 });
  console.log(i, (performance.now() - t).toFixed(0), 'ms');
}
await engine.close();
