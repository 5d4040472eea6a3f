/**
 * Query-string parameters, parsed and checked with the reference's wording
 * (`Invalid value in parameter \`limit\`: could not parse \`x\` as a positive integer`). Every route
 * lists the parameters it knows; anything else is a `bad_request`, never silently ignored.
 */
import { SearchError } from '../engine/errors.js';
import { quoteList } from './wire-values.js';

export type QueryParams = Record<string, string>;

/** The server's query-string parser: never throws, repeated keys keep the last value. */
export function parseQueryString(text: string): QueryParams {
  const out: QueryParams = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) out[key] = value;
  return out;
}

export function paramError(name: string, reason: string, code: string): SearchError {
  return new SearchError(code, `Invalid value in parameter \`${name}\`: ${reason}`);
}

export function checkKnownParams(query: QueryParams, known: readonly string[]): void {
  for (const key of Object.keys(query)) {
    if (!known.includes(key)) {
      const expected = known.length === 0 ? 'no parameters' : `one of ${quoteList(known)}`;
      throw new SearchError('bad_request', `Unknown parameter \`${key}\`: expected ${expected}`);
    }
  }
}

const U32_MAX = 0xffff_ffff;

/** A non-negative integer that fits in 32 bits, as the reference's `u32` parameters. */
export function parseUint(text: string, name: string, code: string): number {
  if (!/^\+?\d+$/.test(text) || Number(text) > U32_MAX)
    throw paramError(name, `could not parse \`${text}\` as a positive integer`, code);
  return Number(text);
}

export function uintParam(query: QueryParams, name: string, code: string): number | undefined {
  const text = query[name];
  return text === undefined ? undefined : parseUint(text, name, code);
}

export function boolParam(query: QueryParams, name: string, code: string): boolean | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw paramError(name, `could not parse \`${text}\` as a boolean, expected either \`true\` or \`false\``, code);
}

/** A comma-separated list; empty items are dropped (`a,,b` is `a,b`). */
export function listParam(query: QueryParams, name: string): string[] | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function floatParam(query: QueryParams, name: string, code: string): number | undefined {
  const text = query[name];
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw paramError(name, `could not parse \`${text}\` as a number`, code);
  return value;
}

/** Pagination shared by the `{results, offset, limit, total}` list routes. */
export function pagination(query: QueryParams, family: string): { offset?: number; limit?: number } {
  const out: { offset?: number; limit?: number } = {};
  const offset = uintParam(query, 'offset', `invalid_${family}_offset`);
  const limit = uintParam(query, 'limit', `invalid_${family}_limit`);
  if (offset !== undefined) out.offset = offset;
  if (limit !== undefined) out.limit = limit;
  return out;
}

/** `customMetadata`, accepted by every write route and carried onto the task. */
export function writeOptions(query: QueryParams): { customMetadata?: string } {
  return query.customMetadata === undefined ? {} : { customMetadata: query.customMetadata };
}
