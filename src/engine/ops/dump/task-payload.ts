/**
 * What an imported task needs to run: its processing payload, rebuilt from the dumped kind and
 * its content. Only enqueued tasks ever run again, but every record carries a payload.
 */
import type { Settings } from '../../settings/types.js';
import type { SerializedTaskFilter, TaskPayload } from '../../tasks/payload.js';
import { parsePayloadSize } from '../../export/payload-size.js';
import { kindContent, kindName, type DumpTask } from './layout.js';

export function documentsPayload(task: DumpTask, updateFile: string, count: number): TaskPayload {
  const content = kindContent(task.type);
  return {
    kind: 'documents',
    updateFile,
    method: content.method === 'UpdateDocuments' ? 'update' : 'replace',
    primaryKey: (content.primary_key as string | null | undefined) ?? null,
    count,
    allowIndexCreation: content.allow_index_creation !== false,
  };
}

/** The processing payload of a dumped task, from its kind and content. */
export function payloadOf(task: DumpTask): TaskPayload {
  const c = kindContent(task.type);
  switch (kindName(task.type)) {
    case 'documentImport':
      // finished document tasks keep no payload file; an enqueued one without its file fails cleanly
      return {
        kind: 'documents',
        updateFile: `missing-${task.uid}.ndjson`,
        method: c.method === 'UpdateDocuments' ? 'update' : 'replace',
        primaryKey: (c.primary_key as string | null) ?? null,
        count: Number(c.documents_count ?? 0),
      };
    case 'documentDeletion':
      return { kind: 'deleteIds', ids: ((c.documents_ids as unknown[] | undefined) ?? []).map(String) };
    case 'documentDeletionByFilter':
      return { kind: 'deleteFilter', filter: c.filter };
    case 'documentClear':
      return { kind: 'clearDocuments' };
    case 'settings':
      return { kind: 'settings', patch: (c.settings as Partial<Settings> | undefined) ?? {}, allowIndexCreation: c.allow_index_creation !== false };
    case 'indexCreation':
      return { kind: 'indexCreation', primaryKey: (c.primary_key as string | null) ?? null };
    case 'indexUpdate':
      return { kind: 'indexUpdate', primaryKey: (c.primary_key as string | null) ?? null };
    case 'indexDeletion':
      return { kind: 'indexDeletion' };
    case 'indexCompaction':
      return { kind: 'indexCompaction' };
    case 'indexSwap':
      return { kind: 'indexSwap', swaps: (c.swaps as Array<{ indexes: [string, string] }>) ?? [] };
    case 'taskCancelation':
      return { kind: 'taskCancelation', filter: taskFilter(c.query) };
    case 'tasksDeletion':
      return { kind: 'taskDeletion', filter: taskFilter(c.query) };
    case 'dsrUpdate': {
      const deletion = c.Deletion;
      const update = c.CreateOrUpdate as { rule_id?: string; update?: Record<string, unknown> } | undefined;
      return typeof deletion === 'string' ? { kind: 'dsrUpdate', ruleUid: deletion, update: null } : { kind: 'dsrUpdate', ruleUid: String(update?.rule_id ?? ''), update: update?.update ?? {} };
    }
    case 'dsrClear':
      return { kind: 'dsrClear' };
    case 'upgradeDatabase':
      return { kind: 'operation', options: { from: Array.isArray(c.from) ? c.from.join('.') : undefined } };
    case 'export':
      return { kind: 'operation', options: exportOptions(c) };
    default:
      return { kind: 'operation' };
  }
}

/** The request of a dumped export (the reference's snake_case fields), as the processor reads it. */
function exportOptions(c: Record<string, unknown>): Record<string, unknown> {
  const indexes: Record<string, { filter: unknown; overrideSettings: boolean }> = {};
  for (const [pattern, settings] of Object.entries((c.indexes as Record<string, Record<string, unknown>> | undefined) ?? { '*': {} }))
    indexes[pattern] = { filter: settings?.filter ?? null, overrideSettings: settings?.overrideSettings === true || settings?.override_settings === true };
  return {
    url: String(c.url ?? ''),
    apiKey: typeof c.api_key === 'string' ? c.api_key : null,
    payloadSize: payloadSizeOf(c.payload_size),
    indexes,
  };
}

/** A dumped payload size: bytes, or a size in words as a `Byte` may be written. */
function payloadSizeOf(value: unknown): number | null {
  if (typeof value === 'number') return value;
  const parsed = typeof value === 'string' ? parsePayloadSize(value) : null;
  return typeof parsed === 'number' ? parsed : null;
}

const NUMBER_LISTS = ['uids', 'batchUids', 'canceledBy'] as const;
const STRING_LISTS = ['types', 'statuses', 'indexUids'] as const;
const DATES = ['beforeEnqueuedAt', 'afterEnqueuedAt', 'beforeStartedAt', 'afterStartedAt', 'beforeFinishedAt', 'afterFinishedAt'] as const;

/**
 * The filter of a cancelation or deletion task: this engine's dumps hold it as an object,
 * Meilisearch's as the query string of the request (`?statuses=enqueued&indexUids=movies`).
 * A query that matches nothing here (or cannot be read) matches no task.
 */
export function taskFilter(query: unknown): SerializedTaskFilter {
  if (query && typeof query === 'object') return query as SerializedTaskFilter;
  if (typeof query !== 'string') return { uids: [] };
  const params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  const out: Record<string, unknown> = {};
  const list = (name: string) => params.get(name)?.split(',').map((v) => v.trim()).filter((v) => v !== '' && v !== '*');
  for (const name of NUMBER_LISTS) {
    const values = list(name)?.map(Number);
    if (values?.length) out[name] = values.filter(Number.isInteger);
  }
  for (const name of STRING_LISTS) {
    const values = list(name);
    if (values?.length) out[name] = values;
  }
  for (const name of DATES) {
    const value = params.get(name);
    if (value && !Number.isNaN(Date.parse(value))) out[name] = new Date(value).toISOString();
  }
  return Object.keys(out).length > 0 ? (out as SerializedTaskFilter) : { uids: [] };
}
