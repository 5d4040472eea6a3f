/**
 * JSON request bodies: reading them (content type, emptiness, syntax) and checking their shape the
 * way the reference does, field by field, with its wording: `Unknown field`, `Missing field`,
 * `Invalid value type at .field`. Routes whose body is interpreted by the engine (settings, search)
 * only use `readJsonBody`; routes whose body maps to typed engine arguments also use the checks.
 */
import type { FastifyRequest } from 'fastify';
import { SearchError } from '../engine/errors.js';
import { NESTING_DETAIL, nestedDeeperThan } from '../engine/wire/json-depth.js';
import { kindOf, quoteList, render } from './wire-values.js';

export const JSON_CONTENT_TYPE = 'application/json';

/** The media type of a request, lower-cased and without parameters; undefined when absent. */
export function mediaType(request: FastifyRequest): string | undefined {
  const header = request.headers['content-type'];
  if (header === undefined) return undefined;
  return header.split(';')[0]!.trim().toLowerCase();
}

export function missingContentType(accepted: readonly string[]): SearchError {
  return new SearchError(
    'missing_content_type',
    `A Content-Type header is missing. Accepted values for the Content-Type header are: ${quoteList(accepted)}`,
  );
}

export function invalidContentType(given: string, accepted: readonly string[]): SearchError {
  return new SearchError(
    'invalid_content_type',
    `The Content-Type \`${given}\` is invalid. Accepted values for the Content-Type header are: ${quoteList(accepted)}`,
  );
}

/** The raw bytes of the request body (every content type is buffered by the server). */
export function rawBody(request: FastifyRequest): Buffer {
  const body = request.body;
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
}

/**
 * Parse a strict JSON body: `application/json` only, not empty, syntactically valid. Never returns
 * undefined: a route that calls this needs a body.
 */
export function readJsonBody(request: FastifyRequest): unknown {
  const type = mediaType(request);
  if (type === undefined) throw missingContentType([JSON_CONTENT_TYPE]);
  if (type !== JSON_CONTENT_TYPE) throw invalidContentType(request.headers['content-type']!, [JSON_CONTENT_TYPE]);
  const text = rawBody(request).toString('utf8');
  if (text.trim() === '') throw new SearchError('missing_payload', 'A json payload is missing.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw malformedJson(error instanceof Error ? error.message : String(error));
  }
  if (nestedDeeperThan(value)) throw malformedJson(NESTING_DETAIL);
  return value;
}

function malformedJson(detail: string): SearchError {
  return new SearchError('malformed_payload', `The json payload provided is malformed. \`${detail}\`.`);
}

/** `.field` as the reference prints a location; empty for the root. */
function at(path: string): string {
  return path === '' ? '' : ` at \`${path}\``;
}

export function invalidType(path: string, expected: string, value: unknown, code: string): SearchError {
  return new SearchError(
    code,
    `Invalid value type${at(path)}: expected ${expected}, but found ${kindOf(value)}: \`${render(value)}\``,
  );
}

export function invalidValue(path: string, reason: string, code: string): SearchError {
  return new SearchError(code, `Invalid value${at(path)}: ${reason}`);
}

export interface ObjectShape {
  /** Accepted field names, in the order the error message lists them. */
  fields: readonly string[];
  /** Fields that exist but may not be changed here, with their `immutable_*` code. */
  immutable?: Readonly<Record<string, string>>;
}

/** Check that `value` is an object with only known fields; returns it typed as a record. */
export function expectObject(value: unknown, shape: ObjectShape, path = '', code = 'bad_request'): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidType(path, 'an object', value, code);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (shape.fields.includes(key)) continue;
    const immutable = shape.immutable?.[key];
    if (immutable) throw new SearchError(immutable, `Immutable field \`${key}\`: expected one of ${quoteList(shape.fields)}`);
    throw new SearchError('bad_request', `Unknown field \`${key}\`: expected one of ${quoteList(shape.fields)}`);
  }
  return record;
}

export function missingField(field: string, code: string): SearchError {
  return new SearchError(code, `Missing field \`${field}\``);
}

/** A string field; `null` passes when `nullable`, absence returns undefined. */
export function stringField(
  record: Record<string, unknown>,
  field: string,
  code: string,
  o: { nullable?: boolean; path?: string } = {},
): string | null | undefined {
  const value = record[field];
  if (value === undefined) return undefined;
  if (value === null && o.nullable) return null;
  if (typeof value !== 'string') throw invalidType(`${o.path ?? ''}.${field}`, 'a string', value, code);
  return value;
}

/** A non-negative integer field (u32 in the reference). */
export function uintField(record: Record<string, unknown>, field: string, code: string): number | undefined {
  const value = record[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xffff_ffff)
    throw invalidType(`.${field}`, 'a positive integer', value, code);
  return value;
}

export function booleanField(record: Record<string, unknown>, field: string, code: string): boolean | undefined {
  const value = record[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalidType(`.${field}`, 'a boolean', value, code);
  return value;
}

/** An array of strings, or null when `nullable`. */
export function stringListField(
  record: Record<string, unknown>,
  field: string,
  code: string,
  o: { nullable?: boolean } = {},
): string[] | null | undefined {
  const value = record[field];
  if (value === undefined) return undefined;
  if (value === null && o.nullable) return null;
  if (!Array.isArray(value)) throw invalidType(`.${field}`, 'an array', value, code);
  value.forEach((item, i) => {
    if (typeof item !== 'string') throw invalidType(`.${field}[${i}]`, 'a string', item, code);
  });
  return value as string[];
}
