/**
 * Sort criteria (`sort` parameter and `field:asc|desc` ranking rules) over a bucket of
 * documents. Values come from each document (`getPath`); numbers sort before strings, documents
 * without the field come last, arrays sort by their smallest (asc) or largest (desc) value.
 */
import { SearchError } from '../../errors.js';
import { getPath } from '../../index/documents.js';
import type { IndexStore } from '../../index/store.js';
import type { Settings } from '../../settings/types.js';
import { coversPath } from '../keyword/fields.js';

export interface SortCriterion {
  field: string;
  order: 'asc' | 'desc';
}

const CRITERION = /^([^:]+):(asc|desc)$/;

export function parseSortCriteria(sort: readonly string[], settings: Settings): SortCriterion[] {
  return sort.map((s) => {
    const m = CRITERION.exec(s.trim());
    if (!m) {
      throw new SearchError('invalid_search_sort', `Invalid syntax for the sort parameter: expected expression ending by \`:asc\` or \`:desc\`, found \`${s}\`.`);
    }
    const field = m[1]!.trim();
    if (field.startsWith('_geoPoint(')) {
      throw new SearchError('invalid_search_sort', `The \`_geoPoint\` sort rule needs the geo sort module, which this index does not provide.`);
    }
    if (!settings.sortableAttributes.some((a) => coversPath(a, field))) {
      const available = [...settings.sortableAttributes].sort().join(', ');
      throw new SearchError(
        'invalid_search_sort',
        `Attribute \`${field}\` is not sortable. ${settings.sortableAttributes.length === 0 ? 'This index does not have configured sortable attributes.' : `Available sortable attributes are: \`${available}\`.`}`,
      );
    }
    return { field, order: m[2] as 'asc' | 'desc' };
  });
}

type SortValue = number | string | null;

function valueOf(doc: Record<string, unknown> | undefined, c: SortCriterion): SortValue {
  if (!doc) return null;
  const raw = getPath(doc, c.field);
  const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is number | string => typeof v === 'number' || typeof v === 'string');
  if (values.length === 0) return null;
  values.sort(compareValues);
  return c.order === 'asc' ? values[0]! : values[values.length - 1]!;
}

function compareValues(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Split `docids` into buckets of equal value, in the criterion's order. */
export function sortBuckets(store: IndexStore, docids: readonly number[], c: SortCriterion): Array<{ value: SortValue; docids: number[] }> {
  const withValues = docids.map((d) => ({ d, v: valueOf(store.getDocument(d), c) }));
  withValues.sort((p, q) => {
    if (p.v === null || q.v === null) return compareValues(p.v, q.v) || p.d - q.d;
    return (c.order === 'asc' ? compareValues(p.v, q.v) : compareValues(q.v, p.v)) || p.d - q.d;
  });
  const out: Array<{ value: SortValue; docids: number[] }> = [];
  for (const { d, v } of withValues) {
    const last = out[out.length - 1];
    if (last && last.value === v) last.docids.push(d);
    else out.push({ value: v, docids: [d] });
  }
  return out;
}
