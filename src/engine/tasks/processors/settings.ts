/**
 * Settings updates of one index. Patches apply in task order; when an extension says the new
 * settings change what it derives, everything is re-extracted in the same write transaction.
 */
import { toSearchError } from '../../errors.js';
import { fullReindexChanges, prepareExtensions } from '../../index/pipeline.js';
import { applySettingsPatch } from '../../settings/apply.js';
import { throwIfAborted, type Processor, type TaskOutcome } from '../processing.js';

export const processSettings: Processor = async (ctx) => {
  const uid = ctx.tasks[0]!.indexUid!;
  const index = ctx.registry.exists(uid) ? ctx.registry.get(uid) : ctx.registry.create(uid, null, ctx.startedAt.toISOString());
  const maxUid = Math.max(...ctx.tasks.map((t) => t.uid));
  const before = index.settings;
  if (index.store.lastTaskUid >= maxUid) return ctx.tasks.map((t) => ({ uid: t.uid, status: 'succeeded' as const, details: t.details }));

  let after = before;
  const outcomes: TaskOutcome[] = [];
  for (const task of ctx.tasks) {
    if (task.payload.kind !== 'settings') continue;
    try {
      after = applySettingsPatch(after, task.payload.patch);
      outcomes.push({ uid: task.uid, status: 'succeeded', details: task.details });
    } catch (error) {
      outcomes.push({ uid: task.uid, status: 'failed', details: task.details, error: toSearchError(error) });
    }
  }
  const reindexing = index.extensions.filter((extension) => extension.needsReindex(before, after));
  const changes = reindexing.length > 0 ? fullReindexChanges(index.store) : [];
  ctx.progress(reindexing.length > 0 ? 're-indexing' : 'writing');
  const prepared = await prepareExtensions(reindexing, changes, after, index.store);
  throwIfAborted(ctx.signal);
  index.store.write(() => {
    index.store.setSettings(after);
    for (const extension of reindexing) {
      extension.clear(index.store);
      extension.apply(changes, { store: index.store, settings: after, prepared: prepared.get(extension.name) });
    }
    index.store.touch(new Date().toISOString());
    index.store.setLastTaskUid(maxUid);
  });
  return outcomes;
};
