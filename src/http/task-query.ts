/**
 * The task filters of `GET /tasks`, `GET /batches`, `POST /tasks/cancel` and `DELETE /tasks`, parsed
 * from the query string: comma lists, `*` meaning "any", dates as `YYYY-MM-DD` or RFC 3339 (a bare
 * date in an `after*` filter means after that whole day), and the reference's `invalid_task_*` codes.
 */
import { SearchError } from '../engine/errors.js';
import { TASK_STATUSES } from '../engine/types.js';
import type { TaskFilter, TaskListQuery, TaskStatus, TaskType } from '../engine/types.js';
import { indexUidReason, isValidIndexUid } from './index-uid.js';
import { boolParam, checkKnownParams, paramError, parseUint, uintParam } from './query-params.js';
import type { QueryParams } from './query-params.js';
import { quoteList } from './wire-values.js';

const DATE_FILTERS = [
  ['afterEnqueuedAt', 'invalid_task_after_enqueued_at'],
  ['beforeEnqueuedAt', 'invalid_task_before_enqueued_at'],
  ['afterStartedAt', 'invalid_task_after_started_at'],
  ['beforeStartedAt', 'invalid_task_before_started_at'],
  ['afterFinishedAt', 'invalid_task_after_finished_at'],
  ['beforeFinishedAt', 'invalid_task_before_finished_at'],
] as const;

/** Filter parameters, in the order the reference lists them in `missing_task_filters`. */
export const FILTER_PARAMS = [
  'uids',
  'batchUids',
  'canceledBy',
  'types',
  'statuses',
  'indexUids',
  'afterEnqueuedAt',
  'beforeEnqueuedAt',
  'afterStartedAt',
  'beforeStartedAt',
  'afterFinishedAt',
  'beforeFinishedAt',
] as const;

const LIST_PARAMS = ['limit', 'from', 'reverse', ...FILTER_PARAMS] as const;

/** `name[i]` when the list has several items, as the reference locates a bad item. */
function itemName(name: string, index: number, count: number): string {
  return count > 1 ? `${name}[${index}]` : name;
}

/** Comma list where `*` anywhere means no restriction (undefined). */
function starList(query: QueryParams, name: string): string[] | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  const items = text.split(',').map((s) => s.trim());
  if (items.includes('*')) return undefined;
  return items;
}

function uintList(query: QueryParams, name: string, code: string): number[] | undefined {
  const items = starList(query, name);
  return items?.map((item, i) => parseUint(item, itemName(name, i, items.length), code));
}

/**
 * The task types the reference documents, in its order. Filters accept all of them; those this
 * engine never creates (`networkTopologyChange`) simply match nothing.
 */
export const DOCUMENTED_TASK_TYPES: readonly string[] = [
  'documentAdditionOrUpdate',
  'documentEdition',
  'documentDeletion',
  'settingsUpdate',
  'indexCreation',
  'indexDeletion',
  'indexUpdate',
  'indexSwap',
  'taskCancelation',
  'taskDeletion',
  'dumpCreation',
  'snapshotCreation',
  'export',
  'upgradeDatabase',
  'indexCompaction',
  'networkTopologyChange',
  'dsrUpdate',
  'dsrClear',
];

/**
 * A comma list of enum names, matched ASCII case-insensitively as the reference does
 * (`UpgradeDatabase` and `SUCCEEDED` are accepted) and given back in their canonical spelling.
 */
function enumList<T extends string>(
  query: QueryParams,
  name: string,
  code: string,
  allowed: readonly string[],
  what: string,
  plural: string,
): T[] | undefined {
  const items = starList(query, name);
  return items?.map((item) => {
    const canonical = allowed.find((a) => a.toLowerCase() === item.toLowerCase());
    if (canonical === undefined)
      throw paramError(name, `\`${item}\` is not a valid task ${what}. Available ${plural} are ${quoteList(allowed)}.`, code);
    return canonical as T;
  });
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function validDay(y: number, m: number, d: number): boolean {
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** Parse one date filter; a bare day used as an `after` bound moves to the next midnight. */
export function parseTaskDate(text: string, after: boolean): Date | undefined {
  const day = DAY.exec(text);
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    if (!validDay(y, m, d)) return undefined;
    return new Date(Date.UTC(y, m - 1, after ? d + 1 : d));
  }
  const full = RFC3339.exec(text);
  if (!full) return undefined;
  const [y, m, d, hh, mm, ss] = full.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (!validDay(y, m, d) || hh > 23 || mm > 59 || ss > 60) return undefined;
  const date = new Date(text.replace(' ', 'T'));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function parseFilter(query: QueryParams): { filter: TaskFilter; given: boolean } {
  const filter: TaskFilter = {};
  const uids = uintList(query, 'uids', 'invalid_task_uids');
  if (uids) filter.uids = uids;
  const batchUids = uintList(query, 'batchUids', 'invalid_batch_uids');
  if (batchUids) filter.batchUids = batchUids;
  const canceledBy = uintList(query, 'canceledBy', 'invalid_task_canceled_by');
  if (canceledBy) filter.canceledBy = canceledBy;
  const types = enumList<TaskType>(query, 'types', 'invalid_task_types', DOCUMENTED_TASK_TYPES, 'type', 'types');
  if (types) filter.types = types;
  const statuses = enumList<TaskStatus>(query, 'statuses', 'invalid_task_statuses', TASK_STATUSES, 'status', 'statuses');
  if (statuses) filter.statuses = statuses;
  const indexUids = starList(query, 'indexUids');
  if (indexUids) {
    indexUids.forEach((uid, i) => {
      if (!isValidIndexUid(uid)) throw paramError(itemName('indexUids', i, indexUids.length), indexUidReason(uid), 'invalid_index_uid');
    });
    filter.indexUids = indexUids;
  }
  for (const [name, code] of DATE_FILTERS) {
    const text = query[name];
    if (text === undefined || text.trim() === '*') continue;
    const date = parseTaskDate(text.trim(), name.startsWith('after'));
    if (!date)
      throw paramError(name, `\`${text}\` is an invalid date-time. It should follow the YYYY-MM-DD or RFC 3339 date-time format.`, code);
    filter[name] = date;
  }
  const given = FILTER_PARAMS.some((name) => query[name] !== undefined);
  // Only stars were given (`statuses=*`): that selects every task, which the engine expresses
  // as "any status" since it reads an empty filter as a missing one.
  if (given && Object.keys(filter).length === 0) filter.statuses = [...TASK_STATUSES];
  return { filter, given };
}

/** `GET /tasks` and `GET /batches`. */
export function parseTaskListQuery(query: QueryParams): TaskListQuery {
  checkKnownParams(query, LIST_PARAMS);
  const out: TaskListQuery = { ...parseFilter(query).filter };
  out.limit = uintParam(query, 'limit', 'invalid_task_limit') ?? 20;
  const from = uintParam(query, 'from', 'invalid_task_from');
  if (from !== undefined) out.from = from;
  const reverse = boolParam(query, 'reverse', 'invalid_task_reverse');
  if (reverse !== undefined) out.reverse = reverse;
  return out;
}

/**
 * `POST /tasks/cancel` and `DELETE /tasks`: at least one filter must be given (`statuses=*` counts:
 * it means every task), so that nobody cancels or deletes everything by accident.
 */
export function parseTaskFilterQuery(query: QueryParams, verb: 'cancel' | 'delete'): TaskFilter {
  checkKnownParams(query, FILTER_PARAMS);
  const { filter, given } = parseFilter(query);
  if (!given)
    throw new SearchError(
      'missing_task_filters',
      `Query parameters to filter the tasks to ${verb} are missing. Available query parameters are: ${quoteList(FILTER_PARAMS)}.`,
    );
  return filter;
}
