/** `POST /indexes/:indexUid/fields`: the index's fields and their settings, filtered and paginated. */
import type { FastifyInstance } from 'fastify';
import { SearchError } from '../../engine/errors.js';
import type { FieldsFilter, FieldsQuery } from '../../engine/settings/field-metadata.js';
import type { HttpEngine } from '../engine-port.js';
import { booleanField, expectObject, invalidType, readJsonBody, stringListField, uintField } from '../json-body.js';
import { checkKnownParams } from '../query-params.js';
import { addRoute } from '../route.js';
import { quoteList } from '../wire-values.js';

const FILTER_FLAGS = ['displayed', 'searchable', 'sortable', 'distinct', 'rankingRule', 'filterable'] as const;
const FILTER_FIELDS = ['attributePatterns', ...FILTER_FLAGS];

const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function parseFilter(value: unknown): FieldsFilter | null {
  if (value === null) return null;
  const code = 'invalid_index_fields_filter';
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidType('.filter', 'an object', value, code);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!FILTER_FIELDS.includes(key)) throw new SearchError(code, `Unknown field \`${key}\` inside \`.filter\`: expected one of ${quoteList(FILTER_FIELDS)}`);
  }
  const filter: FieldsFilter = {};
  const patterns = stringListField(record, 'attributePatterns', `${code}_attribute_patterns`, { nullable: true });
  if (patterns) filter.attributePatterns = patterns;
  for (const flag of FILTER_FLAGS) {
    if (record[flag] === null) continue;
    const wanted = booleanField(record, flag, `${code}_${snake(flag)}`);
    if (wanted !== undefined) filter[flag] = wanted;
  }
  return filter;
}

export function parseFieldsQuery(value: unknown): FieldsQuery {
  const body = expectObject(value, { fields: ['offset', 'limit', 'filter'] });
  const query: FieldsQuery = {};
  const offset = uintField(body, 'offset', 'invalid_index_offset');
  if (offset !== undefined) query.offset = offset;
  const limit = uintField(body, 'limit', 'invalid_index_limit');
  if (limit !== undefined) query.limit = limit;
  if (body.filter !== undefined) query.filter = parseFilter(body.filter);
  return query;
}

export function fieldRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'POST',
    url: '/indexes/:indexUid/fields',
    action: 'fields.post',
    handler: ({ request, query, indexUid }) => {
      checkKnownParams(query, []);
      return engine.listFields(indexUid, parseFieldsQuery(readJsonBody(request)));
    },
  });
}
