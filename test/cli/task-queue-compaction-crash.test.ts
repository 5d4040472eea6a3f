/**
 * A SIGKILL while `POST /tasks/compact` writes its copy (held after the first database) leaves the
 * task queue as it was: after a restart every task is there, the partial copy is gone, and the
 * queue takes writes; compacting again and restarting puts the compacted queue in place.
 */
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { json, killAll, serve, waitTask } from './serve-process.js';

afterEach(killAll);

test('a SIGKILL mid-copy of the task queue loses nothing; a later compaction and restart apply', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-task-compact-crash-'));
  const db = join(dir, 'data.ms');
  const marker = join(dir, 'in-compaction');
  const args = ['--db-path', db, '--log-level', 'off'];
  const env = { PATH: process.env.PATH ?? '' };
  const send = (url: string, method: string, body?: unknown) =>
    json(url, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

  const held = await serve(args, { ...env, SEARCH_TEST_HOLD_COMPACTION_MS: '60000', SEARCH_TEST_HOLD_COMPACTION_MARKER: marker });
  expect((await send(`${held.url}/experimental-features`, 'PATCH', { taskQueueCompactionRoute: true })).status).toBe(200);
  let last = 0;
  for (let i = 0; i < 40; i++) last = (await send(`${held.url}/indexes/films/documents?primaryKey=id`, 'POST', [{ id: i, title: `film ${i}` }])).body.taskUid;
  expect((await waitTask(held.url, last)).status).toBe('succeeded');
  const before = (await json(`${held.url}/tasks?limit=100`)).body;

  // the route waits for the copy, which now waits to be killed
  void send(`${held.url}/tasks/compact`, 'POST').catch(() => undefined);
  const deadline = Date.now() + 60_000;
  while (!existsSync(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(existsSync(marker)).toBe(true);
  expect(existsSync(join(db, 'tasks-compacting', 'data.mdb'))).toBe(true);
  // the queue still answers meanwhile
  expect((await json(`${held.url}/tasks/${last}`)).body.status).toBe('succeeded');
  held.process.kill('SIGKILL');
  expect((await held.process).signal).toBe('SIGKILL');

  const restarted = await serve(args, env);
  expect(existsSync(join(db, 'tasks-compacting'))).toBe(false);
  expect(existsSync(join(db, 'tasks-compacted'))).toBe(false);
  expect((await json(`${restarted.url}/tasks?limit=100`)).body).toEqual(before);
  const more = await send(`${restarted.url}/indexes/films/documents`, 'POST', [{ id: 'new', title: 'after the crash' }]);
  expect((await waitTask(restarted.url, more.body.taskUid)).status).toBe('succeeded');

  // delete most of the history, compact, restart at once: the smaller queue is in use
  const deletion = await send(`${restarted.url}/tasks?uids=${Array.from({ length: 35 }, (_, i) => i + 1).join(',')}`, 'DELETE');
  expect((await waitTask(restarted.url, deletion.body.taskUid)).status).toBe('succeeded');
  const kept = (await json(`${restarted.url}/tasks?limit=100`)).body;
  const compacted = await send(`${restarted.url}/tasks/compact`, 'POST');
  expect(compacted.body).toMatchObject({ status: 'succeeded', actionRequired: 'you must restart your instance' });
  const size = statSync(join(db, 'tasks', 'data.mdb')).size;
  restarted.process.kill('SIGTERM');
  await restarted.process;
  const third = await serve(args, env);
  expect(statSync(join(db, 'tasks', 'data.mdb')).size).toBeLessThan(size);
  expect((await json(`${third.url}/tasks?limit=100`)).body).toEqual(kept);
}, 240_000);
