/**
 * `POST /tasks/compact` (behind the `taskQueueCompactionRoute` experimental feature): the
 * reference's synchronous summary, the compacted queue put in place at the next start, and a
 * queue written to after its compaction kept as it is.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { createServer, type SearchServer } from '../../src/http/server.js';

interface Running {
  engine: Engine;
  server: SearchServer;
  url: string;
}

const dirs: string[] = [];
const running: Running[] = [];

afterEach(async () => {
  for (const r of running.splice(0)) await stop(r);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'task-compact-'));
  dirs.push(dir);
  return join(dir, 'data.ms');
}

async function start(dbPath: string): Promise<Running> {
  const engine = await Engine.open({ dbPath, logLevel: 'off' });
  const server = createServer(engine);
  const { url } = await server.listen('127.0.0.1:0');
  const r = { engine, server, url };
  running.push(r);
  return r;
}

async function stop(r: Running): Promise<void> {
  const at = running.indexOf(r);
  if (at >= 0) running.splice(at, 1);
  await r.server.close();
  await r.engine.close();
}

async function call(r: Running, method: string, path: string, json?: unknown) {
  const response = await fetch(r.url + path, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** A queue with many finished tasks, most of them then deleted: freed pages the compaction gives back. */
async function queueWithFreedPages(r: Running): Promise<number> {
  let last = 0;
  for (let i = 0; i < 300; i++) {
    const task = await r.engine.addDocuments('films', [{ id: i, title: `film ${i} `.repeat(20) }], { primaryKey: 'id', method: 'replace' });
    last = task.taskUid;
  }
  await r.engine.waitForTask(last, { timeoutMs: 120_000 });
  const deletion = await call(r, 'DELETE', `/tasks?uids=${Array.from({ length: 280 }, (_, i) => i).join(',')}`);
  expect(deletion.status).toBe(200);
  await r.engine.waitForTask(deletion.body.taskUid, { timeoutMs: 60_000 });
  return last;
}

const SIZE = /^\d+(\.\d{1,3})? (B|KiB|MiB|GiB)$/;
const bytes = (size: string) => {
  const [value, unit] = size.split(' ');
  return Number(value) * 1024 ** ['B', 'KiB', 'MiB', 'GiB'].indexOf(unit!);
};

test('refused with feature_not_enabled until the flag is on; then a synchronous summary, not a task', async () => {
  const r = await start(freshDbPath());
  const refused = await call(r, 'POST', '/tasks/compact');
  expect(refused).toEqual({
    status: 400,
    body: {
      message:
        'Using the /tasks/compact route requires enabling the `task queue compaction route` experimental feature. See https://github.com/orgs/meilisearch/discussions/883',
      code: 'feature_not_enabled',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#feature_not_enabled',
    },
  });
  const features = await call(r, 'PATCH', '/experimental-features', { taskQueueCompactionRoute: true });
  expect(features.status).toBe(200);
  expect(features.body.taskQueueCompactionRoute).toBe(true);
  const tasksBefore = (await call(r, 'GET', '/tasks')).body.total;

  const compacted = await call(r, 'POST', '/tasks/compact');
  expect(compacted.status).toBe(200);
  expect(compacted.body).toEqual({ preSize: expect.stringMatching(SIZE), postSize: expect.stringMatching(SIZE), status: 'succeeded', actionRequired: 'you must restart your instance' });
  // not a task
  expect((await call(r, 'GET', '/tasks')).body.total).toBe(tasksBefore);
  // as in the reference, a GET reads `compact` as a task uid
  expect((await call(r, 'GET', '/tasks/compact')).body.code).toBe('invalid_task_uid');
});

test('the compacted queue is in use after a restart: smaller file, same tasks, writes go on', async () => {
  const dbPath = freshDbPath();
  let r = await start(dbPath);
  await call(r, 'PATCH', '/experimental-features', { taskQueueCompactionRoute: true });
  await queueWithFreedPages(r);
  const before = (await call(r, 'GET', '/tasks?limit=1000')).body;
  const batches = (await call(r, 'GET', '/batches?limit=1000')).body;
  const fileBefore = statSync(join(dbPath, 'tasks', 'data.mdb')).size;

  const compacted = await call(r, 'POST', '/tasks/compact');
  expect(compacted.status).toBe(200);
  expect(bytes(compacted.body.postSize)).toBeLessThan(bytes(compacted.body.preSize) * 0.7);
  expect(bytes(compacted.body.preSize)).toBe(fileBefore);
  await stop(r);

  r = await start(dbPath);
  expect(statSync(join(dbPath, 'tasks', 'data.mdb')).size).toBeLessThan(fileBefore * 0.7);
  expect(existsSync(join(dbPath, 'tasks-compacted'))).toBe(false);
  expect((await call(r, 'GET', '/tasks?limit=1000')).body).toEqual(before);
  expect((await call(r, 'GET', '/batches?limit=1000')).body).toEqual(batches);
  // the flags live in the same environment and survived
  expect((await call(r, 'GET', '/experimental-features')).body.taskQueueCompactionRoute).toBe(true);
  // filters read the secondary indexes, copied too
  const filtered = await call(r, 'GET', '/tasks?types=taskDeletion&statuses=succeeded');
  expect(filtered.body.results).toHaveLength(1);
  const add = await call(r, 'POST', '/indexes/films/documents', [{ id: 'new', title: 'after' }]);
  expect(add.status).toBe(202);
  expect(add.body.taskUid).toBe(before.results[0].uid + 1);
  expect(await r.engine.waitForTask(add.body.taskUid)).toMatchObject({ status: 'succeeded' });
  expect((await call(r, 'GET', '/indexes/films/documents/new')).body).toEqual({ id: 'new', title: 'after' });
});

test('a task enqueued after the compaction is never lost: the stale copy is dropped at restart', async () => {
  const dbPath = freshDbPath();
  let r = await start(dbPath);
  await call(r, 'PATCH', '/experimental-features', { taskQueueCompactionRoute: true });
  await queueWithFreedPages(r);
  expect((await call(r, 'POST', '/tasks/compact')).status).toBe(200);
  const late = await call(r, 'POST', '/indexes/films/documents', [{ id: 'late', title: 'written after the compaction' }]);
  await r.engine.waitForTask(late.body.taskUid);
  const before = (await call(r, 'GET', '/tasks?limit=1000')).body;
  await stop(r);

  r = await start(dbPath);
  expect(existsSync(join(dbPath, 'tasks-compacted'))).toBe(false);
  expect((await call(r, 'GET', '/tasks?limit=1000')).body).toEqual(before);
  expect((await call(r, 'GET', `/tasks/${late.body.taskUid}`)).body).toMatchObject({ status: 'succeeded' });
});

test('what an interrupted compaction or swap left is cleared at start', async () => {
  const dbPath = freshDbPath();
  let r = await start(dbPath);
  const add = await call(r, 'POST', '/indexes/films/documents', [{ id: 1 }]);
  await r.engine.waitForTask(add.body.taskUid);
  await stop(r);
  // a copy cut short, and a swap whose rename happened but not the removal of its directory
  mkdirSync(join(dbPath, 'tasks-compacting'));
  writeFileSync(join(dbPath, 'tasks-compacting', 'data.mdb'), 'partial');
  mkdirSync(join(dbPath, 'tasks-compacted'));
  writeFileSync(join(dbPath, 'tasks-compacted', 'source.json'), JSON.stringify({ sourceTxnId: 1 }));

  r = await start(dbPath);
  expect(existsSync(join(dbPath, 'tasks-compacting'))).toBe(false);
  expect(existsSync(join(dbPath, 'tasks-compacted'))).toBe(false);
  expect((await call(r, 'GET', `/tasks/${add.body.taskUid}`)).body).toMatchObject({ status: 'succeeded' });
});
