/** `/indexes`, `/indexes/:indexUid` and `/swap-indexes`. */
import type { FastifyInstance } from 'fastify';
import { SearchError } from '../../engine/errors.js';
import type { HttpEngine } from '../engine-port.js';
import { indexUidReason, isValidIndexUid } from '../index-uid.js';
import { booleanField, expectObject, invalidType, invalidValue, missingField, readJsonBody, stringField } from '../json-body.js';
import type { IndexSwap } from '../../engine/types.js';
import { checkKnownParams, pagination, writeOptions } from '../query-params.js';
import { accepted, addRoute } from '../route.js';
import { render } from '../wire-values.js';
import { assertCanCreateIndex, assertIndexesAuthorized, visibleIndexes } from '../auth.js';

const IMMUTABLE = { createdAt: 'immutable_index_created_at', updatedAt: 'immutable_index_updated_at' };

function bodyIndexUid(value: unknown, path: string): string {
  if (typeof value !== 'string') throw invalidType(path, 'a string', value, 'invalid_index_uid');
  if (!isValidIndexUid(value)) throw invalidValue(path, indexUidReason(value), 'invalid_index_uid');
  return value;
}

/** `[{indexes: [a, b], rename?}, …]` → typed swaps, each with exactly two valid uids. */
export function parseSwaps(body: unknown): IndexSwap[] {
  if (!Array.isArray(body)) throw invalidType('', 'an array', body, 'bad_request');
  return body.map((item, i) => {
    const swap = expectObject(item, { fields: ['indexes', 'rename'] }, `[${i}]`);
    const rename = swap.rename === null ? undefined : booleanField(swap, 'rename', 'invalid_swap_rename');
    if (swap.indexes === undefined) throw missingField('indexes', 'missing_swap_indexes');
    if (!Array.isArray(swap.indexes)) throw invalidType(`[${i}].indexes`, 'an array', swap.indexes, 'invalid_swap_indexes');
    const uids = swap.indexes.map((uid, j) => bodyIndexUid(uid, `[${i}].indexes[${j}]`));
    if (uids.length !== 2)
      throw new SearchError(
        'invalid_swap_indexes',
        `Two indexes must be given for each swap. The list \`${render(uids)}\` contains ${uids.length} indexes.`,
      );
    return { indexes: [uids[0]!, uids[1]!] as [string, string], rename: rename ?? false };
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
    handler: async ({ request, reply, query }) => {
      checkKnownParams(query, ['customMetadata']);
      const body = expectObject(readJsonBody(request), { fields: ['uid', 'primaryKey'] });
      if (body.uid === undefined) throw missingField('uid', 'missing_index_uid');
      const uid = bodyIndexUid(body.uid, '.uid');
      assertCanCreateIndex(request, uid);
      const primaryKey = stringField(body, 'primaryKey', 'invalid_index_primary_key', { nullable: true });
      return accepted(reply, await engine.createIndex(uid, { ...(primaryKey === undefined ? {} : { primaryKey }), ...writeOptions(query) }));
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
    handler: async ({ request, reply, query, indexUid }) => {
      checkKnownParams(query, ['customMetadata']);
      const body = expectObject(readJsonBody(request), { fields: ['primaryKey', 'uid'], immutable: IMMUTABLE });
      const primaryKey = stringField(body, 'primaryKey', 'invalid_index_primary_key', { nullable: true });
      const options: { primaryKey?: string | null; uid?: string; customMetadata?: string } = writeOptions(query);
      if (primaryKey !== undefined) options.primaryKey = primaryKey;
      // a new uid renames the index; the key must be allowed on the new name as well
      if (body.uid !== undefined && body.uid !== null) {
        options.uid = bodyIndexUid(body.uid, '.uid');
        assertIndexesAuthorized(request, [options.uid]);
      }
      return accepted(reply, await engine.updateIndex(indexUid, options));
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/indexes/:indexUid',
    action: 'indexes.delete',
    handler: async ({ reply, query, indexUid }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.deleteIndex(indexUid, writeOptions(query)));
    },
  });
  addRoute(app, {
    method: 'POST',
    url: '/indexes/:indexUid/compact',
    action: 'indexes.compact',
    handler: async ({ reply, query, indexUid }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.compactIndex(indexUid, writeOptions(query)));
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/swap-indexes',
    action: 'indexes.swap',
    handler: async ({ request, reply, query }) => {
      checkKnownParams(query, ['customMetadata']);
      const swaps = parseSwaps(readJsonBody(request));
      assertIndexesAuthorized(request, swaps.flatMap((s) => s.indexes));
      return accepted(reply, await engine.swapIndexes(swaps, writeOptions(query)));
    },
  });
}
