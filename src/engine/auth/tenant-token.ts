/**
 * Tenant tokens: JWTs (HS256, HS384 or HS512) signed with an API key's value, carrying
 * `apiKeyUid`, `searchRules` and an optional `exp`. They only ever grant `search`, within both the
 * rules and the signing key's own rights.
 *
 *   searchRules: ["products", "books_*"]                       index patterns, no extra filter
 *   searchRules: {"products": {"filter": "tenant = 1"}, "*": null}   patterns with optional filter
 */
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { SearchError } from '../errors.js';
import { isPlainObject } from './json-shape.js';

/** A search filter as the search API accepts it: a string, or an array of strings / arrays of strings. */
export type Filter = string | Array<string | string[]>;

export interface IndexSearchRule {
  filter?: Filter | null;
}

export type SearchRules = string[] | Record<string, IndexSearchRule | null>;

export interface TenantClaims {
  apiKeyUid: string;
  searchRules: SearchRules;
  exp?: number;
}

const ALGORITHMS = ['HS256', 'HS384', 'HS512'];

function invalidKey(message: string): SearchError {
  return new SearchError('invalid_api_key', message);
}

/**
 * The `apiKeyUid` claim of something that looks like an HS-signed JWT, read without verifying
 * anything; null when `token` is not such a JWT (it is then tried as a plain API key).
 */
export function peekApiKeyUid(token: string): string | null {
  if (token.split('.').length !== 3) return null;
  try {
    const header = decodeProtectedHeader(token);
    if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg)) return null;
    const claims = decodeJwt(token);
    return typeof claims.apiKeyUid === 'string' ? claims.apiKeyUid : null;
  } catch {
    return null;
  }
}

function isFilter(value: unknown): value is Filter {
  if (typeof value === 'string') return true;
  if (!Array.isArray(value)) return false;
  return value.every((v) => typeof v === 'string' || (Array.isArray(v) && v.every((w) => typeof w === 'string')));
}

function parseSearchRules(value: unknown): SearchRules {
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'string')) return value as string[];
  } else if (isPlainObject(value)) {
    const out: Record<string, IndexSearchRule | null> = {};
    for (const [pattern, rule] of Object.entries(value)) {
      if (rule === null) out[pattern] = null;
      else if (isPlainObject(rule) && (rule.filter === undefined || rule.filter === null || isFilter(rule.filter)))
        out[pattern] = { filter: (rule.filter as Filter | null | undefined) ?? null };
      else throw invalidKey('Could not decode tenant token, invalid `searchRules`.');
    }
    return out;
  }
  throw invalidKey('Could not decode tenant token, invalid `searchRules`.');
}

function expired(exp: unknown, now: number): SearchError {
  return invalidKey(`Tenant token expired. Was valid up to \`${String(exp)}\` and we're now \`${Math.floor(now / 1000)}\`.`);
}

/**
 * Verify `token` with the signing key's value; returns its claims or throws `invalid_api_key`
 * with the reference's messages (expired token, bad signature, undecodable claims).
 */
export async function verifyTenantToken(token: string, signingKey: string, now = Date.now()): Promise<TenantClaims> {
  let payload: Record<string, unknown>;
  try {
    const result = await jwtVerify(token, new TextEncoder().encode(signingKey), {
      algorithms: ALGORITHMS,
      currentDate: new Date(now),
    });
    payload = result.payload as Record<string, unknown>;
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw expired(error.payload.exp, now);
    if (error instanceof joseErrors.JWSSignatureVerificationFailed)
      throw invalidKey('Could not decode tenant token, InvalidSignature.');
    throw invalidKey('The provided tenant token is invalid.');
  }
  // jose already refused an `exp` in the past; this also covers the same second.
  if (payload.exp !== undefined && Math.floor(now / 1000) > (payload.exp as number)) throw expired(payload.exp, now);
  if (typeof payload.apiKeyUid !== 'string') throw invalidKey('Could not decode tenant token, missing field `apiKeyUid`.');
  if (payload.searchRules === undefined) throw invalidKey('Could not decode tenant token, missing field `searchRules`.');
  return {
    apiKeyUid: payload.apiKeyUid,
    searchRules: parseSearchRules(payload.searchRules),
    ...(payload.exp !== undefined ? { exp: payload.exp as number } : {}),
  };
}

/** The index patterns a set of rules names. */
export function rulePatterns(rules: SearchRules): string[] {
  return Array.isArray(rules) ? rules : Object.keys(rules);
}
