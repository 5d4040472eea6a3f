/**
 * Small helpers to validate JSON request bodies with reference-style messages
 * (`Invalid value type at `.name`: expected a string, but found a positive integer: `42``).
 */
import { SearchError } from '../errors.js';

export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'boolean':
      return 'a boolean';
    case 'string':
      return 'a string';
    case 'number':
      if (!Number.isInteger(value)) return 'a float';
      return value < 0 ? 'a negative integer' : 'a positive integer';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

export function typeError(code: string, path: string, expected: string, value: unknown): SearchError {
  return new SearchError(
    code,
    `Invalid value type at \`${path}\`: expected ${expected}, but found ${describeJsonType(value)}: \`${JSON.stringify(value)}\``,
  );
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The top-level body must be an object; anything else is `bad_request` as in the reference. */
export function requireObject(body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) {
    throw new SearchError(
      'bad_request',
      `Invalid value type: expected an object, but found ${describeJsonType(body)}: \`${JSON.stringify(body ?? null)}\``,
    );
  }
  return body;
}

export function formatExpected(names: readonly string[]): string {
  return names.map((n) => `\`${n}\``).join(', ');
}

/**
 * Reject fields not in `accepted`; `immutable` maps known read-only fields to their own codes
 * (`immutable_api_key_uid`...), every other unknown field is `bad_request`.
 */
export function rejectUnknownFields(
  body: Record<string, unknown>,
  accepted: readonly string[],
  immutable: Record<string, string> = {},
): void {
  for (const field of Object.keys(body)) {
    if (accepted.includes(field)) continue;
    const code = immutable[field];
    if (code) throw new SearchError(code, `Immutable field \`${field}\`: expected one of ${formatExpected(accepted)}`);
    throw new SearchError('bad_request', `Unknown field \`${field}\`: expected one of ${formatExpected(accepted)}`);
  }
}

/** RFC 3339 in UTC, without a fractional part when it is zero (`2042-04-02T00:42:42Z`). */
export function rfc3339(date: Date): string {
  return date.toISOString().replace('.000Z', 'Z');
}
