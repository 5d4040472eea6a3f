/**
 * What a task needs to be processed, persisted with the task itself. Document payloads live in
 * update files (`tasks/update_files/<uuid>.mpk`, or `.ndjson` when imported from a dump), written and flushed before the task is
 * registered, so an acknowledged task can always be replayed after a crash.
 */
import type { Settings } from '../settings/types.js';
import type { TaskFilter } from '../types.js';

export type TaskPayload =
  | {
      kind: 'documents';
      updateFile: string;
      method: 'replace' | 'update';
      primaryKey: string | null;
      count: number;
      /** Whether the task may create its missing index (the key had `indexes.create`); absent means true. */
      allowIndexCreation?: boolean;
      /** `skipCreation`: only update documents that already exist, ignore the others. */
      skipCreation?: boolean;
    }
  | { kind: 'deleteIds'; ids: string[] }
  | { kind: 'deleteFilter'; filter: unknown }
  | { kind: 'clearDocuments' }
  | { kind: 'editDocuments'; function: string; filter: unknown; context: Record<string, unknown> | null }
  | { kind: 'settings'; patch: Partial<Settings>; /** As for documents; absent means true. */ allowIndexCreation?: boolean }
  | { kind: 'indexCreation'; primaryKey: string | null }
  | { kind: 'indexUpdate'; primaryKey: string | null | undefined; /** Rename the index to this uid. */ newIndexUid?: string }
  | { kind: 'indexDeletion' }
  | { kind: 'indexCompaction' }
  | { kind: 'indexSwap'; swaps: Array<{ indexes: [string, string]; rename?: boolean }> }
  | { kind: 'taskCancelation'; filter: SerializedTaskFilter }
  | { kind: 'taskDeletion'; filter: SerializedTaskFilter }
  | { kind: 'operation'; options?: Record<string, unknown> }
  /** A dynamic search rule created or updated (`update`), or deleted (`update: null`). */
  | { kind: 'dsrUpdate'; ruleUid: string; update: Record<string, unknown> | null }
  | { kind: 'dsrClear' };

/** TaskFilter with dates as ISO strings, so it survives msgpack round trips unchanged. */
export type SerializedTaskFilter = Omit<
  TaskFilter,
  'beforeEnqueuedAt' | 'afterEnqueuedAt' | 'beforeStartedAt' | 'afterStartedAt' | 'beforeFinishedAt' | 'afterFinishedAt'
> & {
  beforeEnqueuedAt?: string;
  afterEnqueuedAt?: string;
  beforeStartedAt?: string;
  afterStartedAt?: string;
  beforeFinishedAt?: string;
  afterFinishedAt?: string;
};

const DATE_KEYS = [
  'beforeEnqueuedAt',
  'afterEnqueuedAt',
  'beforeStartedAt',
  'afterStartedAt',
  'beforeFinishedAt',
  'afterFinishedAt',
] as const;

export function serializeTaskFilter(filter: TaskFilter): SerializedTaskFilter {
  const out: Record<string, unknown> = { ...filter };
  for (const key of DATE_KEYS) if (filter[key]) out[key] = filter[key]!.toISOString();
  return out as SerializedTaskFilter;
}

export function deserializeTaskFilter(filter: SerializedTaskFilter): TaskFilter {
  const out: Record<string, unknown> = { ...filter };
  for (const key of DATE_KEYS) if (filter[key]) out[key] = new Date(filter[key]!);
  return out as TaskFilter;
}

/** The query string a user would have written for this filter (`originalFilter` in task details). */
export function originalFilterString(filter: TaskFilter): string {
  const parts: string[] = [];
  const add = (key: string, value: unknown[] | undefined) => {
    if (value) parts.push(`${key}=${value.map(String).join('%2C')}`);
  };
  add('uids', filter.uids);
  add('batchUids', filter.batchUids);
  add('types', filter.types);
  add('statuses', filter.statuses);
  add('indexUids', filter.indexUids);
  add('canceledBy', filter.canceledBy);
  for (const key of DATE_KEYS) if (filter[key]) parts.push(`${key}=${encodeURIComponent(filter[key]!.toISOString())}`);
  return '?' + parts.join('&');
}
