/**
 * Settings updates of one index. Patches apply in task order; when an extension says the new
 * settings change what it derives, everything is re-extracted in the same write transaction.
 */
import { preciseNow } from '../../wire/timestamp.js';
import { SearchError, toSearchError } from '../../errors.js';
import { fullReindexChanges, prepareExtensions } from '../../index/pipeline.js';
import { applySettingsPatch } from '../../settings/apply.js';
import { throwIfAborted, type Processor, type TaskOutcome } from '../processing.js';
import type { TaskRecord } from '../store.js';

function allowsIndexCreation(task: TaskRecord): boolean {
  return task.payload.kind !== 'settings' || task.payload.allowIndexCreation !== false;
}

export const processSettings: Processor = async (ctx) => {
  const uid = ctx.tasks[0]!.indexUid!;
  // A missing index is created by the first task whose key could create indexes; the tasks
  // before it (keys without `indexes.create`) fail as the reference does, without creating it.
  const creator = ctx.registry.exists(uid) ? 0 : ctx.tasks.findIndex(allowsIndexCreation);
  const notFound = new SearchError('index_not_found', `Index \`${uid}\` not found.`);
  const refused = (creator < 0 ? ctx.tasks : ctx.tasks.slice(0, creator)).map(
    (t): TaskOutcome => ({ uid: t.uid, status: 'failed', details: t.details, error: notFound }),
  );
  if (creator < 0) return refused;
  const tasks = ctx.tasks.slice(creator);
  const index = ctx.registry.exists(uid) ? ctx.registry.get(uid) : ctx.registry.create(uid, null, ctx.startedAt.toISOString());
  const maxUid = Math.max(...tasks.map((t) => t.uid));
  const before = index.settings;
  if (index.store.lastTaskUid >= maxUid) return [...refused, ...tasks.map((t) => ({ uid: t.uid, status: 'succeeded' as const, details: t.details }))];

  let after = before;
  const outcomes: TaskOutcome[] = [...refused];
  for (const task of tasks) {
    if (task.payload.kind !== 'settings') continue;
    try {
      after = applySettingsPatch(after, task.payload.patch);
      outcomes.push({ uid: task.uid, status: 'succeeded', details: task.details });
    } catch (error) {
      outcomes.push({ uid: task.uid, status: 'failed', details: task.details, error: toSearchError(error) });
    }
  }
  const reindexing = index.extensions.filter((extension) => extension.needsReindex(before, after));
  ctx.progress(reindexing.length > 0 ? 're-indexing' : 'writing');
  const changes = reindexing.length > 0 ? fullReindexChanges(index.store) : [];
  const prepared = await prepareExtensions(reindexing, changes, after, index.store, { fromScratch: true });
  throwIfAborted(ctx.signal);
  index.store.write(() => {
    index.store.setSettings(after);
    for (const extension of reindexing) {
      extension.clear(index.store);
      extension.apply(changes, { store: index.store, settings: after, prepared: prepared.get(extension.name) });
    }
    index.store.touch(preciseNow());
    index.store.setLastTaskUid(maxUid);
  });
  return outcomes;
};
