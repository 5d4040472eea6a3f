/**
 * Programs started with per-process node options (`node --max-old-space-size=4096 app.js`, a V8
 * flag such as `--trace-gc`) still get every worker the engine starts: node refuses such options
 * in a worker's `execArgv` with an error, and the engine hands its workers the process's options
 * (src/engine/worker-script.ts, `startWorker`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { expect, test } from 'vitest';

const ENGINE = fileURLToPath(new URL('../../dist/src/index.js', import.meta.url));

/** Indexes two documents through the write side and the intake thread, then searches in a search thread. */
const PROGRAM = `
const { Engine } = await import(process.argv[1]);
const engine = await Engine.open({ dbPath: process.argv[2], searchThreads: 1, logLevel: 'off' });
const task = await engine.addDocuments('movies', [{ id: 1, title: 'Star Wars' }, { id: 2, title: 'Alien' }], { primaryKey: 'id' });
const done = await engine.waitForTask(task.taskUid);
const answer = JSON.parse((await engine.answer({ kind: 'search', uid: 'movies', body: { q: 'star' } })).toString());
console.log(JSON.stringify({ status: done.status, hits: answer.hits.map((hit) => hit.id) }));
await engine.close();
`;

test.each([['--max-old-space-size=512'], ['--stack-size=984', '--expose-gc']])('an Engine program run with %s indexes and searches', async (...options) => {
  const dir = mkdtempSync(join(tmpdir(), 'node-options-'));
  try {
    for (const writeProcess of ['off', 'on']) {
      const { stdout } = await execa(process.execPath, [...options, '--input-type=module', '-e', PROGRAM, ENGINE, join(dir, writeProcess)], {
        env: { SEARCH_WRITE_PROCESS: writeProcess },
        timeout: 60_000,
      });
      expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ status: 'succeeded', hits: [1] });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
