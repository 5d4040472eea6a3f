/**
 * The task history of dumps v1 to v5, converted along the reference's compatibility chain:
 *
 *   v1 update  ─┐
 *   v2 update  ─┼─> update (v3 model) ──> task (v4/v5 model) ──> v6 task line
 *   v3 update  ─┘        v4 task, v5 task ─┘
 *
 * Updates (v1-v3) were numbered per index; they become tasks numbered in the order the dump
 * lists them. What the reference drops is dropped here too (v1 enqueued updates and `Customs`
 * updates, tasks of an unknown index that had not finished), with a warning.
 */
import { isoDuration } from '../../../tasks/scheduler.js';
import type { DumpKey, DumpTask } from '../layout.js';
import { legacyCodeToV4, v4CodeToV6, v6Error } from './errors.js';
import { v1RankingRule, v2ToV3Settings, v5ToV6Settings, type LegacySettings } from './settings.js';

type Json = Record<string, unknown>;
type Method = 'ReplaceDocuments' | 'UpdateDocuments';

// --- the update model (v3) ------------------------------------------------------------------------

export type UpdateKind =
  | { type: 'documentAddition'; method: Method; primaryKey: string | null; contentUuid: string | null }
  | { type: 'deleteDocuments'; ids: string[] }
  | { type: 'settings'; settings: LegacySettings }
  | { type: 'clearDocuments' };

type UpdateResult = { type: 'documentsAddition'; count: number } | { type: 'documentDeletion'; deleted: number } | { type: 'other' };

export interface LegacyUpdate {
  indexUuid: string;
  updateId: number;
  status: 'enqueued' | 'processing' | 'processed' | 'aborted' | 'failed';
  kind: UpdateKind;
  enqueuedAt: string;
  startedAt?: string;
  finishedAt?: string;
  result?: UpdateResult;
  /** `code` is a v4 code name. */
  error?: { message: string; code: string };
}

const MALFORMED_TASK = 'Malformed task.';

/** A v1 update (`updates.jsonl` of an index), or null when the reference skips it. */
export function v1Update(raw: Json, indexUuid: string, warn: (m: string) => void): LegacyUpdate | null {
  const type = raw.type as Json;
  const status = raw.status as string;
  if (status === 'enqueued') {
    warn(`cannot import task ${String(raw.updateId)} (importing enqueued tasks from v1 dumps is unsupported): it is skipped`);
    return null;
  }
  const kind = v1Kind(type, warn);
  if (!kind) {
    warn("ignoring a task with type 'Customs' that is no longer supported");
    return null;
  }
  const processedAt = raw.processedAt as string;
  const startedAt = new Date(Date.parse(processedAt) - Number(raw.duration ?? 0) * 1000).toISOString();
  const base = { indexUuid, updateId: Number(raw.updateId), kind, enqueuedAt: raw.enqueuedAt as string, startedAt, finishedAt: processedAt };
  if (status === 'failed')
    return { ...base, status: 'failed', error: { message: (raw.error as string | undefined) ?? '', code: legacyCodeToV4((raw.errorCode as string | undefined) ?? '') } };
  const number = Number(type.number ?? 0);
  const result: UpdateResult =
    type.name === 'ClearAll'
      ? { type: 'documentDeletion', deleted: Number.MAX_SAFE_INTEGER }
      : type.name === 'DocumentsAddition' || type.name === 'DocumentsPartial'
        ? { type: 'documentsAddition', count: number }
        : type.name === 'DocumentsDeletion'
          ? { type: 'documentDeletion', deleted: number }
          : { type: 'other' };
  return { ...base, status: 'processed', result };
}

function v1Kind(type: Json, warn: (m: string) => void): UpdateKind | null {
  switch (type.name) {
    case 'ClearAll':
      return { type: 'clearDocuments' };
    case 'DocumentsAddition':
      return { type: 'documentAddition', method: 'ReplaceDocuments', primaryKey: null, contentUuid: null };
    case 'DocumentsPartial':
      return { type: 'documentAddition', method: 'UpdateDocuments', primaryKey: null, contentUuid: null };
    case 'DocumentsDeletion':
      return { type: 'deleteDocuments', ids: [] };
    case 'Settings':
      return { type: 'settings', settings: v2ToV3Settings(v1SettingsUpdate((type.settings as Json | undefined) ?? {}, warn)) };
    default:
      return null;
  }
}

/** A v1 settings update: `{field: {"Update": value} | "Clear" | "Nothing"}`, snake_case fields. */
function v1SettingsUpdate(update: Json, warn: (m: string) => void): LegacySettings {
  const out: LegacySettings = {};
  const state = (field: string): { set: boolean; value?: unknown } | null => {
    const s = update[field];
    if (s === 'Clear') return { set: false };
    if (s && typeof s === 'object' && 'Update' in s) return { set: true, value: (s as Json).Update };
    return null;
  };
  const put = (field: string, to: string[], map: (v: unknown) => unknown = (v) => v) => {
    const s = state(field);
    if (s) for (const key of to) out[key] = s.set ? map(s.value) : null;
  };
  put('displayed_attributes', ['displayedAttributes']);
  put('searchable_attributes', ['searchableAttributes']);
  put('attributes_for_faceting', ['filterableAttributes', 'sortableAttributes']);
  put('ranking_rules', ['rankingRules'], (rules) =>
    (rules as unknown[])
      .map((rule) => (typeof rule === 'string' ? rule.charAt(0).toLowerCase() + rule.slice(1) : `${Object.keys(rule as Json)[0]!.toLowerCase()}(${String(Object.values(rule as Json)[0])})`))
      .map((rule) => v1RankingRule(rule, warn))
      .filter((rule) => rule !== null),
  );
  put('stop_words', ['stopWords']);
  put('synonyms', ['synonyms']);
  put('distinct_attribute', ['distinctAttribute']);
  return out;
}

/** A line of a v2 `updates/data.jsonl`. */
export function v2Update(raw: Json): LegacyUpdate {
  const u = raw.update as Json;
  const meta = u.meta as Json;
  const content = (u.content as string | null | undefined) ?? null;
  let kind: UpdateKind;
  switch (meta.type) {
    case 'DocumentsAddition':
      kind = { type: 'documentAddition', method: meta.method as Method, primaryKey: (meta.primary_key as string | null | undefined) ?? null, contentUuid: content };
      break;
    case 'ClearDocuments':
      kind = { type: 'clearDocuments' };
      break;
    case 'DeleteDocuments':
      kind = { type: 'deleteDocuments', ids: (meta.ids as string[] | undefined) ?? [] };
      break;
    default: {
      const { type: _type, ...settings } = meta;
      kind = { type: 'settings', settings: v2ToV3Settings(settings) };
    }
  }
  const update = commonUpdate(raw.uuid as string, u, kind);
  const error = u.error as Json | undefined;
  if (update.status === 'failed') update.error = { message: (error?.message as string | undefined) ?? '', code: legacyCodeToV4((error?.errorCode as string | undefined) ?? '') };
  // an unfinished addition cannot be replayed without its payload
  if ((update.status === 'enqueued' || update.status === 'processing') && kind.type === 'documentAddition' && !content) {
    const now = new Date().toISOString();
    return { ...update, status: 'failed', startedAt: update.startedAt ?? now, finishedAt: now, error: { message: MALFORMED_TASK, code: 'malformed_dump' } };
  }
  return update;
}

/** A line of a v3 `updates/data.jsonl`. */
export function v3Update(raw: Json): LegacyUpdate {
  const u = raw.update as Json;
  const meta = u.meta as string | Json;
  let kind: UpdateKind;
  if (meta === 'ClearDocuments') kind = { type: 'clearDocuments' };
  else if (typeof meta === 'object' && 'DocumentAddition' in meta) {
    const d = meta.DocumentAddition as Json;
    kind = { type: 'documentAddition', method: d.method as Method, primaryKey: (d.primary_key as string | null | undefined) ?? null, contentUuid: (d.content_uuid as string | undefined) ?? null };
  } else if (typeof meta === 'object' && 'DeleteDocuments' in meta) kind = { type: 'deleteDocuments', ids: meta.DeleteDocuments as string[] };
  else kind = { type: 'settings', settings: ((meta as Json).Settings as LegacySettings | undefined) ?? {} };
  const update = commonUpdate(raw.uuid as string, u, kind);
  if (update.status === 'failed') update.error = { message: (u.msg as string | undefined) ?? '', code: legacyCodeToV4(String(u.code ?? '')) };
  return update;
}

function commonUpdate(indexUuid: string, u: Json, kind: UpdateKind): LegacyUpdate {
  const status = u.status as LegacyUpdate['status'];
  const update: LegacyUpdate = { indexUuid, updateId: Number(u.updateId), status, kind, enqueuedAt: u.enqueuedAt as string };
  if (u.startedProcessingAt) update.startedAt = u.startedProcessingAt as string;
  const finished = (u.processedAt ?? u.failedAt ?? u.abortedAt) as string | undefined;
  if (finished && (status === 'processed' || status === 'failed' || status === 'aborted')) update.finishedAt = finished;
  if (status === 'processed') update.result = updateResult(u.success);
  return update;
}

function updateResult(success: unknown): UpdateResult {
  if (success && typeof success === 'object') {
    const s = success as Json;
    if (s.DocumentsAddition) return { type: 'documentsAddition', count: Number((s.DocumentsAddition as Json).nb_documents ?? 0) };
    if (s.DocumentDeletion) return { type: 'documentDeletion', deleted: Number((s.DocumentDeletion as Json).deleted ?? 0) };
  }
  return { type: 'other' };
}

export const isFinished = (u: LegacyUpdate) => u.status === 'processed' || u.status === 'failed' || u.status === 'aborted';

// --- the task model (v4/v5) -----------------------------------------------------------------------

export type TaskContent =
  | { type: 'documentAddition'; contentUuid: string | null; method: Method; primaryKey: string | null; documentsCount: number; allowIndexCreation: boolean }
  | { type: 'documentDeletion'; ids: string[] }
  | { type: 'clear' }
  | { type: 'settings'; settings: LegacySettings; isDeletion: boolean; allowIndexCreation: boolean }
  | { type: 'indexDeletion' }
  | { type: 'indexCreation'; primaryKey: string | null }
  | { type: 'indexUpdate'; primaryKey: string | null }
  | { type: 'dump'; uid: string };

type TaskResult =
  | { type: 'documentAddition'; indexedDocuments: number }
  | { type: 'documentDeletion'; deletedDocuments: number }
  | { type: 'clearAll'; deletedDocuments: number }
  | { type: 'other' };

type TaskEvent =
  | { type: 'created' | 'batched' | 'processing'; at: string }
  | { type: 'succeeded'; at: string; result: TaskResult }
  /** `code` is a v4/v5 code name. */
  | { type: 'failed'; at: string; error: { message: string; code: string } };

export interface LegacyTask {
  id: number;
  indexUid: string | null;
  content: TaskContent;
  events: TaskEvent[];
}

export const taskFinished = (t: LegacyTask) => ['succeeded', 'failed'].includes(t.events.at(-1)?.type ?? '');

export function contentUuid(t: LegacyTask): string | null {
  return t.content.type === 'documentAddition' ? t.content.contentUuid : null;
}

/** v3 -> v4: an update becomes task `id` of index `indexUid`. */
export function updateToTask(u: LegacyUpdate, id: number, indexUid: string): LegacyTask {
  const k = u.kind;
  const content: TaskContent =
    k.type === 'deleteDocuments'
      ? { type: 'documentDeletion', ids: k.ids }
      : k.type === 'documentAddition'
        ? { type: 'documentAddition', contentUuid: k.contentUuid, method: k.method, primaryKey: k.primaryKey, documentsCount: 0, allowIndexCreation: true }
        : k.type === 'settings'
          ? { type: 'settings', settings: k.settings, isDeletion: false, allowIndexCreation: true }
          : { type: 'clear' };
  const events: TaskEvent[] = [{ type: 'created', at: u.enqueuedAt }];
  if (u.status === 'processed' || u.status === 'failed') events.push({ type: 'processing', at: u.startedAt ?? u.enqueuedAt });
  if (u.status === 'processed') {
    const r = u.result ?? { type: 'other' };
    const result: TaskResult =
      r.type === 'documentsAddition' ? { type: 'documentAddition', indexedDocuments: r.count } : r.type === 'documentDeletion' ? { type: 'documentDeletion', deletedDocuments: r.deleted } : { type: 'other' };
    events.push({ type: 'succeeded', at: u.finishedAt!, result });
  } else if (u.status === 'failed') {
    events.push({ type: 'failed', at: u.finishedAt!, error: u.error ?? { message: '', code: 'unretrievable_error_code' } });
  } else if (u.status === 'aborted') {
    events.push({ type: 'failed', at: u.finishedAt!, error: { message: 'Task was aborted in a previous version of meilisearch.', code: 'unretrievable_error_code' } });
  }
  return { id, indexUid, content, events };
}

/** A line of a v4 (`index_uid` beside the content) or v5 (`index_uid` inside it) `updates/data.jsonl`. */
export function v4v5Task(raw: Json): LegacyTask {
  const [name, body] = variant(raw.content);
  const c = (body ?? {}) as Json;
  const indexUid = ((raw.index_uid as string | undefined) ?? (c.index_uid as string | undefined) ?? null) as string | null;
  let content: TaskContent;
  switch (name) {
    case 'DocumentAddition':
      content = {
        type: 'documentAddition',
        contentUuid: (c.content_uuid as string | undefined) ?? null,
        method: c.merge_strategy as Method,
        primaryKey: (c.primary_key as string | null | undefined) ?? null,
        documentsCount: Number(c.documents_count ?? 0),
        allowIndexCreation: c.allow_index_creation !== false,
      };
      break;
    case 'DocumentDeletion': {
      // v4: the deletion is the content itself (`"Clear"` or `{"Ids": [...]}`); v5: under `deletion`
      const [kind, ids] = variant(typeof body === 'object' && body !== null && 'deletion' in body ? (body as Json).deletion : body);
      content = kind === 'Ids' ? { type: 'documentDeletion', ids: ids as string[] } : { type: 'clear' };
      break;
    }
    case 'SettingsUpdate':
      content = { type: 'settings', settings: (c.settings as LegacySettings | undefined) ?? {}, isDeletion: c.is_deletion === true, allowIndexCreation: c.allow_index_creation !== false };
      break;
    case 'IndexDeletion':
      content = { type: 'indexDeletion' };
      break;
    case 'IndexCreation':
      content = { type: 'indexCreation', primaryKey: (c.primary_key as string | null | undefined) ?? null };
      break;
    case 'IndexUpdate':
      content = { type: 'indexUpdate', primaryKey: (c.primary_key as string | null | undefined) ?? null };
      break;
    case 'Dump':
      content = { type: 'dump', uid: String(c.uid ?? '') };
      break;
    default:
      throw new Error(`task ${String(raw.id)} has an unknown content \`${name}\``);
  }
  const events = ((raw.events as unknown[] | undefined) ?? []).map(taskEvent);
  return { id: Number(raw.id), indexUid, content, events };
}

function taskEvent(raw: unknown): TaskEvent {
  const [name, body] = variant(raw);
  switch (name) {
    case 'Created':
      return { type: 'created', at: body as string };
    case 'Processing':
      return { type: 'processing', at: body as string };
    case 'Batched':
      return { type: 'batched', at: (body as Json).timestamp as string };
    case 'Succeded': // v4's spelling
    case 'Succeeded': {
      const [result, r] = variant((body as Json).result);
      const deleted = Number((r as Json | undefined)?.deleted_documents ?? 0);
      const taskResult: TaskResult =
        result === 'DocumentAddition'
          ? { type: 'documentAddition', indexedDocuments: Number((r as Json).indexed_documents ?? 0) }
          : result === 'DocumentDeletion'
            ? { type: 'documentDeletion', deletedDocuments: deleted }
            : result === 'ClearAll'
              ? { type: 'clearAll', deletedDocuments: deleted }
              : { type: 'other' };
      return { type: 'succeeded', at: (body as Json).timestamp as string, result: taskResult };
    }
    case 'Failed': {
      const error = ((body as Json).error ?? {}) as Json;
      return { type: 'failed', at: (body as Json).timestamp as string, error: { message: String(error.message ?? ''), code: String(error.code ?? '') } };
    }
    default:
      throw new Error(`unknown task event \`${name}\``);
  }
}

/** Serde's externally tagged enums: `"Unit"` or `{"Variant": body}`. */
function variant(value: unknown): [string, unknown] {
  if (typeof value === 'string') return [value, undefined];
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 1) return entries[0]!;
  }
  throw new Error(`expected an enum variant, found \`${JSON.stringify(value)}\``);
}

// --- v5 -> v6 -------------------------------------------------------------------------------------

export interface V6TaskContext {
  keys: DumpKey[];
  instanceUid: string | null;
  warn: (m: string) => void;
}

/** A task as a v6 dump line (the reference's `TaskDump`, plus the public duration). */
export function taskToV6(task: LegacyTask, ctx: V6TaskContext): DumpTask {
  const last = task.events.at(-1);
  const created = task.events[0];
  if (!last || !created || created.type !== 'created') throw new Error(`task ${task.id} has no creation event`);
  const status = last.type === 'succeeded' ? 'succeeded' : last.type === 'failed' ? 'failed' : 'enqueued';
  // a task processing at dump time is enqueued again, as if it had never started
  const startedAt = status === 'enqueued' ? null : (task.events.find((e) => e.type === 'processing')?.at ?? null);
  const finishedAt = last.type === 'succeeded' || last.type === 'failed' ? last.at : null;
  const result = last.type === 'succeeded' ? last.result : null;
  const failed = last.type === 'failed';
  const count = (matching: TaskResult['type'], key: 'indexedDocuments' | 'deletedDocuments') =>
    failed ? 0 : result?.type === matching ? ((result as Json)[key] as number) : null;

  const c = task.content;
  let type: DumpTask['type'];
  let details: Json;
  switch (c.type) {
    case 'indexCreation':
    case 'indexUpdate':
      type = { [c.type]: { primary_key: c.primaryKey } };
      details = { IndexInfo: { primary_key: c.primaryKey } };
      break;
    case 'indexDeletion':
      type = 'indexDeletion';
      details = { ClearAll: { deleted_documents: result?.type === 'clearAll' ? result.deletedDocuments : null } };
      break;
    case 'documentAddition':
      type = { documentImport: { primary_key: c.primaryKey, documents_count: c.documentsCount, method: c.method, allow_index_creation: c.allowIndexCreation } };
      details = { DocumentAdditionOrUpdate: { received_documents: c.documentsCount, indexed_documents: count('documentAddition', 'indexedDocuments') } };
      break;
    case 'clear':
      type = 'documentClear';
      details = { ClearAll: { deleted_documents: count('clearAll', 'deletedDocuments') } };
      break;
    case 'documentDeletion':
      type = { documentDeletion: { documents_ids: c.ids } };
      details = { DocumentDeletion: { provided_ids: c.ids.length, deleted_documents: count('documentDeletion', 'deletedDocuments') } };
      break;
    case 'settings': {
      const settings = v5ToV6Settings(c.settings, ctx.warn);
      type = { settings: { settings, is_deletion: c.isDeletion, allow_index_creation: c.allowIndexCreation } };
      details = { SettingsUpdate: { settings } };
      break;
    }
    case 'dump':
      type = { dumpCreation: { keys: ctx.keys, instance_uid: ctx.instanceUid } };
      details = { Dump: { dump_uid: c.uid } };
      break;
  }
  const error = last.type === 'failed' ? v6Error(last.error.message, v4CodeToV6(last.error.code)) : null;
  return {
    uid: task.id,
    batchUid: null,
    indexUid: c.type === 'dump' ? null : task.indexUid,
    status,
    type,
    canceledBy: null,
    details,
    error,
    duration: startedAt && finishedAt ? isoDuration(Date.parse(finishedAt) - Date.parse(startedAt)) : null,
    enqueuedAt: created.at,
    startedAt,
    finishedAt,
  };
}
