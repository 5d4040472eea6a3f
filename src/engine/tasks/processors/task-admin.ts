/** Task cancelation and task deletion: they act on the queue itself. */
import { preciseNow } from '../../wire/timestamp.js';
import { rmSync } from 'node:fs';
import roaring from 'roaring';
import type { TaskStatus } from '../../types.js';
import { deserializeTaskFilter, originalFilterString } from '../payload.js';
import type { BatchContext, Processor, TaskOutcome } from '../processing.js';
import type { TaskRecord } from '../store.js';

const { RoaringBitmap32 } = roaring;

const FINISHED_STATUSES: TaskStatus[] = ['succeeded', 'failed', 'canceled'];
const FINISHED = new Set<string>(FINISHED_STATUSES);

export const processCancelations: Processor = async (ctx) => {
  const outcomes: TaskOutcome[] = [];
  const finishedAt = preciseNow();
  ctx.taskStore.write(() => {
    for (const task of ctx.tasks) {
      if (task.payload.kind !== 'taskCancelation') continue;
      const filter = deserializeTaskFilter(task.payload.filter);
      const matched = ctx.taskStore.match(filter);
      matched.remove(task.uid);
      let canceled = 0;
      // only unfinished tasks can be canceled: the status index narrows the records read
      const cancelable = RoaringBitmap32.and(matched, ctx.taskStore.match({ statuses: ['enqueued', 'processing'] }));
      for (const uid of cancelable) {
        const target = ctx.taskStore.get(uid);
        if (!target || (target.status !== 'enqueued' && target.status !== 'processing')) continue;
        if (ctx.tasks.some((t) => t.uid === uid)) continue;
        ctx.taskStore.update({ ...target, status: 'canceled', canceledBy: task.uid, finishedAt, startedAt: target.startedAt, batchUid: ctx.batchUid });
        removeUpdateFile(ctx, target);
        canceled++;
      }
      outcomes.push({
        uid: task.uid,
        status: 'succeeded',
        details: { matchedTasks: matched.size, canceledTasks: canceled, originalFilter: originalFilterString(filter) },
      });
    }
  });
  return outcomes;
};

export const processTaskDeletions: Processor = async (ctx) => {
  const outcomes: TaskOutcome[] = [];
  ctx.taskStore.write(() => {
    for (const task of ctx.tasks) {
      if (task.payload.kind !== 'taskDeletion') continue;
      const filter = deserializeTaskFilter(task.payload.filter);
      const matched = ctx.taskStore.match(filter);
      matched.remove(task.uid);
      let deleted = 0;
      for (const uid of RoaringBitmap32.and(matched, ctx.taskStore.match({ statuses: FINISHED_STATUSES }))) {
        const target = ctx.taskStore.get(uid);
        if (!target || !FINISHED.has(target.status)) continue;
        ctx.taskStore.delete(uid);
        deleted++;
      }
      outcomes.push({
        uid: task.uid,
        status: 'succeeded',
        details: { matchedTasks: matched.size, deletedTasks: deleted, originalFilter: originalFilterString(filter) },
      });
    }
  });
  return outcomes;
};

export function removeUpdateFile(ctx: Pick<BatchContext, 'updateFilePath'>, task: TaskRecord): void {
  if (task.payload.kind === 'documents') rmSync(ctx.updateFilePath(task.payload.updateFile), { force: true });
}
