/**
 * Indexing yields the CPU to searches (src/engine/indexing-priority.ts): on Linux the write thread
 * (or every thread of the write process) and the intake thread run `SEARCH_INDEXING_NICE` steps
 * (default 10) below the threads that answer searches. Read from /proc in a program of its own,
 * so that the threads counted are that engine's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { DEFAULT_INDEXING_NICE, indexingNice } from '../../src/engine/indexing-priority.js';

const ENGINE = fileURLToPath(new URL('../../dist/src/index.js', import.meta.url));

/** Indexes a JSON payload (intake thread, write side), searches, then prints the nice value of every thread it and its children run. */
const PROGRAM = `
const { Engine } = await import(process.argv[1]);
const { readdirSync, readFileSync } = await import('node:fs');
const nice = (pid, tid) => {
  const stat = readFileSync('/proc/' + pid + '/task/' + tid + '/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]);
};
const threads = (pid) => readdirSync('/proc/' + pid + '/task').map((tid) => nice(pid, tid));
const engine = await Engine.open({ dbPath: process.argv[2], searchThreads: 1, logLevel: 'off' });
const docs = [{ id: 1, title: 'Star Wars' }, { id: 2, title: 'Alien' }];
const task = await engine.addDocuments('movies', { format: 'json', data: Buffer.from(JSON.stringify(docs)) }, { primaryKey: 'id' });
const done = await engine.waitForTask(task.taskUid);
const answer = JSON.parse((await engine.answer({ kind: 'search', uid: 'movies', body: { q: 'star' } })).toString());
const children = readdirSync('/proc/self/task').flatMap((tid) => readFileSync('/proc/self/task/' + tid + '/children', 'utf8').split(' ').filter(Boolean));
console.log(JSON.stringify({
  status: done.status,
  hits: answer.hits.map((hit) => hit.id),
  main: nice(process.pid, process.pid),
  own: threads(process.pid),
  children: children.map((pid) => threads(pid)),
}));
await engine.close();
`;

interface Threads {
  status: string;
  hits: number[];
  main: number;
  own: number[];
  children: number[][];
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function run(env: Record<string, string>): Promise<Threads> {
  const dir = mkdtempSync(join(tmpdir(), 'indexing-priority-'));
  dirs.push(dir);
  const { stdout } = await execa(process.execPath, ['--input-type=module', '-e', PROGRAM, ENGINE, join(dir, 'db')], { env, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Threads;
}

describe.runIf(process.platform === 'linux')('indexing runs below searches', () => {
  test('a write thread: it runs 10 steps lower, the thread answering searches does not', async () => {
    const out = await run({ SEARCH_WRITE_PROCESS: 'off' });
    expect(out).toMatchObject({ status: 'succeeded', hits: [1] });
    const lowered = Math.min(19, out.main + DEFAULT_INDEXING_NICE);
    expect(out.own.filter((nice) => nice === lowered).length).toBeGreaterThanOrEqual(1);
    // the write thread and the intake thread at most (its V8 and libuv threads and the search thread stay)
    expect(out.own.filter((nice) => nice === out.main).length).toBeGreaterThan(out.own.length / 2);
    expect(out.children).toEqual([]);
  });

  test('a write process: every thread of it runs lower', async () => {
    const out = await run({ SEARCH_WRITE_PROCESS: 'on', SEARCH_INDEXING_NICE: '5' });
    expect(out).toMatchObject({ status: 'succeeded', hits: [1] });
    expect(out.children).toHaveLength(1);
    const child = out.children[0]!;
    expect(child.length).toBeGreaterThan(1);
    expect(new Set(child)).toEqual(new Set([Math.min(19, out.main + 5)]));
  });

  test('SEARCH_INDEXING_NICE=0 leaves every thread equal', async () => {
    const out = await run({ SEARCH_WRITE_PROCESS: 'off', SEARCH_INDEXING_NICE: '0' });
    expect(out).toMatchObject({ status: 'succeeded', hits: [1] });
    expect(new Set(out.own)).toEqual(new Set([out.main]));
  });

  test('a value that is not 0-19 stops the engine from opening, with the variable named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'indexing-priority-'));
    dirs.push(dir);
    const failed = await execa(process.execPath, ['--input-type=module', '-e', PROGRAM, ENGINE, join(dir, 'db')], { env: { SEARCH_INDEXING_NICE: 'low' }, reject: false, timeout: 60_000 });
    expect(failed.exitCode).not.toBe(0);
    expect(failed.stderr).toContain('`SEARCH_INDEXING_NICE` must be an integer from 0 to 19, not `low`.');
  });
});

test('indexingNice reads the steps, 10 when unset', () => {
  expect(indexingNice(undefined)).toBe(10);
  expect(indexingNice(' ')).toBe(10);
  expect(indexingNice('0')).toBe(0);
  expect(indexingNice('19')).toBe(19);
  for (const bad of ['20', '-1', '2.5', 'ten']) expect(() => indexingNice(bad)).toThrow(/SEARCH_INDEXING_NICE/);
});
