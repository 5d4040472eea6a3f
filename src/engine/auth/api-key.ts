/**
 * The API key record and the validation of `POST /keys` and `PATCH /keys/:key` bodies, with the
 * reference's error codes (`missing_api_key_actions`, `invalid_api_key_indexes`,
 * `immutable_api_key_uid`...). The key value itself is not part of the record: it is derived.
 */
import { randomUUID } from 'node:crypto';
import { SearchError } from '../errors.js';
import { ACTIONS, isAction, type Action } from './actions.js';
import { INVALID_PATTERN_HINT, isValidIndexPattern } from './index-pattern.js';
import { normalizeTimestamp } from '../wire/timestamp.js';
import { formatExpected, rejectUnknownFields, requireObject, rfc3339, typeError } from './json-shape.js';

export interface ApiKeyRecord {
  uid: string;
  name: string | null;
  description: string | null;
  actions: Action[];
  indexes: string[];
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What `/keys` routes return: the record plus its derived value. */
export interface ApiKeyView extends ApiKeyRecord {
  key: string;
}

export function toView(record: ApiKeyRecord, key: string): ApiKeyView {
  return {
    name: record.name,
    description: record.description,
    key,
    uid: record.uid,
    actions: record.actions,
    indexes: record.indexes,
    expiresAt: record.expiresAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function isExpired(record: Pick<ApiKeyRecord, 'expiresAt'>, now = Date.now()): boolean {
  return record.expiresAt !== null && Date.parse(record.expiresAt) <= now;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_SIMPLE = /^[0-9a-f]{32}$/i;

/** A uuid in its canonical hyphenated lowercase form, or null when `value` is not one. */
export function normalizeUuid(value: string): string | null {
  const v = value.startsWith('urn:uuid:') ? value.slice('urn:uuid:'.length) : value;
  if (UUID.test(v)) return v.toLowerCase();
  if (UUID_SIMPLE.test(v)) {
    const h = v.toLowerCase();
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  return null;
}

const CREATE_FIELDS = ['description', 'name', 'uid', 'actions', 'indexes', 'expiresAt'] as const;
const PATCH_FIELDS = ['description', 'name'] as const;
const PATCH_IMMUTABLE: Record<string, string> = {
  uid: 'immutable_api_key_uid',
  actions: 'immutable_api_key_actions',
  indexes: 'immutable_api_key_indexes',
  expiresAt: 'immutable_api_key_expires_at',
  createdAt: 'immutable_api_key_created_at',
  updatedAt: 'immutable_api_key_updated_at',
};

function optionalString(body: Record<string, unknown>, field: 'name' | 'description', code: string): string | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw typeError(code, `.${field}`, 'a string', value);
  return value;
}

function parseActions(value: unknown): Action[] {
  if (!Array.isArray(value)) throw typeError('invalid_api_key_actions', '.actions', 'an array', value);
  return value.map((item, i) => {
    if (typeof item !== 'string') throw typeError('invalid_api_key_actions', `.actions[${i}]`, 'a string', item);
    if (!isAction(item)) {
      throw new SearchError(
        'invalid_api_key_actions',
        `Unknown value \`${item}\` at \`.actions[${i}]\`: expected one of ${formatExpected(ACTIONS)}`,
      );
    }
    return item;
  });
}

function parseIndexes(value: unknown): string[] {
  if (!Array.isArray(value)) throw typeError('invalid_api_key_indexes', '.indexes', 'an array', value);
  return value.map((item, i) => {
    const pattern = typeof item === 'number' && Number.isInteger(item) ? String(item) : item;
    if (typeof pattern !== 'string') throw typeError('invalid_api_key_indexes', `.indexes[${i}]`, 'a string', item);
    if (!isValidIndexPattern(pattern)) {
      throw new SearchError(
        'invalid_api_key_indexes',
        `Invalid value at \`.indexes[${i}]\`: \`${pattern}\` is not a valid index uid pattern. ${INVALID_PATTERN_HINT}`,
      );
    }
    return pattern;
  });
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const NAIVE_DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parse an expiry in the accepted formats; dates without an offset are UTC. Null when invalid. */
export function parseDate(text: string): Date | null {
  let ms: number;
  if (RFC3339.test(text)) ms = Date.parse(text);
  else if (NAIVE_DATETIME.test(text)) ms = Date.parse(`${text.replace(' ', 'T')}Z`);
  else if (DATE_ONLY.test(text)) ms = Date.parse(`${text}T00:00:00Z`);
  else return null;
  return Number.isNaN(ms) ? null : new Date(ms);
}

function parseExpiresAt(value: unknown, now: number): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw typeError('invalid_api_key_expires_at', '.expiresAt', 'a string', value);
  const date = parseDate(value);
  if (!date || date.getTime() <= now) {
    throw new SearchError(
      'invalid_api_key_expires_at',
      `Invalid value at \`.expiresAt\`: \`${value}\` is not a valid date. It should follow the RFC 3339 format to represents a date or datetime in the future or specified as a null value. e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.`,
    );
  }
  // Read back exactly as given (fractional digits kept), in UTC.
  return normalizeTimestamp(value) ?? rfc3339(date);
}

function missing(field: string, code: string): SearchError {
  return new SearchError(code, `Missing field \`${field}\``);
}

/** Validate a `POST /keys` body into a new record (uid generated when absent). */
export function parseCreateKey(body: unknown, now = new Date()): ApiKeyRecord {
  const obj = requireObject(body);
  rejectUnknownFields(obj, CREATE_FIELDS);
  const description = optionalString(obj, 'description', 'invalid_api_key_description');
  const name = optionalString(obj, 'name', 'invalid_api_key_name');
  let uid: string = randomUUID();
  if (obj.uid !== undefined) {
    if (typeof obj.uid !== 'string') throw typeError('invalid_api_key_uid', '.uid', 'a string', obj.uid);
    const normalized = normalizeUuid(obj.uid);
    if (!normalized) throw new SearchError('invalid_api_key_uid', `Invalid value at \`.uid\`: \`${obj.uid}\` is not a valid uuid.`);
    uid = normalized;
  }
  if (!('actions' in obj)) throw missing('actions', 'missing_api_key_actions');
  const actions = parseActions(obj.actions);
  if (!('indexes' in obj)) throw missing('indexes', 'missing_api_key_indexes');
  const indexes = parseIndexes(obj.indexes);
  if (!('expiresAt' in obj)) throw missing('expiresAt', 'missing_api_key_expires_at');
  const expiresAt = parseExpiresAt(obj.expiresAt, now.getTime());
  const stamp = rfc3339(now);
  return { uid, name, description, actions, indexes, expiresAt, createdAt: stamp, updatedAt: stamp };
}

export interface KeyPatch {
  name?: string | null;
  description?: string | null;
}

/** Validate a `PATCH /keys/:key` body: only `name` and `description` may change. */
export function parseKeyPatch(body: unknown): KeyPatch {
  const obj = requireObject(body);
  rejectUnknownFields(obj, PATCH_FIELDS, PATCH_IMMUTABLE);
  const patch: KeyPatch = {};
  if ('name' in obj) patch.name = optionalString(obj, 'name', 'invalid_api_key_name');
  if ('description' in obj) patch.description = optionalString(obj, 'description', 'invalid_api_key_description');
  return patch;
}

/** The keys every fresh database starts with (same names and grants as the reference). */
export function defaultKeys(now = new Date()): ApiKeyRecord[] {
  const stamp = rfc3339(now);
  const make = (name: string, description: string, actions: Action[]): ApiKeyRecord => ({
    uid: randomUUID(),
    name,
    description,
    actions,
    indexes: ['*'],
    expiresAt: null,
    createdAt: stamp,
    updatedAt: stamp,
  });
  return [
    make('Default Search API Key', 'Use it to search from the frontend', ['search']),
    make(
      'Default Admin API Key',
      'Use it for anything that is not a search operation. Caution! Do not expose it on a public frontend',
      ['*'],
    ),
    make(
      'Default Read-Only Admin API Key',
      'Use it to read information across the whole database. Caution! Do not expose this key on a public frontend',
      ['*.get', 'keys.get'],
    ),
    make('Default Chat API Key', 'Use it to chat and search from the frontend', ['chatCompletions', 'search']),
  ];
}
