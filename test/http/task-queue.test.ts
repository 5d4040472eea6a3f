/**
 * The task queue with a backlog, through real HTTP: thousands of tasks queued while processing is
 * stopped, across indexes and kinds, with cancelations and deletions. Every task completes, each
 * index's tasks in uid order; every `GET /tasks` and `GET /batches` filter (and their pagination)
 * answers what a plain scan of the task records says the reference answers; a scoped key sees
 * only its indexes; and a database whose task indexes are missing (written before them) is
 * indexed again at open with the same answers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { open } from 'lmdb';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/engine/engine.js';
import type { Batch, Task, TaskFilter } from '../../src/engine/types.js';
import { createServer, type SearchServer } from '../../src/http/server.js';
import { startHarness, type Harness } from './harness.js';

const INDEXES = ['alpha', 'beta', 'gamma'];
const BACKLOG = 3000;

let h: Harness;
let tasks: Task[];
let batches: Batch[];

/** Every task record, read one by one: the model the indexes must agree with. */
function allTasks(engine: Engine): Task[] {
  const out: Task[] = [];
  for (let uid = 0; uid < engine.tasks.nextTaskUid(); uid++) {
    const record = engine.taskRecord(uid);
    if (record) out.push(engine.getTask(uid));
  }
  return out;
}

function allBatches(engine: Engine, tasks: Task[]): Batch[] {
  const uids = new Set(tasks.map((t) => t.batchUid).filter((b): b is number => b !== null));
  for (const uid of engine.tasks.batchUids()) uids.add(uid);
  return [...uids].sort((a, b) => a - b).flatMap((uid) => engine.tasks.getBatch(uid) ?? []);
}

const time = (s: string | null) => (s === null ? null : Date.parse(s));
const inRange = (value: string | null, before?: Date, after?: Date) =>
  (!before && !after) || (value !== null && (!before || time(value)! < before.getTime()) && (!after || time(value)! > after.getTime()));

function taskMatches(t: Task, f: TaskFilter): boolean {
  return (
    (!f.uids || f.uids.includes(t.uid)) &&
    (!f.statuses || f.statuses.includes(t.status)) &&
    (!f.types || f.types.includes(t.type)) &&
    (!f.indexUids || (t.indexUid !== null && f.indexUids.includes(t.indexUid))) &&
    (!f.canceledBy || (t.canceledBy !== null && f.canceledBy.includes(t.canceledBy))) &&
    (!f.batchUids || (t.batchUid !== null && f.batchUids.includes(t.batchUid))) &&
    inRange(t.enqueuedAt, f.beforeEnqueuedAt, f.afterEnqueuedAt) &&
    inRange(t.startedAt, f.beforeStartedAt, f.afterStartedAt) &&
    inRange(t.finishedAt, f.beforeFinishedAt, f.afterFinishedAt)
  );
}

/** The reference's batch filters: each one selects batches on its own, a batch must pass them all. */
function batchMatches(b: Batch, f: TaskFilter, tasks: Task[]): boolean {
  const own = tasks.filter((t) => t.batchUid === b.uid);
  const some = (g: TaskFilter) => own.some((t) => taskMatches(t, g));
  return (
    (!f.statuses || f.statuses.some((s) => s in b.stats.status)) &&
    (!f.types || f.types.some((t) => t in b.stats.types)) &&
    (!f.indexUids || f.indexUids.some((i) => i in b.stats.indexUids)) &&
    (!f.batchUids || f.batchUids.includes(b.uid)) &&
    (!f.uids || some({ uids: f.uids })) &&
    (!f.canceledBy || some({ canceledBy: f.canceledBy })) &&
    (!(f.beforeEnqueuedAt || f.afterEnqueuedAt) || some({ beforeEnqueuedAt: f.beforeEnqueuedAt, afterEnqueuedAt: f.afterEnqueuedAt })) &&
    (!(f.beforeStartedAt || f.afterStartedAt) || some({ beforeStartedAt: f.beforeStartedAt, afterStartedAt: f.afterStartedAt })) &&
    (!(f.beforeFinishedAt || f.afterFinishedAt) || some({ beforeFinishedAt: f.beforeFinishedAt, afterFinishedAt: f.afterFinishedAt }))
  );
}

/** A page as the reference cuts it: newest first unless reverse, from `from`, `next` after it. */
function expectedPage<T extends { uid: number }>(items: T[], q: { from?: number; limit: number; reverse?: boolean }) {
  const ordered = [...items].sort((a, b) => (q.reverse ? a.uid - b.uid : b.uid - a.uid));
  const start = q.from === undefined ? 0 : ordered.findIndex((t) => (q.reverse ? t.uid >= q.from! : t.uid <= q.from!));
  const begin = start < 0 ? ordered.length : start;
  const page = ordered.slice(begin, begin + q.limit);
  return { results: page, total: ordered.length, limit: q.limit, from: page[0]?.uid ?? null, next: ordered[begin + q.limit]?.uid ?? null };
}

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function rng(seed: number) {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

interface Case {
  query: string;
  filter: TaskFilter;
  page: { from?: number; limit: number; reverse?: boolean };
}

function randomCases(n: number, tasks: Task[], batches: Batch[]): Case[] {
  const r = rng(42);
  const pick = <T>(items: readonly T[], k: number) => Array.from({ length: k }, () => items[Math.floor(r() * items.length)]!);
  const dates = tasks.flatMap((t) => [t.enqueuedAt, t.startedAt, t.finishedAt]).filter((d): d is string => d !== null);
  const cancelers = [...new Set(tasks.map((t) => t.canceledBy).filter((c): c is number => c !== null))];
  const cases: Case[] = [];
  for (let i = 0; i < n; i++) {
    const params: string[] = [];
    const filter: TaskFilter = {};
    const add = <K extends keyof TaskFilter>(key: K, value: TaskFilter[K], text: string) => {
      filter[key] = value;
      params.push(`${key}=${encodeURIComponent(text)}`);
    };
    if (r() < 0.4) {
      const v = [...new Set(pick(['enqueued', 'processing', 'succeeded', 'failed', 'canceled'] as const, 1 + Math.floor(r() * 2)))];
      add('statuses', v, v.join(','));
    }
    if (r() < 0.4) {
      const v = [...new Set(pick(['documentAdditionOrUpdate', 'settingsUpdate', 'documentDeletion', 'taskCancelation', 'indexCreation'] as const, 1 + Math.floor(r() * 2)))];
      add('types', v, v.join(','));
    }
    if (r() < 0.4) {
      const v = [...new Set(pick([...INDEXES, 'missing'], 1 + Math.floor(r() * 2)))];
      add('indexUids', v, v.join(','));
    }
    if (r() < 0.15) {
      const v = pick(tasks, 5).map((t) => t.uid);
      add('uids', v, v.join(','));
    }
    if (r() < 0.15) {
      const v = pick(batches, 3).map((b) => b.uid);
      add('batchUids', v, v.join(','));
    }
    if (r() < 0.15 && cancelers.length > 0) {
      const v = pick(cancelers, 1);
      add('canceledBy', v, v.join(','));
    }
    for (const [before, after] of [
      ['beforeEnqueuedAt', 'afterEnqueuedAt'],
      ['beforeStartedAt', 'afterStartedAt'],
      ['beforeFinishedAt', 'afterFinishedAt'],
    ] as const) {
      if (r() < 0.12) {
        const d = pick(dates, 1)[0]!;
        add(r() < 0.5 ? before : after, new Date(d), d);
      }
    }
    const limit = pick([0, 1, 7, 20, 1000], 1)[0]!;
    const page: Case['page'] = { limit };
    params.push(`limit=${limit}`);
    if (r() < 0.5) {
      page.from = Math.floor(r() * (tasks.length + 10));
      params.push(`from=${page.from}`);
    }
    if (r() < 0.4) {
      page.reverse = true;
      params.push('reverse=true');
    }
    cases.push({ query: params.join('&'), filter, page });
  }
  return cases;
}

async function checkFilters(harness: Harness, cases: Case[]): Promise<void> {
  for (const c of cases) {
    const got = await harness.request('GET', `/tasks?${c.query}`);
    expect(got.status, c.query).toBe(200);
    expect(got.body, `/tasks?${c.query}`).toEqual(expectedPage(tasks.filter((t) => taskMatches(t, c.filter)), c.page));
    const gotBatches = await harness.request('GET', `/batches?${c.query}`);
    expect(gotBatches.status, c.query).toBe(200);
    const want = expectedPage(batches.filter((b) => batchMatches(b, c.filter, tasks)), c.page);
    expect(gotBatches.body, `/batches?${c.query}`).toEqual(JSON.parse(JSON.stringify(want)));
  }
}

beforeAll(async () => {
  h = await startHarness();
  await h.engine.scheduler.stop();
  // a backlog: document additions in runs, settings and deletions between them, three indexes
  const enqueued: number[] = [];
  for (let i = 0; i < BACKLOG; i++) {
    const index = INDEXES[i % 3]!;
    let summary;
    if (i % 50 === 7) summary = await h.engine.updateSettings(index, { filterableAttributes: [`f${i % 4}`] });
    else if (i % 40 === 13) summary = await h.engine.deleteDocuments(index, [i - 3]);
    else summary = await h.engine.addDocuments(index, [{ id: i, title: `task ${i}` }]);
    enqueued.push(summary.taskUid);
  }
  // cancel some queued tasks of one index, and queue a deletion of the cancelation's targets later
  const cancel = await h.request('POST', `/tasks/cancel?indexUids=gamma&uids=${enqueued.filter((u) => u % 30 === 2).join(',')}`);
  expect(cancel.status).toBe(200);
  h.engine.scheduler.start();
  for (const index of INDEXES) await h.wait((await h.engine.addDocuments(index, [{ id: 'last' }])).taskUid);
  const deletion = await h.request('DELETE', `/tasks?indexUids=beta&statuses=succeeded&beforeEnqueuedAt=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&types=documentDeletion`);
  expect(deletion.status).toBe(200);
  await h.wait(deletion.body.taskUid);
  tasks = allTasks(h.engine);
  batches = allBatches(h.engine, tasks);
}, 600_000);

afterAll(async () => {
  await h?.stop();
});

describe('a queue with a backlog', () => {
  test('every task completes, each index in uid order, batched by kind', () => {
    const byIndex = new Map<string, Task[]>();
    for (const t of tasks) if (t.indexUid) byIndex.set(t.indexUid, [...(byIndex.get(t.indexUid) ?? []), t]);
    expect(tasks.filter((t) => t.status === 'enqueued' || t.status === 'processing')).toEqual([]);
    expect(tasks.filter((t) => t.status === 'failed')).toEqual([]);
    for (const list of byIndex.values()) {
      const started = list.filter((t) => t.startedAt !== null && t.status !== 'canceled');
      for (let i = 1; i < started.length; i++) expect(started[i]!.batchUid!).toBeGreaterThanOrEqual(started[i - 1]!.batchUid!);
    }
    // runs of document additions were batched: far fewer batches than tasks
    expect(batches.length).toBeLessThan(tasks.length / 3);
    for (const b of batches) expect(Object.keys(b.stats.indexUids).length).toBeLessThanOrEqual(1);
    // the cancelation canceled what it matched, and the deletion removed what it matched
    const canceled = tasks.filter((t) => t.status === 'canceled');
    expect(canceled.length).toBeGreaterThan(0);
    expect(canceled.every((t) => t.indexUid === 'gamma' && t.canceledBy !== null)).toBe(true);
    expect(tasks.filter((t) => t.indexUid === 'beta' && t.type === 'documentDeletion' && t.status === 'succeeded')).toEqual([]);
  });

  test('a batch whose tasks were all deleted is deleted too', () => {
    for (const b of batches) expect(tasks.some((t) => t.batchUid === b.uid), `batch ${b.uid}`).toBe(true);
  });

  test('task and batch filters and pagination match the records, through HTTP', async () => {
    await checkFilters(h, randomCases(150, tasks, batches));
  }, 120_000);

  test('a key limited to some indexes lists exactly their tasks and batches', async () => {
    const scope = { canAccessIndex: (uid: string) => uid === 'alpha', canSeeTask: (t: Task) => t.indexUid === 'alpha' };
    for (const q of [{ limit: 20 }, { limit: 50, from: Math.floor(tasks.length / 2) }, { limit: 10, reverse: true }] as const) {
      const got = h.engine.getTasks({ ...q }, scope);
      expect(got).toEqual(expectedPage(tasks.filter((t) => t.indexUid === 'alpha'), q));
      const gotBatches = h.engine.getBatches({ ...q, statuses: ['succeeded'] }, scope);
      const want = batches.filter((b) => 'succeeded' in b.stats.status && Object.keys(b.stats.indexUids).length > 0 && Object.keys(b.stats.indexUids).every((i) => i === 'alpha'));
      expect(gotBatches).toEqual(JSON.parse(JSON.stringify(expectedPage(want, q))));
    }
  });
});

describe('an idle queue', () => {
  test('a task registered while the write thread is idle or busy is processed without waiting for a poll', async () => {
    const harness = await startHarness();
    try {
      // the scheduler polls no more (an idle server does no work): each task must be announced
      for (let i = 0; i < 9; i++) {
        const started = performance.now();
        const summary = await harness.engine.addDocuments(INDEXES[i % 3]!, [{ id: i }]);
        expect((await harness.engine.waitForTask(summary.taskUid, { timeoutMs: 30_000 })).status).toBe('succeeded');
        // far below the scheduler's 60 s safety recheck
        expect(performance.now() - started).toBeLessThan(15_000);
      }
    } finally {
      await harness.stop();
    }
  }, 200_000);
});

describe('task indexes rebuilt at open', () => {
  let server: SearchServer | null = null;
  let engine: Engine | null = null;
  let dir: string | null = null;
  afterAll(async () => {
    await server?.close();
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('dropping the indexes (a database from before them) and reopening gives the same answers', async () => {
    const first = await startHarness();
    dir = first.dir;
    const dbPath = join(first.dir, 'data.ms');
    for (let i = 0; i < 60; i++) await first.engine.addDocuments(INDEXES[i % 3]!, [{ id: i }]);
    const cancel = await first.engine.cancelTasks({ indexUids: ['beta'], statuses: ['enqueued'] });
    await first.wait(cancel.taskUid);
    for (const index of INDEXES) await first.wait((await first.engine.addDocuments(index, [{ id: 'last' }])).taskUid);
    const before = allTasks(first.engine);
    await first.server.close();
    await first.engine.close();

    // what an older build left: the three bitmaps only, no layout stamp
    const env = open({ path: join(dbPath, 'tasks'), maxDbs: 24 });
    for (const name of ['by-canceled-by', 'enqueued-at', 'started-at', 'finished-at', 'batch-tasks', 'batch-index'])
      await env.openDB({ name }).drop();
    await env.openDB({ name: 'meta', encoding: 'msgpack' }).remove('indexLayout');
    await env.close();

    engine = await Engine.open({ dbPath, logLevel: 'off' });
    server = createServer(engine);
    const { url } = await server.listen('127.0.0.1:0');
    expect(allTasks(engine)).toEqual(before);
    const harness = { request: async (method: string, path: string) => {
      const res = await fetch(url + path, { method });
      return { status: res.status, body: await res.json(), text: '', headers: res.headers };
    } } as unknown as Harness;
    tasks = before;
    batches = allBatches(engine, before);
    await checkFilters(harness, randomCases(60, tasks, batches));
  }, 120_000);
});
