/**
 * The write side as a child process (`SEARCH_WRITE_PROCESS=on`; the default under a memory limit
 * below 4 GiB, see src/engine/tasks/write-host.ts): searches answer while it writes, it never
 * outlives the server, a second server cannot open the directory while it lives, and killing it
 * or the server inside a commit loses no acknowledged task.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { execa } from 'execa';
import { BIN, json, killAll, serve, waitTask } from './serve-process.js';
import { movies } from '../data.js';
import { servingPid, writeProcessPids } from '../write-processes.js';

const MOVIES = movies().slice(0, 2000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(killAll);

/** Whether `pid` still runs (a zombie waiting for its reaper does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function waitUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) return false;
    await sleep(20);
  }
  return true;
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'search-write-process-'));
  const db = join(dir, 'data.ms');
  return { dir, db, marker: join(dir, 'in-commit'), args: ['--db-path', db, '--log-level', 'off'] };
}

const BASE_ENV = { PATH: process.env.PATH ?? '', SEARCH_WRITE_PROCESS: 'on' };

async function addMovies(url: string, index: string, movies: unknown[]): Promise<number> {
  const reply = await json(`${url}/indexes/${index}/documents?primaryKey=id`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(movies),
  });
  expect(reply.status).toBe(202);
  return reply.body.taskUid;
}

async function searchTitle(url: string, index: string, title: string) {
  return json(`${url}/indexes/${index}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q: title }) });
}

test('a SIGKILL of the server inside a commit ends its write process too; a new server then loses no acknowledged task', async () => {
  const { marker, args } = setup();
  const first = await serve(args, BASE_ENV);
  expect((await waitTask(first.url, await addMovies(first.url, 'probe', MOVIES.slice(0, 300)))).status).toBe('succeeded');
  first.process.kill('SIGTERM');
  await first.process;

  const held = await serve(args, { ...BASE_ENV, SEARCH_TEST_HOLD_WRITE_MS: '60000', SEARCH_TEST_HOLD_WRITE_MARKER: marker });
  const acknowledged = [await addMovies(held.url, 'movies', MOVIES.slice(0, 1000)), await addMovies(held.url, 'movies', MOVIES.slice(1000))];
  expect(await waitUntil(() => existsSync(marker), 60_000)).toBe(true);
  const writers = writeProcessPids(held.process.pid!);
  expect(writers).toHaveLength(1);

  // the write process holds its transaction open: the server answers from the last commit
  const search = await searchTitle(held.url, 'probe', MOVIES[0]!.title);
  expect(search.status).toBe(200);
  expect(search.body.hits.length).toBeGreaterThan(0);
  expect((await json(`${held.url}/tasks/${acknowledged[0]}`)).body.status).toBe('processing');

  held.process.kill('SIGKILL');
  await held.process;
  // started at once: it waits for the lock the write process holds, which its watchdog ends
  // although its main thread is blocked inside the transaction for a minute
  const restarted = await serve(args, { PATH: BASE_ENV.PATH, SEARCH_WRITE_PROCESS: 'on' });
  expect(running(writers[0]!)).toBe(false);
  for (const uid of acknowledged) expect((await waitTask(restarted.url, uid)).status).toBe('succeeded');
  expect((await json(`${restarted.url}/indexes/movies/stats`)).body.numberOfDocuments).toBe(MOVIES.length);
  expect((await json(`${restarted.url}/indexes/probe/stats`)).body.numberOfDocuments).toBe(300);
  for (const movie of [MOVIES[0]!, MOVIES[1999]!]) expect((await json(`${restarted.url}/indexes/movies/documents/${movie.id}`)).body).toEqual(movie);
}, 240_000);

test('a write process killed inside a commit is started again; the batch is done once and searches answer meanwhile', async () => {
  const { marker, args } = setup();
  // every batch holds its transaction 2 s: long enough to kill the process inside it
  const served = await serve(args, { ...BASE_ENV, SEARCH_TEST_HOLD_WRITE_MS: '2000', SEARCH_TEST_HOLD_WRITE_MARKER: marker });
  const uid = await addMovies(served.url, 'movies', MOVIES.slice(0, 500));
  expect(await waitUntil(() => existsSync(marker), 60_000)).toBe(true);
  const [writer] = writeProcessPids(served.process.pid!);
  expect(writer).toBeGreaterThan(0);
  process.kill(writer!, 'SIGKILL');
  expect(await waitUntil(() => !running(writer!), 5_000)).toBe(true);

  expect((await json(`${served.url}/health`)).body).toEqual({ status: 'available' });
  const task = await waitTask(served.url, uid);
  expect(task.status).toBe('succeeded');
  expect(task.details.indexedDocuments).toBe(500);
  expect((await json(`${served.url}/indexes/movies/stats`)).body.numberOfDocuments).toBe(500);
  expect((await searchTitle(served.url, 'movies', MOVIES[7]!.title)).body.hits.map((hit: { id: number }) => hit.id)).toContain(MOVIES[7]!.id);
  // another process does the work now
  const next = writeProcessPids(served.process.pid!);
  expect(next).toHaveLength(1);
  expect(next[0]).not.toBe(writer);
}, 240_000);

test('while a write process outlives its server, no other server opens the directory', async () => {
  const { marker, args } = setup();
  const held = await serve(args, { ...BASE_ENV, SEARCH_TEST_HOLD_WRITE_MS: '60000', SEARCH_TEST_HOLD_WRITE_MARKER: marker });
  await addMovies(held.url, 'movies', MOVIES.slice(0, 100));
  expect(await waitUntil(() => existsSync(marker), 60_000)).toBe(true);
  const [writer] = writeProcessPids(held.process.pid!);
  // stopped, its watchdog cannot end it: it outlives the server, holding the directory's lock
  const serving = servingPid(held.process.pid!);
  process.kill(writer!, 'SIGSTOP');
  try {
    held.process.kill('SIGKILL');
    // (not `await held.process`: the stopped child keeps the server's output pipes open); the
    // serving process, when the command ran itself again, ends as soon as it sees its parent gone
    expect(await waitUntil(() => !running(held.process.pid!) && !running(serving), 5_000)).toBe(true);
    const second = await execa('node', [BIN, 'serve', '--http-addr', '127.0.0.1:0', ...args], { env: { PATH: BASE_ENV.PATH }, extendEnv: false, reject: false, timeout: 60_000 });
    expect(second.exitCode).not.toBe(0);
    // the server's pid is in the lock file, but it is gone: the error says who holds the lock
    expect(`${second.stdout}\n${second.stderr}`.replace(/\s+›\s+/g, ' ')).toMatch(/still in use by the write process of a server that ended/);
  } finally {
    process.kill(writer!, 'SIGCONT');
  }
  // woken, it sees its server gone and ends; the directory opens again
  expect(await waitUntil(() => !running(writer!), 5_000)).toBe(true);
  await held.process;
  const again = await serve(args, { PATH: BASE_ENV.PATH });
  expect((await json(`${again.url}/health`)).body).toEqual({ status: 'available' });
}, 240_000);

test('a task whose batch ends the write process three times is failed, and the queue goes on', async () => {
  const { marker, args } = setup();
  // every batch holds its transaction 2.5 s; each time the marker appears, the write process is killed
  const served = await serve(args, { ...BASE_ENV, SEARCH_TEST_HOLD_WRITE_MS: '2500', SEARCH_TEST_HOLD_WRITE_MARKER: marker });
  const doomed = await addMovies(served.url, 'movies', MOVIES.slice(0, 200));
  for (let kill = 0; kill < 3; kill++) {
    expect(await waitUntil(() => existsSync(marker), 60_000)).toBe(true);
    const [writer] = writeProcessPids(served.process.pid!);
    rmSync(marker);
    process.kill(writer!, 'SIGKILL');
    expect(await waitUntil(() => !running(writer!), 5_000)).toBe(true);
  }
  const failed = await waitTask(served.url, doomed);
  expect(failed.status).toBe('failed');
  expect(failed.error.code).toBe('internal');
  expect(failed.error.message).toMatch(/ended 3 times while processing this task/);
  expect(existsSync(marker)).toBe(false); // failed without being processed a fourth time

  const next = await waitTask(served.url, await addMovies(served.url, 'movies', MOVIES.slice(200, 300)));
  expect(next.status).toBe('succeeded');
  expect((await json(`${served.url}/indexes/movies/stats`)).body.numberOfDocuments).toBe(100);
}, 240_000);
