/** Index creation, update (primary key), deletion and swap: one task per batch. */
import { preciseNow } from '../../wire/timestamp.js';
import { SearchError } from '../../errors.js';
import { indexNotFound } from '../../index/registry.js';
import type { BatchContext, Processor, TaskOutcome } from '../processing.js';
import type { TaskRecord } from '../store.js';

export const processIndexLifecycle: Processor = async (ctx) => {
  const task = ctx.tasks[0]!;
  try {
    return [{ uid: task.uid, status: 'succeeded', details: await run(ctx, task) }];
  } catch (error) {
    if (!(error instanceof SearchError)) throw error;
    return [{ uid: task.uid, status: 'failed', details: task.details, error } satisfies TaskOutcome];
  }
};

async function run(ctx: BatchContext, task: TaskRecord): Promise<Record<string, unknown> | null> {
  const uid = task.indexUid;
  const payload = task.payload;
  switch (payload.kind) {
    case 'indexCreation': {
      if (ctx.registry.exists(uid!)) {
        // A replay after a crash finds the index this very task created.
        if (ctx.registry.get(uid!).store.main.get('createdByTask') === task.uid) return task.details;
        throw new SearchError('index_already_exists', `Index \`${uid}\` already exists.`);
      }
      const index = ctx.registry.create(uid!, payload.primaryKey, ctx.startedAt.toISOString());
      index.store.write(() => index.store.main.putSync('createdByTask', task.uid));
      return task.details;
    }
    case 'indexUpdate': {
      const index = ctx.registry.get(uid!);
      if (payload.primaryKey !== undefined && payload.primaryKey !== index.store.primaryKey) {
        if (index.store.documentCount > 0 && index.store.primaryKey !== null) {
          throw new SearchError('index_primary_key_already_exists', `Index \`${uid}\`: Index already has a primary key: \`${index.store.primaryKey}\`.`);
        }
        index.store.write(() => {
          index.store.setPrimaryKey(payload.primaryKey ?? null);
          index.store.touch(preciseNow());
        });
      }
      return task.details;
    }
    case 'indexDeletion': {
      if (!ctx.registry.exists(uid!)) throw indexNotFound(uid!);
      const deletedDocuments = ctx.registry.get(uid!).store.documentCount;
      await ctx.registry.delete(uid!);
      return { deletedDocuments };
    }
    case 'indexSwap': {
      for (const { indexes } of payload.swaps) for (const name of indexes) if (!ctx.registry.exists(name)) throw indexNotFound(name);
      ctx.taskStore.write(() => {
        for (const { indexes } of payload.swaps) ctx.registry.swapMappings(indexes[0], indexes[1]);
      });
      return task.details;
    }
    default:
      throw new SearchError('invalid_state', `Task ${task.uid} of type ${task.type} reached the index processor.`);
  }
}
