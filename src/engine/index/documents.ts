/**
 * Document identity and shape rules: primary key inference, id validation, field selection.
 */
import { SearchError } from '../errors.js';
import type { Document } from '../types.js';

const ID_PATTERN = /^[A-Za-z0-9_-]+$/;
export const MAX_ID_BYTES = 511;

/** Read a possibly nested field (`a.b.c`), the way primary keys and attributes may be written. */
export function getPath(doc: Document, path: string): unknown {
  if (path in doc) return doc[path];
  const dot = path.indexOf('.');
  if (dot === -1) return undefined;
  // Try every split point: `a.b.c` may be {a: {b: {c}}}, {"a.b": {c}} or {a: {"b.c"}}.
  for (let i = dot; i !== -1; i = path.indexOf('.', i + 1)) {
    const head = doc[path.slice(0, i)];
    if (head !== null && typeof head === 'object' && !Array.isArray(head)) {
      const found = getPath(head as Document, path.slice(i + 1));
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function invalidId(value: unknown): SearchError {
  return new SearchError(
    'invalid_document_id',
    `Document identifier \`${JSON.stringify(value)}\` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.`,
  );
}

/** Validate an id value and return its canonical string form (integers keep their decimal text). */
export function normalizeDocumentId(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw invalidId(value);
    return String(value);
  }
  if (typeof value === 'string') {
    if (value.length === 0 || Buffer.byteLength(value) > MAX_ID_BYTES || !ID_PATTERN.test(value)) throw invalidId(value);
    return value;
  }
  throw invalidId(value);
}

export function documentId(doc: Document, primaryKey: string): string {
  const value = getPath(doc, primaryKey);
  if (value === undefined || value === null) {
    throw new SearchError('missing_document_id', `Document doesn't have a \`${primaryKey}\` attribute: \`${truncate(JSON.stringify(doc))}\`.`);
  }
  return normalizeDocumentId(value);
}

function truncate(text: string, max = 200): string {
  return text.length > max ? text.slice(0, max) + '…' : text;
}

/** Primary key inference: the single top-level field whose name ends in `id` (case-insensitive). */
export function inferPrimaryKey(doc: Document): string {
  const candidates = Object.keys(doc).filter((key) => key.toLowerCase().endsWith('id'));
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0) {
    throw new SearchError(
      'index_primary_key_no_candidate_found',
      'The primary key inference failed as the engine did not find any field ending with `id` in its name. Please specify the primary key manually using the `primaryKey` query parameter.',
    );
  }
  throw new SearchError(
    'index_primary_key_multiple_candidates_found',
    `The primary key inference failed as the engine found ${candidates.length} fields ending with \`id\` in their names: ${candidates
      .map((c) => `'${c}'`)
      .join(' and ')}. Please specify the primary key manually using the \`primaryKey\` query parameter.`,
  );
}

/** Top-level merge used by `PUT /documents` (add or update). */
export function mergeDocuments(before: Document, update: Document): Document {
  return { ...before, ...update };
}

/** Does `field` fall under `pattern`? Patterns are `*`, exact names, `prefix*`, and dotted parents. */
export function fieldMatches(pattern: string, field: string): boolean {
  if (pattern === '*' || pattern === field) return true;
  if (pattern.endsWith('*') && field.startsWith(pattern.slice(0, -1))) return true;
  return field.startsWith(pattern + '.');
}

/**
 * Keep only the requested fields (`null`/`['*']` keeps all). Nested selections (`a.b`) keep the
 * path down to the selected value, as the reference does.
 */
export function selectFields(doc: Document, fields: readonly string[] | null | undefined): Document {
  if (!fields || fields.includes('*')) return doc;
  const out: Document = {};
  for (const field of fields) {
    if (field in doc) {
      out[field] = doc[field];
      continue;
    }
    const dot = field.indexOf('.');
    if (dot === -1) continue;
    const head = field.slice(0, dot);
    const value = doc[head];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const nested = selectFields(value as Document, [field.slice(dot + 1)]);
      if (Object.keys(nested).length > 0) out[head] = { ...((out[head] as Document | undefined) ?? {}), ...nested };
    } else if (Array.isArray(value)) {
      const picked = value
        .filter((item) => item !== null && typeof item === 'object' && !Array.isArray(item))
        .map((item) => selectFields(item as Document, [field.slice(dot + 1)]))
        .filter((item) => Object.keys(item).length > 0);
      if (picked.length > 0) out[head] = picked;
    }
  }
  return out;
}

/** Fields visible through `displayedAttributes` intersected with the requested ones. */
export function visibleFields(displayed: readonly string[], requested: readonly string[] | null | undefined): string[] | null {
  const all = displayed.includes('*');
  if (!requested || requested.includes('*')) return all ? null : [...displayed];
  if (all) return [...requested];
  return requested.filter((field) => displayed.some((d) => fieldMatches(d, field) || fieldMatches(field, d)));
}
