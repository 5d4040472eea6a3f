/**
 * The write thread is killed (SIGKILL of the process) while it holds a batch's write transaction
 * open: during that time the serving thread still answers searches from the last commit, and
 * after a restart every acknowledged task completes and every document is there, once.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { json, killAll, serve, waitTask } from './serve-process.js';
import { movies } from '../data.js';

interface Movie {
  id: number;
  title: string;
}
const MOVIES: Movie[] = movies().slice(0, 3000);

afterEach(killAll);

test('a SIGKILL while the write thread is inside a commit loses no acknowledged task; searches answer meanwhile', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-commit-crash-'));
  const db = join(dir, 'data.ms');
  const marker = join(dir, 'in-commit');
  const args = ['--db-path', db, '--log-level', 'off'];
  const env = { PATH: process.env.PATH ?? '' };

  // a first index, committed before the hook is armed
  const first = await serve(args, env);
  const seeded = await json(`${first.url}/indexes/probe/documents?primaryKey=id`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(MOVIES.slice(0, 500)),
  });
  expect((await waitTask(first.url, seeded.body.taskUid)).status).toBe('succeeded');
  first.process.kill('SIGTERM');
  await first.process;

  // every document batch now holds its write transaction open for 60 s
  const held = await serve(args, { ...env, SEARCH_TEST_HOLD_WRITE_MS: '60000', SEARCH_TEST_HOLD_WRITE_MARKER: marker });
  const acknowledged: number[] = [];
  for (let i = 0; i < 3; i++) {
    const reply = await json(`${held.url}/indexes/movies/documents?primaryKey=id`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(MOVIES.slice(i * 1000, (i + 1) * 1000)),
    });
    expect(reply.status).toBe(202);
    acknowledged.push(reply.body.taskUid);
  }
  const deadline = Date.now() + 60_000;
  while (!existsSync(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(existsSync(marker)).toBe(true);

  // the write transaction is open in the write thread: reads are served from the last commit
  const started = Date.now();
  const search = await json(`${held.url}/indexes/probe/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ q: MOVIES[0]!.title }),
  });
  expect(search.status).toBe(200);
  expect(search.body.hits.length).toBeGreaterThan(0);
  expect(Date.now() - started).toBeLessThan(5_000);
  const health = await json(`${held.url}/health`);
  expect(health.body).toEqual({ status: 'available' });
  const during = await json(`${held.url}/tasks/${acknowledged[0]}`);
  expect(during.body.status).toBe('processing');

  held.process.kill('SIGKILL');
  expect((await held.process).signal).toBe('SIGKILL');

  const restarted = await serve(args, env);
  try {
    for (const uid of acknowledged) expect((await waitTask(restarted.url, uid)).status).toBe('succeeded');
    const stats = await json(`${restarted.url}/indexes/movies/stats`);
    expect(stats.body.numberOfDocuments).toBe(3000);
    const probe = await json(`${restarted.url}/indexes/probe/stats`);
    expect(probe.body.numberOfDocuments).toBe(500);
    for (const movie of [MOVIES[0]!, MOVIES[1500]!, MOVIES[2999]!]) {
      expect((await json(`${restarted.url}/indexes/movies/documents/${movie.id}`)).body).toEqual(movie);
    }
  } finally {
    restarted.process.kill('SIGTERM');
    await restarted.process;
  }
}, 240_000);
