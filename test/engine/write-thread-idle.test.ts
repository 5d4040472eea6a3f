/**
 * Under a memory limit the write side ends once the queue has been idle for a while (its memory
 * goes back to the system) and the next task starts another (tasks/write-thread.ts), whether it
 * runs as a worker thread or as a child process (tasks/write-host.ts). Here the idle time and the
 * host are set through the engine's options, since the test machine has no limit.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import type { WriteHostKind } from '../../src/engine/tasks/write-host.js';
import { tempEngine } from './helpers.js';
import { writeProcessPids } from '../write-processes.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The OS threads of this process: an ended worker thread is joined, so the count falls by one. */
const threads = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]);

/** What shows a live write side: one more thread, or one more child process. */
const LIVE: Record<WriteHostKind, () => number> = { thread: threads, process: () => writeProcessPids().length };

async function waitFor(condition: () => boolean, ms = 10_000): Promise<void> {
  const until = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > until) throw new Error('timed out');
    await sleep(20);
  }
}

async function succeeded(engine: Engine, taskUid: number) {
  const task = await engine.waitForTask(taskUid, { timeoutMs: 30_000 });
  expect(task.status).toBe('succeeded');
  return task;
}

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

describe.each(['thread', 'process'] as const)('the write side (a %s) ends when the queue is idle', (writeHost) => {
  const live = LIVE[writeHost];
  test('it ends after the idle time, the next task starts another, and documents are indexed', async () => {
    const opened = await tempEngine({ writeThreadIdleEndMs: 150, writeHost });
    cleanup = opened.cleanup;
    const { engine } = opened;
    await succeeded(engine, (await engine.addDocuments('movies', [{ id: 1, title: 'first' }], { primaryKey: 'id' })).taskUid);
    const busy = live();
    await waitFor(() => live() === busy - 1);
    // ended: the next task starts a write thread again
    await succeeded(engine, (await engine.addDocuments('movies', [{ id: 2, title: 'second' }])).taskUid);
    expect(live()).toBe(busy);
    expect((await engine.search('movies', { q: 'second' })).hits.map((h) => h.id)).toEqual([2]);
    await waitFor(() => live() === busy - 1);
    expect((await engine.search('movies', { q: '' })).estimatedTotalHits).toBe(2);
  }, 60_000);

  test('tasks registered before, while and after it ends are processed once each, in order', async () => {
    // a short idle time: tasks arrive while a thread ends and while the next one starts
    const opened = await tempEngine({ writeThreadIdleEndMs: 20, writeHost });
    cleanup = opened.cleanup;
    const { engine } = opened;
    const uids: number[] = [];
    for (let i = 0; i < 24; i++) {
      uids.push((await engine.addDocuments('counter', [{ id: 1, value: i }], { primaryKey: 'id' })).taskUid);
      await sleep((i * 7) % 45);
    }
    const tasks = [];
    for (const uid of uids) tasks.push(await succeeded(engine, uid));
    // each task in a batch after (or with) the one registered before it, started no earlier
    for (let i = 1; i < tasks.length; i++) {
      expect(tasks[i]!.batchUid!).toBeGreaterThanOrEqual(tasks[i - 1]!.batchUid!);
      expect(Date.parse(tasks[i]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(tasks[i - 1]!.startedAt!));
    }
    expect(engine.getDocument('counter', '1')).toMatchObject({ value: 23 });
  }, 60_000);

  test('closing the engine while the write thread ends, or once it has ended, returns', async () => {
    for (const wait of [0, 15, 30, 300]) {
      const opened = await tempEngine({ writeThreadIdleEndMs: 15, writeHost });
      await succeeded(opened.engine, (await opened.engine.addDocuments('a', [{ id: 1 }], { primaryKey: 'id' })).taskUid);
      await sleep(wait);
      await opened.cleanup();
    }
  }, 60_000);

  test('stop and start around an ended write thread: tasks registered while stopped wait, then run', async () => {
    const opened = await tempEngine({ writeThreadIdleEndMs: 30, writeHost });
    cleanup = opened.cleanup;
    const { engine } = opened;
    await succeeded(engine, (await engine.addDocuments('a', [{ id: 1 }], { primaryKey: 'id' })).taskUid);
    await sleep(200);
    await engine.scheduler.stop();
    const waiting = await engine.addDocuments('a', [{ id: 2 }]);
    await sleep(300);
    expect(engine.getTask(waiting.taskUid).status).toBe('enqueued');
    engine.scheduler.start();
    await succeeded(engine, waiting.taskUid);
  }, 60_000);
});
