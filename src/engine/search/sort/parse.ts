/**
 * The `sort` search parameter: `field:asc|desc` on `sortableAttributes`, and
 * `_geoPoint(lat, lng):asc|desc` when `_geo` is sortable. Errors are `invalid_search_sort` with
 * the reference messages.
 */
import { SearchError } from '../../errors.js';
import type { Settings } from '../../settings/types.js';
import { isSortable } from '../facets/attributes.js';
import type { LatLng } from '../geo/distance.js';

export type SortOrder = 'asc' | 'desc';

export type SortCriterion =
  | { kind: 'field'; field: string; order: SortOrder }
  | { kind: 'geo'; point: LatLng; order: SortOrder };

const CODE = 'invalid_search_sort';
const GEO_POINT = /^_geoPoint\(\s*([^,()\s]+)\s*,\s*([^,()\s]+)\s*\)$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const RESERVED = new Set(['_geo', '_geoDistance', '_geoRadius', '_geoBoundingBox', '_geoPolygon']);

/** Split the GET form `a:asc,_geoPoint(1, 2):desc` on the commas outside parentheses. */
export function splitSortString(sort: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of sort) {
    if (c === '(') depth++;
    if (c === ')') depth = Math.max(0, depth - 1);
    if (c === ',' && depth === 0) {
      out.push(current.trim());
      current = '';
    } else current += c;
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
}

function notSortable(settings: Settings, field: string, code = CODE): SearchError {
  const sortable = [...(settings.sortableAttributes ?? [])].sort();
  const available = sortable.length
    ? `Available sortable attributes are: \`${sortable.join(', ')}\`.`
    : 'This index does not have configured sortable attributes.';
  return new SearchError(code, `Attribute \`${field}\` is not sortable. ${available}`);
}

function parseOne(expression: string, settings: Settings, CODE: string): SortCriterion {
  const colon = expression.lastIndexOf(':');
  const order = colon >= 0 ? expression.slice(colon + 1) : '';
  const target = colon >= 0 ? expression.slice(0, colon) : expression;
  if (target.startsWith('_geoPoint')) {
    const m = GEO_POINT.exec(target);
    if (!m || (order !== 'asc' && order !== 'desc') || !FLOAT.test(m[1]!) || !FLOAT.test(m[2]!)) {
      throw new SearchError(
        CODE,
        `Invalid syntax for the geo parameter: expected expression formated like \`_geoPoint(latitude, longitude)\` and ending by \`:asc\` or \`:desc\`, found \`${expression}\`.`,
      );
    }
    const lat = Number(m[1]);
    const lng = Number(m[2]);
    if (lat < -90 || lat > 90) throw new SearchError(CODE, `Bad latitude \`${m[1]}\`. Latitude must be contained between -90 and 90 degrees.`);
    if (lng < -180 || lng > 180) throw new SearchError(CODE, `Bad longitude \`${m[2]}\`. Longitude must be contained between -180 and 180 degrees.`);
    if (!isSortable(settings, '_geo')) throw notSortable(settings, '_geo', CODE);
    return { kind: 'geo', point: [lat, lng], order };
  }
  if (RESERVED.has(target) || target.startsWith('_geoRadius(') || target.startsWith('_geoBoundingBox(')) {
    const name = target.replace(/\(.*$/, '');
    throw new SearchError(
      CODE,
      `\`${name}\` is a reserved keyword and thus can't be used as a sort expression. Use the _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates.`,
    );
  }
  if (colon < 0 || (order !== 'asc' && order !== 'desc') || target === '') {
    throw new SearchError(
      CODE,
      `Invalid syntax for the sort parameter: expected expression ending by \`:asc\` or \`:desc\`, found \`${expression}\`.`,
    );
  }
  if (!isSortable(settings, target)) throw notSortable(settings, target, CODE);
  return { kind: 'field', field: target, order };
}

/**
 * Undo a comma split made inside parentheses: a GET `sort=_geoPoint(1,2):asc` list split on every
 * comma arrives as `['_geoPoint(1', '2):asc']`.
 */
function rejoinParentheses(items: readonly string[]): string[] {
  const out: string[] = [];
  let pending: string | null = null;
  for (const item of items) {
    const current: string = pending === null ? item : `${pending},${item}`;
    const depth = (current.match(/\(/g)?.length ?? 0) - (current.match(/\)/g)?.length ?? 0);
    if (depth > 0) pending = current;
    else {
      out.push(current);
      pending = null;
    }
  }
  if (pending !== null) out.push(pending);
  return out;
}

/** Each criterion is a level of the bucket sort, walked for every search (README, "Limits"). */
export const MAX_SORT_CRITERIA = 64;

/**
 * Parse and validate `sort` (array of strings, or the comma-separated GET form). Returns null
 * when there is nothing to sort on. The documents routes sort too, with their own error code and
 * without needing the `sort` ranking rule.
 */
export function parseSort(
  sort: unknown,
  settings: Settings,
  options: { errorCode?: string; requireSortRule?: boolean } = {},
): SortCriterion[] | null {
  const CODE = options.errorCode ?? 'invalid_search_sort';
  if (sort === null || sort === undefined) return null;
  const items = typeof sort === 'string' ? splitSortString(sort) : sort;
  if (!Array.isArray(items) || items.some((s) => typeof s !== 'string')) {
    throw new SearchError(CODE, `Invalid value type at \`.sort\`: expected an array, but found ${JSON.stringify(sort)}`);
  }
  if (items.length === 0) return null;
  const expressions = rejoinParentheses(items as string[]);
  if (expressions.length > MAX_SORT_CRITERIA) {
    throw new SearchError(CODE, `Invalid value at \`.sort\`: expected at most ${MAX_SORT_CRITERIA} sort criteria, but found ${expressions.length}.`);
  }
  if (options.requireSortRule !== false && !(settings.rankingRules ?? []).includes('sort')) {
    throw new SearchError(
      CODE,
      'You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.',
    );
  }
  return expressions.map((s) => parseOne(s.trim(), settings, CODE));
}

/** Parse a custom ranking rule `field:asc|desc` (no validation against sortable attributes). */
export function parseRankingRuleSort(rule: string): SortCriterion | null {
  const m = /^(.+):(asc|desc)$/.exec(rule);
  return m ? { kind: 'field', field: m[1]!, order: m[2] as SortOrder } : null;
}
