/**
 * Authentication and key management.
 *
 * `authenticate` turns an `Authorization` header, the action a route needs and the index it
 * targets into an `Authorization` (what the request may see) or a `SearchError` with the
 * reference's code and message:
 *   - no master key: every action is open except the `keys.*` ones (`missing_master_key`);
 *   - otherwise: the master key grants everything; an API key grants its actions on its index
 *     patterns until it expires; a tenant token (search only) grants search on its rules' indexes
 *     within its signing key's rights, with the rules' filters forced on every search.
 */
import { SearchError } from '../errors.js';
import type { Page } from '../types.js';
import { expandActions, isKeysAction, type Action } from './actions.js';
import { isExpired, normalizeUuid, parseCreateKey, parseKeyPatch, toView, type ApiKeyRecord, type ApiKeyView } from './api-key.js';
import { AuthEnv } from './auth-env.js';
import { Authorization } from './authorization.js';
import { matchesAll } from './index-pattern.js';
import { rfc3339 } from './json-shape.js';
import { deriveKey, secretEquals } from './key-derivation.js';
import { KeyStore } from './key-store.js';
import { peekApiKeyUid, rulePatterns, verifyTenantToken, type SearchRules, type TenantClaims } from './tenant-token.js';

export const MISSING_AUTHORIZATION_HEADER = 'The Authorization header is missing. It must use the bearer authorization method.';
export const INVALID_API_KEY = 'The provided API key is invalid.';
export const MISSING_MASTER_KEY =
  'Meilisearch is running without a master key. To access this API endpoint, you must have set a master key at launch.';

export interface AuthenticateRequest {
  /** The raw `Authorization` header, if any. */
  header: string | undefined;
  action: Action;
  /** The index the route targets (`:indexUid`), if any. */
  indexUid?: string | null;
}

/** How many verified tenant tokens are remembered (oldest forgotten first). */
const VERIFIED_TOKENS_CACHE = 1024;

export class AuthController {
  readonly keys: KeyStore;
  private readonly verifiedTokens = new Map<string, TenantClaims>();

  constructor(
    readonly env: AuthEnv,
    readonly masterKey: string | null,
  ) {
    this.keys = new KeyStore(env, masterKey);
    this.keys.ensureDefaultKeys();
  }

  static open(o: { dbPath: string; masterKey?: string | null; env?: AuthEnv }): AuthController {
    return new AuthController(o.env ?? AuthEnv.open(o.dbPath), o.masterKey ?? null);
  }

  get protected(): boolean {
    return this.masterKey !== null;
  }

  // --- authentication -------------------------------------------------------------------------

  async authenticate(req: AuthenticateRequest): Promise<Authorization> {
    const { header, action } = req;
    const indexUid = req.indexUid ?? null;
    if (header === undefined) {
      if (this.masterKey === null) {
        if (isKeysAction(action)) throw new SearchError('missing_master_key', MISSING_MASTER_KEY);
        return Authorization.full();
      }
      throw new SearchError('missing_authorization_header', MISSING_AUTHORIZATION_HEADER);
    }
    const space = header.indexOf(' ');
    const scheme = space < 0 ? header : header.slice(0, space);
    if (scheme !== 'Bearer') throw new SearchError('missing_authorization_header', MISSING_AUTHORIZATION_HEADER);
    if (space < 0) throw new SearchError('invalid_api_key', INVALID_API_KEY);
    const token = header.slice(space + 1);
    return this.authenticateToken(token, action, indexUid);
  }

  private async authenticateToken(token: string, action: Action, indexUid: string | null): Promise<Authorization> {
    if (this.masterKey === null) {
      if (isKeysAction(action)) throw new SearchError('missing_master_key', MISSING_MASTER_KEY);
      return Authorization.full();
    }
    if (secretEquals(token, this.masterKey)) return Authorization.full();

    let record: ApiKeyRecord | undefined;
    let auth: Authorization | undefined;
    // Only search accepts tenant tokens; elsewhere a JWT is just an unknown API key.
    const tokenKeyUid = action === 'search' ? peekApiKeyUid(token) : null;
    if (tokenKeyUid !== null) record = this.keys.get(tokenKeyUid.toLowerCase());
    if (record !== undefined) {
      const claims = await this.verifiedClaims(token, record);
      auth = this.authorizationFor(record, claims.searchRules);
      if (indexUid !== null && !auth.tokenCoversIndex(indexUid)) {
        const allowed = [...rulePatterns(claims.searchRules)].sort();
        throw new SearchError(
          'invalid_api_key',
          `The provided tenant token cannot acces the index \`${indexUid}\`, allowed indexes are ${formatList(allowed)}.`,
        );
      }
      if (indexUid !== null && !auth.keyCoversIndex(indexUid)) {
        throw new SearchError(
          'invalid_api_key',
          `The API key used to generate this tenant token cannot acces the index \`${indexUid}\`.`,
        );
      }
    } else {
      const uid = this.keys.uidForValue(token);
      record = uid === undefined ? undefined : this.keys.get(uid);
      if (record === undefined) throw new SearchError('invalid_api_key', INVALID_API_KEY);
      auth = this.authorizationFor(record, null);
      if (indexUid !== null && !auth.keyCoversIndex(indexUid)) {
        const allowed = [...record.indexes].sort();
        throw new SearchError(
          'invalid_api_key',
          `The API key cannot acces the index \`${indexUid}\`, authorized indexes are ${formatList(allowed)}.`,
        );
      }
    }
    if (isExpired(record) || !expandActions(record.actions).has(action)) {
      throw new SearchError('invalid_api_key', INVALID_API_KEY);
    }
    return auth;
  }

  /**
   * Verify a tenant token, remembering tokens already verified: clients send the same token with
   * every search, and a signature check costs far more than the rest of the request's auth. The
   * signing key must still exist (checked by the caller) and the expiry is checked on every use.
   */
  private async verifiedClaims(token: string, record: ApiKeyRecord): Promise<TenantClaims> {
    const cached = this.verifiedTokens.get(token);
    if (cached && cached.apiKeyUid.toLowerCase() === record.uid) {
      const nowSeconds = Math.floor(Date.now() / 1000);
      if (cached.exp !== undefined && nowSeconds > cached.exp) {
        this.verifiedTokens.delete(token);
        throw new SearchError('invalid_api_key', `Tenant token expired. Was valid up to \`${cached.exp}\` and we're now \`${nowSeconds}\`.`);
      }
      return cached;
    }
    const claims = await verifyTenantToken(token, deriveKey(record.uid, this.masterKey!));
    if (this.verifiedTokens.size >= VERIFIED_TOKENS_CACHE) {
      const oldest = this.verifiedTokens.keys().next().value;
      if (oldest !== undefined) this.verifiedTokens.delete(oldest);
    }
    this.verifiedTokens.set(token, claims);
    return claims;
  }

  private authorizationFor(record: ApiKeyRecord, searchRules: SearchRules | null): Authorization {
    return new Authorization({
      keyIndexes: record.indexes.some(matchesAll) ? null : record.indexes,
      searchRules,
      canCreateIndexes: expandActions(record.actions).has('indexes.create'),
      keyUid: record.uid,
    });
  }

  // --- key management (the `/keys` routes) ------------------------------------------------------

  private view(record: ApiKeyRecord): ApiKeyView {
    return toView(record, this.masterKey === null ? '' : deriveKey(record.uid, this.masterKey));
  }

  /** Find a key by its uid or its value; `api_key_not_found` otherwise. */
  private find(uidOrKey: string): ApiKeyRecord {
    const uid = normalizeUuid(uidOrKey) ?? this.keys.uidForValue(uidOrKey);
    const record = uid === undefined ? undefined : this.keys.get(uid);
    if (!record) throw new SearchError('api_key_not_found', `API key \`${uidOrKey}\` not found.`);
    return record;
  }

  listKeys(q: { offset?: number; limit?: number } = {}): Page<ApiKeyView> {
    const offset = q.offset ?? 0;
    const limit = q.limit ?? 20;
    const all = this.keys.list();
    return { results: all.slice(offset, offset + limit).map((k) => this.view(k)), offset, limit, total: all.length };
  }

  getKey(uidOrKey: string): ApiKeyView {
    return this.view(this.find(uidOrKey));
  }

  createKey(body: unknown): ApiKeyView {
    const record = parseCreateKey(body);
    if (this.keys.get(record.uid)) {
      throw new SearchError('api_key_already_exists', `\`uid\` field value \`${record.uid}\` is already an existing API key.`);
    }
    this.keys.put(record);
    return this.view(record);
  }

  updateKey(uidOrKey: string, body: unknown): ApiKeyView {
    const patch = parseKeyPatch(body);
    const record = { ...this.find(uidOrKey) };
    if (patch.name !== undefined) record.name = patch.name;
    if (patch.description !== undefined) record.description = patch.description;
    record.updatedAt = rfc3339(new Date());
    this.keys.put(record);
    return this.view(record);
  }

  deleteKey(uidOrKey: string): void {
    const record = this.find(uidOrKey);
    this.keys.delete(record.uid);
  }

  async close(): Promise<void> {
    await this.env.close();
  }
}

/** `["a", "b"]` as the reference prints a list of strings in messages. */
function formatList(items: string[]): string {
  return `[${items.map((i) => JSON.stringify(i)).join(', ')}]`;
}
