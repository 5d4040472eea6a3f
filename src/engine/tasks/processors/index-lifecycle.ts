/** Index creation, update (primary key), deletion, compaction and swap: one task per batch. */
import { humanSize } from '../../wire/size.js';
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
      const renameTo = payload.newIndexUid !== undefined && payload.newIndexUid !== uid ? payload.newIndexUid : undefined;
      if (renameTo !== undefined && ctx.registry.exists(renameTo)) throw renameTargetExists(uid!, renameTo);
      if (payload.primaryKey !== undefined && payload.primaryKey !== index.store.primaryKey) {
        if (index.store.documentCount > 0 && index.store.primaryKey !== null) {
          throw new SearchError('index_primary_key_already_exists', `Index \`${uid}\`: Index already has a primary key: \`${index.store.primaryKey}\`.`);
        }
        index.store.write(() => {
          index.store.setPrimaryKey(payload.primaryKey ?? null);
          index.store.touch(preciseNow());
        });
      }
      if (renameTo !== undefined) {
        index.store.write(() => index.store.touch(new Date().toISOString()));
        ctx.taskStore.write(() => {
          ctx.registry.renameMapping(uid!, renameTo);
          ctx.taskStore.moveIndexTasks(task.uid, [[uid!, renameTo]]);
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
    case 'indexCompaction': {
      const { before, after } = await ctx.registry.compact(uid!);
      return { preCompactionSize: humanSize(before), postCompactionSize: humanSize(after) };
    }
    case 'indexSwap': {
      checkSwaps(ctx, payload.swaps);
      ctx.taskStore.write(() => {
        for (const { indexes, rename } of payload.swaps) {
          const [a, b] = indexes;
          if (rename) ctx.registry.renameMapping(a, b);
          else ctx.registry.swapMappings(a, b);
          ctx.taskStore.moveIndexTasks(task.uid, rename ? [[a, b]] : [[a, b], [b, a]]);
        }
      });
      return task.details;
    }
    default:
      throw new SearchError('invalid_state', `Task ${task.uid} of type ${task.type} reached the index processor.`);
  }
}

/** Every first index must exist; every second one must exist for a swap and must not for a rename. */
function checkSwaps(ctx: BatchContext, swaps: Array<{ indexes: [string, string]; rename?: boolean }>): void {
  const missing = new Set<string>();
  const taken: Array<[string, string]> = [];
  for (const { indexes, rename } of swaps) {
    if (!ctx.registry.exists(indexes[0])) missing.add(indexes[0]);
    const second = ctx.registry.exists(indexes[1]);
    if (rename && second) taken.push(indexes);
    if (!rename && !second) missing.add(indexes[1]);
  }
  if (missing.size === 1) throw indexNotFound([...missing][0]!);
  if (missing.size > 1) throw new SearchError('index_not_found', `Indexes ${[...missing].map((uid) => `\`${uid}\``).join(', ')} not found.`);
  if (taken.length === 1) throw renameTargetExists(taken[0]![0], taken[0]![1]);
  if (taken.length > 1)
    throw new SearchError(
      'index_already_exists',
      `The following indexes are being renamed but cannot because their new name conflicts with an already existing index: ${taken.map(([, b]) => `\`${b}\``).join(', ')}. Renaming doesn't overwrite the other index name.`,
    );
}

function renameTargetExists(from: string, to: string): SearchError {
  return new SearchError(
    'index_already_exists',
    `Cannot rename \`${from}\` to \`${to}\` as the index already exists. Hint: You can remove \`${to}\` first and then do your remove.`,
  );
}
