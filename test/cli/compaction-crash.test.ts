/**
 * A SIGKILL in the middle of an index compaction (the compacted copy partly written) leaves the
 * index as it was: after a restart it answers with every document, the partial copy is gone, the
 * interrupted task runs again and succeeds, and the index takes writes.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { json, killAll, serve, waitTask } from './serve-process.js';
import { movies } from '../data.js';

const MOVIES = movies().slice(0, 2000);

afterEach(killAll);

test('a SIGKILL mid-compaction leaves the old environment usable and the compaction runs again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-compact-crash-'));
  const db = join(dir, 'data.ms');
  const marker = join(dir, 'in-compaction');
  const args = ['--db-path', db, '--log-level', 'off'];
  const env = { PATH: process.env.PATH ?? '' };
  const post = (url: string, body: unknown) => json(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  const first = await serve(args, env);
  const added = await post(`${first.url}/indexes/movies/documents?primaryKey=id`, MOVIES);
  expect((await waitTask(first.url, added.body.taskUid)).status).toBe('succeeded');
  first.process.kill('SIGTERM');
  await first.process;
  const before = readdirSync(join(db, 'indexes'));
  expect(before).toHaveLength(1);

  // the compaction now stops after copying its first database, long enough to be killed there
  const held = await serve(args, { ...env, SEARCH_TEST_HOLD_COMPACTION_MS: '60000', SEARCH_TEST_HOLD_COMPACTION_MARKER: marker });
  const compact = await json(`${held.url}/indexes/movies/compact`, { method: 'POST' });
  expect(compact.status).toBe(202);
  const deadline = Date.now() + 60_000;
  while (!existsSync(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(existsSync(marker)).toBe(true);
  // the partial copy sits beside the live environment, which still answers
  expect(readdirSync(join(db, 'indexes'))).toHaveLength(2);
  const during = await post(`${held.url}/indexes/movies/search`, { q: MOVIES[5]!.title });
  expect(during.body.hits[0]).toMatchObject({ id: MOVIES[5]!.id });
  held.process.kill('SIGKILL');
  expect((await held.process).signal).toBe('SIGKILL');

  const restarted = await serve(args, env);
  const stats = await json(`${restarted.url}/indexes/movies/stats`);
  expect(stats.body.numberOfDocuments).toBe(MOVIES.length);
  const task = await waitTask(restarted.url, compact.body.taskUid);
  expect(task).toMatchObject({ status: 'succeeded', type: 'indexCompaction' });
  const indexes = readdirSync(join(db, 'indexes'));
  expect(indexes).toHaveLength(1);
  expect(indexes[0]).not.toBe(before[0]);
  const search = await post(`${restarted.url}/indexes/movies/search`, { q: MOVIES[1999]!.title });
  expect(search.body.hits[0]).toMatchObject({ id: MOVIES[1999]!.id });
  const more = await post(`${restarted.url}/indexes/movies/documents`, [{ id: 'new-1', title: 'After the crash' }]);
  expect((await waitTask(restarted.url, more.body.taskUid)).status).toBe('succeeded');
  expect((await json(`${restarted.url}/indexes/movies/stats`)).body.numberOfDocuments).toBe(MOVIES.length + 1);
}, 240_000);
