import { describe, expect, test } from 'vitest';
import type { PlannedBatch } from './autobatcher.js';
import { guardBatch, MAX_CRASHES } from './crash-guard.js';
import type { TaskRecord } from './store.js';

const task = (uid: number) => ({ uid }) as TaskRecord;
const batch = (...uids: number[]): PlannedBatch => ({ kind: 'documents', tasks: uids.map(task), reason: 'batched' });
const uids = (planned: PlannedBatch) => planned.tasks.map((t) => t.uid);

describe('planning around batches that ended the write side', () => {
  test('without crashes, or with crashes of other tasks, the batch is unchanged', () => {
    const planned = batch(1, 2, 3);
    expect(guardBatch(planned, new Map())).toBe(planned);
    expect(guardBatch(planned, new Map([[9, 2]]))).toBe(planned);
  });

  test('tasks before a crashed one keep their batch; the crashed one then runs alone', () => {
    const crashes = new Map([[3, 1]]);
    expect(uids(guardBatch(batch(1, 2, 3, 4), crashes))).toEqual([1, 2]);
    const alone = guardBatch(batch(3, 4, 5), crashes);
    expect(uids(alone)).toEqual([3]);
    expect(alone.failWith).toBeUndefined();
    expect(alone.reason).toMatch(/processed alone/);
  });

  test(`a task that ended ${MAX_CRASHES} write sides is failed with an error that says what to do`, () => {
    expect(guardBatch(batch(3), new Map([[3, MAX_CRASHES - 1]])).failWith).toBeUndefined();
    const failed = guardBatch(batch(3, 4), new Map([[3, MAX_CRASHES]]));
    expect(uids(failed)).toEqual([3]);
    expect(failed.failWith?.code).toBe('internal');
    expect(failed.failWith?.message).toMatch(/ended 3 times while processing this task.*memory/);
  });
});
