/**
 * The task store's indexes live and die with the records they describe: a write transaction that
 * fails leaves neither, and deleting the last task of a batch deletes the batch, as in the reference.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { TaskStore, type TaskRecord } from '../../src/engine/tasks/store.js';

let dir: string;
let store: TaskStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'search-tasks-'));
  store = new TaskStore(dir);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const record = (indexUid: string): Omit<TaskRecord, 'uid'> => ({
  batchUid: null,
  indexUid,
  status: 'enqueued',
  type: 'settingsUpdate',
  canceledBy: null,
  details: null,
  error: null,
  duration: null,
  enqueuedAt: new Date().toISOString(),
  startedAt: null,
  finishedAt: null,
  payload: { kind: 'settings', patch: {}, allowIndexCreation: true },
});

test('a failed write transaction leaves neither the records nor their index entries', () => {
  const kept = store.insert(record('a'));
  expect(() =>
    store.write(() => {
      store.insert(record('b'));
      store.update({ ...kept, status: 'succeeded', finishedAt: new Date().toISOString() });
      throw new Error('crash mid-transaction');
    }),
  ).toThrow('crash mid-transaction');
  expect(store.get(1)).toBeUndefined();
  expect(store.get(0)!.status).toBe('enqueued');
  expect(store.match({ indexUids: ['b'] }).toArray()).toEqual([]);
  expect(store.match({ statuses: ['enqueued'] }).toArray()).toEqual([0]);
  expect(store.match({ statuses: ['succeeded'] }).toArray()).toEqual([]);
  expect(store.match({ afterFinishedAt: new Date(0) }).toArray()).toEqual([]);
  // the next task takes the uid the failed transaction had taken
  expect(store.insert(record('c')).uid).toBe(1);
});

test('deleting the last task of a batch deletes the batch and its index entries', () => {
  const [t0, t1] = [store.insert(record('a')), store.insert(record('a'))];
  const batchUid = store.newBatchUid();
  const finishedAt = new Date().toISOString();
  store.write(() => {
    for (const t of [t0, t1]) store.update({ ...t, batchUid, status: 'succeeded', startedAt: finishedAt, finishedAt });
    store.putBatch({
      uid: batchUid,
      progress: null,
      details: {},
      stats: { totalNbTasks: 2, status: { succeeded: 2 }, types: { settingsUpdate: 2 }, indexUids: { a: 2 } },
      duration: 'PT0S',
      startedAt: finishedAt,
      finishedAt,
      batchStrategy: 'test',
    });
  });
  expect(store.matchBatches({ indexUids: ['a'] }).toArray()).toEqual([batchUid]);
  store.delete(t0.uid);
  expect(store.getBatch(batchUid)).toBeDefined();
  expect(store.match({ batchUids: [batchUid] }).toArray()).toEqual([t1.uid]);
  store.delete(t1.uid);
  expect(store.getBatch(batchUid)).toBeUndefined();
  expect(store.matchBatches({}).toArray()).toEqual([]);
  expect(store.matchBatches({ statuses: ['succeeded'] }).toArray()).toEqual([]);
});
