/** `/indexes`, `/indexes/:indexUid` and `/swap-indexes`. */
import type { FastifyInstance } from 'fastify';
import { SearchError } from '../../engine/errors.js';
import type { HttpEngine } from '../engine-port.js';
import { indexUidReason, isValidIndexUid } from '../index-uid.js';
import { expectObject, invalidType, invalidValue, missingField, readJsonBody, stringField } from '../json-body.js';
import { checkKnownParams, pagination } from '../query-params.js';
import { accepted, addRoute } from '../route.js';
import { render } from '../wire-values.js';
import { assertCanCreateIndex, assertIndexesAuthorized, visibleIndexes } from '../auth.js';

const IMMUTABLE = { uid: 'immutable_index_uid', createdAt: 'immutable_index_created_at', updatedAt: 'immutable_index_updated_at' };

function bodyIndexUid(value: unknown, path: string): string {
  if (typeof value !== 'string') throw invalidType(path, 'a string', value, 'invalid_index_uid');
  if (!isValidIndexUid(value)) throw invalidValue(path, indexUidReason(value), 'invalid_index_uid');
  return value;
}

/** `[{indexes: [a, b]}, …]` → typed swaps, each with exactly two valid uids. */
export function parseSwaps(body: unknown): Array<{ indexes: [string, string] }> {
  if (!Array.isArray(body)) throw invalidType('', 'an array', body, 'bad_request');
  return body.map((item, i) => {
    const swap = expectObject(item, { fields: ['indexes'] }, `[${i}]`);
    if (swap.indexes === undefined) throw missingField('indexes', 'missing_swap_indexes');
    if (!Array.isArray(swap.indexes)) throw invalidType(`[${i}].indexes`, 'an array', swap.indexes, 'invalid_swap_indexes');
    const uids = swap.indexes.map((uid, j) => bodyIndexUid(uid, `[${i}].indexes[${j}]`));
    if (uids.length !== 2)
      throw new SearchError(
        'invalid_swap_indexes',
        `Two indexes must be given for each swap. The list \`${render(uids)}\` contains ${uids.length} indexes.`,
      );
    return { indexes: [uids[0]!, uids[1]!] as [string, string] };
  });
}

export function indexRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'GET',
    url: '/indexes',
    action: 'indexes.get',
    handler: ({ request, query }) => {
      checkKnownParams(query, ['offset', 'limit']);
      return visibleIndexes(request, (q) => engine.listIndexes(q), pagination(query, 'index'));
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/indexes',
    action: 'indexes.create',
    handler: async ({ request, reply }) => {
      const body = expectObject(readJsonBody(request), { fields: ['uid', 'primaryKey'] });
      if (body.uid === undefined) throw missingField('uid', 'missing_index_uid');
      const uid = bodyIndexUid(body.uid, '.uid');
      assertCanCreateIndex(request, uid);
      const primaryKey = stringField(body, 'primaryKey', 'invalid_index_primary_key', { nullable: true });
      return accepted(reply, await engine.createIndex(uid, primaryKey === undefined ? {} : { primaryKey }));
    },
  });

  addRoute(app, {
    method: 'GET',
    url: '/indexes/:indexUid',
    action: 'indexes.get',
    handler: ({ query, indexUid }) => {
      checkKnownParams(query, []);
      return engine.getIndex(indexUid);
    },
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/indexes/:indexUid',
    action: 'indexes.update',
    handler: async ({ request, reply, indexUid }) => {
      const body = expectObject(readJsonBody(request), { fields: ['primaryKey'], immutable: IMMUTABLE });
      const primaryKey = stringField(body, 'primaryKey', 'invalid_index_primary_key', { nullable: true });
      return accepted(reply, await engine.updateIndex(indexUid, primaryKey === undefined ? {} : { primaryKey }));
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/indexes/:indexUid',
    action: 'indexes.delete',
    handler: async ({ reply, indexUid }) => accepted(reply, await engine.deleteIndex(indexUid)),
  });

  addRoute(app, {
    method: 'POST',
    url: '/swap-indexes',
    action: 'indexes.swap',
    handler: async ({ request, reply }) => {
      const swaps = parseSwaps(readJsonBody(request));
      assertIndexesAuthorized(request, swaps.flatMap((s) => s.indexes));
      return accepted(reply, await engine.swapIndexes(swaps));
    },
  });
}
