/**
 * `/indexes/:indexUid/documents…`. Additions hand the raw body to the engine with the format its
 * Content-Type names (the engine parses and persists it before the 202); reads and deletions map
 * query strings and JSON bodies to typed engine calls.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SearchError } from '../../engine/errors.js';
import type { DocumentPayload, DocumentsQuery } from '../../engine/types.js';
import { mayCreateIndex } from '../auth.js';
import type { HttpEngine } from '../engine-port.js';
import {
  booleanField,
  expectObject,
  invalidContentType,
  invalidType,
  mediaType,
  missingContentType,
  missingField,
  rawBody,
  readJsonBody,
  stringListField,
  uintField,
} from '../json-body.js';
import { boolParam, checkKnownParams, listParam, pagination, paramError, writeOptions } from '../query-params.js';
import type { QueryParams } from '../query-params.js';
import { accepted, addRoute } from '../route.js';

const FORMATS: Record<string, DocumentPayload['format']> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'text/csv': 'csv',
};
export const DOCUMENT_CONTENT_TYPES = Object.keys(FORMATS);

/** The payload of a document addition: format from the Content-Type, raw bytes, CSV delimiter. */
export function documentPayload(request: FastifyRequest, query: QueryParams): DocumentPayload {
  const type = mediaType(request);
  if (type === undefined) throw missingContentType(DOCUMENT_CONTENT_TYPES);
  const format = FORMATS[type];
  if (!format) throw invalidContentType(request.headers['content-type']!, DOCUMENT_CONTENT_TYPES);
  const payload: DocumentPayload = { format, data: rawBody(request) };
  const delimiter = query.csvDelimiter;
  if (delimiter !== undefined) {
    if (format !== 'csv')
      throw new SearchError(
        'invalid_content_type',
        `The Content-Type \`${type}\` does not support the use of a csv delimiter. The csv delimiter can only be used with the Content-Type \`text/csv\`.`,
      );
    if ([...delimiter].length !== 1 || delimiter.charCodeAt(0) > 0x7f)
      throw paramError(
        'csvDelimiter',
        `expected a string of one character, but found the following string of ${[...delimiter].length} characters: \`${delimiter}\``,
        'invalid_document_csv_delimiter',
      );
    payload.csvDelimiter = delimiter;
  }
  return payload;
}

/** `fields=a,b` (or `*`, meaning every field) as the engine's field list. */
function fieldsParam(query: QueryParams): string[] | null | undefined {
  const fields = listParam(query, 'fields');
  if (fields === undefined) return undefined;
  return fields.includes('*') ? null : fields;
}

function documentsQueryFromParams(query: QueryParams): DocumentsQuery {
  checkKnownParams(query, ['offset', 'limit', 'fields', 'retrieveVectors', 'filter', 'ids', 'sort']);
  const out: DocumentsQuery = { ...pagination(query, 'document') };
  const fields = fieldsParam(query);
  if (fields !== undefined) out.fields = fields;
  const retrieveVectors = boolParam(query, 'retrieveVectors', 'invalid_document_retrieve_vectors');
  if (retrieveVectors !== undefined) out.retrieveVectors = retrieveVectors;
  if (query.filter !== undefined) out.filter = query.filter;
  const ids = listParam(query, 'ids');
  if (ids !== undefined) out.ids = ids;
  if (query.sort !== undefined) out.sort = query.sort;
  return out;
}

/** `skipCreation=true|false` (case-insensitive, as the reference reads it). */
function skipCreationParam(query: QueryParams): boolean | undefined {
  const text = query.skipCreation;
  if (text === undefined) return undefined;
  if (text.toLowerCase() === 'true') return true;
  if (text.toLowerCase() === 'false') return false;
  throw paramError('skipCreation', `skipCreation must be either \`true\` or \`false\`. Found: \`${text}\``, 'invalid_skip_creation');
}

/** Body of `POST /documents/fetch`. */
export function documentsQueryFromBody(value: unknown): DocumentsQuery {
  const body = expectObject(value, { fields: ['offset', 'limit', 'fields', 'retrieveVectors', 'filter', 'ids', 'sort'] });
  const out: DocumentsQuery = {};
  const offset = uintField(body, 'offset', 'invalid_document_offset');
  if (offset !== undefined) out.offset = offset;
  const limit = uintField(body, 'limit', 'invalid_document_limit');
  if (limit !== undefined) out.limit = limit;
  const fields = stringListField(body, 'fields', 'invalid_document_fields', { nullable: true });
  if (fields !== undefined) out.fields = fields === null || fields.includes('*') ? null : fields;
  const retrieveVectors = booleanField(body, 'retrieveVectors', 'invalid_document_retrieve_vectors');
  if (retrieveVectors !== undefined) out.retrieveVectors = retrieveVectors;
  if (body.filter !== undefined && body.filter !== null) {
    if (typeof body.filter !== 'string' && !Array.isArray(body.filter))
      throw invalidType('.filter', 'a string or an array', body.filter, 'invalid_document_filter');
    out.filter = body.filter;
  }
  if (body.ids !== undefined && body.ids !== null) {
    if (!Array.isArray(body.ids)) throw invalidType('.ids', 'an array', body.ids, 'invalid_document_ids');
    out.ids = body.ids.map((id, i) => {
      if (typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id)))
        throw invalidType(`.ids[${i}]`, 'a string or an integer', id, 'invalid_document_ids');
      return id;
    });
  }
  const sort = stringListField(body, 'sort', 'invalid_document_sort', { nullable: true });
  if (sort) out.sort = sort;
  return out;
}

/** Body of `POST /documents/delete-batch`: ids as strings or integers; other values are stringified as the reference does. */
export function deleteBatchIds(value: unknown): Array<string | number> {
  if (!Array.isArray(value)) throw invalidType('', 'an array', value, 'bad_request');
  return value.map((id) => (typeof id === 'string' || typeof id === 'number' ? id : JSON.stringify(id)));
}

/** Body of `POST /documents/edit`: `function` (required), `filter`, `context` (an object). */
export function editionFromBody(value: unknown): { function: string; filter?: unknown; context?: Record<string, unknown> | null } {
  const body = expectObject(value, { fields: ['function', 'filter', 'context'] });
  if (body.function === undefined) throw missingField('function', 'missing_document_edition_function');
  if (typeof body.function !== 'string') throw invalidType('.function', 'a string', body.function, 'invalid_document_edition_function_filter');
  const edition: { function: string; filter?: unknown; context?: Record<string, unknown> | null } = { function: body.function };
  if (body.filter !== undefined && body.filter !== null) {
    if (typeof body.filter !== 'string' && !Array.isArray(body.filter)) throw invalidType('.filter', 'a string or an array', body.filter, 'invalid_document_filter');
    edition.filter = body.filter;
  }
  if (body.context !== undefined && body.context !== null) {
    if (typeof body.context !== 'object' || Array.isArray(body.context)) throw new SearchError('invalid_document_edition_context', 'The context must be an object');
    edition.context = body.context as Record<string, unknown>;
  }
  return edition;
}

export function documentRoutes(app: FastifyInstance, engine: HttpEngine): void {
  const base = '/indexes/:indexUid/documents';

  addRoute(app, {
    method: 'GET',
    url: base,
    action: 'documents.get',
    handler: ({ query, indexUid }) => engine.getDocuments(indexUid, documentsQueryFromParams(query)),
  });

  addRoute(app, {
    method: 'POST',
    url: `${base}/fetch`,
    action: 'documents.get',
    handler: ({ request, query, indexUid }) => {
      checkKnownParams(query, []);
      return engine.getDocuments(indexUid, documentsQueryFromBody(readJsonBody(request)));
    },
  });

  addRoute(app, {
    method: 'GET',
    url: `${base}/:documentId`,
    action: 'documents.get',
    handler: ({ query, params, indexUid }) => {
      checkKnownParams(query, ['fields', 'retrieveVectors']);
      const q: { fields?: string[] | null; retrieveVectors?: boolean } = {};
      const fields = fieldsParam(query);
      if (fields !== undefined) q.fields = fields;
      const retrieveVectors = boolParam(query, 'retrieveVectors', 'invalid_document_retrieve_vectors');
      if (retrieveVectors !== undefined) q.retrieveVectors = retrieveVectors;
      return engine.getDocument(indexUid, params.documentId!, q);
    },
  });

  for (const [method, mode] of [
    ['POST', 'replace'],
    ['PUT', 'update'],
  ] as const) {
    addRoute(app, {
      method,
      url: base,
      action: 'documents.add',
      handler: async ({ request, reply, query, indexUid }) => {
        checkKnownParams(query, ['primaryKey', 'csvDelimiter', 'customMetadata', 'skipCreation']);
        const payload = documentPayload(request, query);
        const options: { primaryKey?: string; method: 'replace' | 'update'; allowIndexCreation: boolean; skipCreation?: boolean; customMetadata?: string } = {
          method: mode,
          allowIndexCreation: mayCreateIndex(request, indexUid),
          ...writeOptions(query),
        };
        const skipCreation = skipCreationParam(query);
        if (skipCreation !== undefined) options.skipCreation = skipCreation;
        if (query.primaryKey !== undefined) options.primaryKey = query.primaryKey;
        return accepted(reply, await engine.addDocuments(indexUid, payload, options));
      },
    });
  }

  // The reference asks for `documents.*`; a key that may add documents may edit them here.
  addRoute(app, {
    method: 'POST',
    url: `${base}/edit`,
    action: 'documents.add',
    handler: async ({ request, reply, query, indexUid }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.editDocuments(indexUid, editionFromBody(readJsonBody(request)), writeOptions(query)));
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: `${base}/:documentId`,
    action: 'documents.delete',
    handler: async ({ reply, params, query, indexUid }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.deleteDocument(indexUid, params.documentId!, writeOptions(query)));
    },
  });

  addRoute(app, {
    method: 'POST',
    url: `${base}/delete-batch`,
    action: 'documents.delete',
    handler: async ({ request, reply, query, indexUid }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.deleteDocuments(indexUid, deleteBatchIds(readJsonBody(request)), writeOptions(query)));
    },
  });

  addRoute(app, {
    method: 'POST',
    url: `${base}/delete`,
    action: 'documents.delete',
    handler: async ({ request, reply, query, indexUid }) => {
      checkKnownParams(query, ['customMetadata']);
      const body = expectObject(readJsonBody(request), { fields: ['filter'] });
      if (body.filter === undefined) throw missingField('filter', 'missing_document_filter');
      if (typeof body.filter !== 'string' && !Array.isArray(body.filter))
        throw invalidType('.filter', 'a string or an array', body.filter, 'invalid_document_filter');
      return accepted(reply, await engine.deleteDocumentsByFilter(indexUid, body.filter, writeOptions(query)));
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: base,
    action: 'documents.delete',
    handler: async ({ reply, query, indexUid }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.clearDocuments(indexUid, writeOptions(query)));
    },
  });
}
