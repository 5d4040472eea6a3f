import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SignJWT } from 'jose';
import { expandAction, expandActions, isReadAction, ACTIONS } from '../../src/engine/auth/actions.js';
import { parseCreateKey, parseKeyPatch, parseDate } from '../../src/engine/auth/api-key.js';
import { AuthController } from '../../src/engine/auth/auth-controller.js';
import { isValidIndexPattern, mostSpecificPattern, patternMatches } from '../../src/engine/auth/index-pattern.js';
import { deriveKey, keyMatches } from '../../src/engine/auth/key-derivation.js';
import { checkMasterKey, MasterKeyError } from '../../src/engine/auth/master-key.js';
import { hideSecret, redactAuthorizationHeaders } from '../../src/engine/auth/redact.js';
import { SearchError } from '../../src/engine/errors.js';

const MASTER = 'a-master-key-of-sufficient-length';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof SearchError) return e.code;
    throw e;
  }
  return 'ok';
}

async function codeOfAsync(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SearchError) return e.code;
    throw e;
  }
  return 'ok';
}

describe('key derivation', () => {
  it('matches HMAC-SHA256(master, hyphenated uid) as computed by openssl', () => {
    // echo -n 550e8400-e29b-41d4-a716-446655440000 | openssl dgst -sha256 -hmac my-secret-master-key
    expect(deriveKey('550e8400-e29b-41d4-a716-446655440000', 'my-secret-master-key')).toBe(
      'a28908ea775e19a02142f8805ceef29a510fc7b383be46d7d153daee9992d2a1',
    );
  });

  it('verifies only the right uid, master key and value', () => {
    const uid = '550e8400-e29b-41d4-a716-446655440000';
    const key = deriveKey(uid, MASTER);
    expect(keyMatches(uid, MASTER, key)).toBe(true);
    expect(keyMatches('550e8400-e29b-41d4-a716-446655440001', MASTER, key)).toBe(false);
    expect(keyMatches(uid, MASTER + 'x', key)).toBe(false);
    expect(keyMatches(uid, MASTER, 'deadbeef')).toBe(false);
    expect(keyMatches(uid, MASTER, 'z'.repeat(64))).toBe(false);
  });
});

describe('actions', () => {
  it('expands wildcards to their families', () => {
    expect(expandAction('documents.*').sort()).toEqual(['documents.add', 'documents.delete', 'documents.get']);
    expect(expandAction('indexes.*')).toContain('indexes.swap');
    expect(expandAction('webhooks.*').sort()).toEqual(['webhooks.create', 'webhooks.delete', 'webhooks.get', 'webhooks.update']);
    const all = expandActions(['*']);
    expect(all.has('keys.create')).toBe(true);
    expect(all.has('search')).toBe(true);
    for (const a of all) expect(a.endsWith('*')).toBe(false);
  });

  it('`*.get` grants reads but never keys.get nor writes', () => {
    const reads = expandActions(['*.get']);
    expect(reads.has('documents.get')).toBe(true);
    expect(reads.has('search')).toBe(true);
    expect(reads.has('keys.get')).toBe(false);
    expect(reads.has('documents.add')).toBe(false);
    expect(reads.has('chatCompletions')).toBe(false);
    expect(isReadAction('tasks.get')).toBe(true);
    expect(ACTIONS).toContain('chatCompletions');
  });
});

describe('index patterns', () => {
  it('validates and matches', () => {
    expect(isValidIndexPattern('*')).toBe(true);
    expect(isValidIndexPattern('movies_*')).toBe(true);
    expect(isValidIndexPattern('mov*ies')).toBe(false);
    expect(isValidIndexPattern('a b')).toBe(false);
    expect(isValidIndexPattern('')).toBe(false);
    expect(patternMatches('movies*', 'movies_fr')).toBe(true);
    expect(patternMatches('movies', 'movies_fr')).toBe(false);
    expect(patternMatches('*', 'anything')).toBe(true);
    expect(mostSpecificPattern(['*', 'mov*', 'movies*', 'movies'], 'movies')).toBe('movies');
    expect(mostSpecificPattern(['*', 'mov*', 'movies*'], 'movies_fr')).toBe('movies*');
    expect(mostSpecificPattern(['books'], 'movies')).toBeUndefined();
  });
});

describe('key bodies', () => {
  it('reports the reference codes', () => {
    const ok = { actions: ['search'], indexes: ['movies'], expiresAt: null };
    expect(codeOf(() => parseCreateKey(ok))).toBe('ok');
    expect(codeOf(() => parseCreateKey({ indexes: ['*'], expiresAt: null }))).toBe('missing_api_key_actions');
    expect(codeOf(() => parseCreateKey({ actions: ['*'], expiresAt: null }))).toBe('missing_api_key_indexes');
    expect(codeOf(() => parseCreateKey({ actions: ['*'], indexes: ['*'] }))).toBe('missing_api_key_expires_at');
    expect(codeOf(() => parseCreateKey({ ...ok, actions: ['fly'] }))).toBe('invalid_api_key_actions');
    expect(codeOf(() => parseCreateKey({ ...ok, actions: 'search' }))).toBe('invalid_api_key_actions');
    expect(codeOf(() => parseCreateKey({ ...ok, indexes: ['bad index'] }))).toBe('invalid_api_key_indexes');
    expect(codeOf(() => parseCreateKey({ ...ok, expiresAt: '2000-01-01' }))).toBe('invalid_api_key_expires_at');
    expect(codeOf(() => parseCreateKey({ ...ok, expiresAt: 'tomorrow' }))).toBe('invalid_api_key_expires_at');
    expect(codeOf(() => parseCreateKey({ ...ok, uid: 'not-a-uuid' }))).toBe('invalid_api_key_uid');
    expect(codeOf(() => parseCreateKey({ ...ok, name: 42 }))).toBe('invalid_api_key_name');
    expect(codeOf(() => parseCreateKey({ ...ok, description: [] }))).toBe('invalid_api_key_description');
    expect(codeOf(() => parseCreateKey({ ...ok, color: 'red' }))).toBe('bad_request');
    expect(codeOf(() => parseCreateKey([1]))).toBe('bad_request');
    expect(codeOf(() => parseKeyPatch({ actions: ['*'] }))).toBe('immutable_api_key_actions');
    expect(codeOf(() => parseKeyPatch({ indexes: ['*'] }))).toBe('immutable_api_key_indexes');
    expect(codeOf(() => parseKeyPatch({ expiresAt: null }))).toBe('immutable_api_key_expires_at');
    expect(codeOf(() => parseKeyPatch({ uid: 'x' }))).toBe('immutable_api_key_uid');
    expect(codeOf(() => parseKeyPatch({ createdAt: 'x' }))).toBe('immutable_api_key_created_at');
    expect(codeOf(() => parseKeyPatch({ updatedAt: 'x' }))).toBe('immutable_api_key_updated_at');
    expect(parseKeyPatch({ name: null, description: 'd' })).toEqual({ name: null, description: 'd' });
  });

  it('accepts the reference date formats, in UTC when no offset is given', () => {
    expect(parseDate('2042-04-02')?.toISOString()).toBe('2042-04-02T00:00:00.000Z');
    expect(parseDate('2042-04-02 10:11:12')?.toISOString()).toBe('2042-04-02T10:11:12.000Z');
    expect(parseDate('2042-04-02T10:11:12')?.toISOString()).toBe('2042-04-02T10:11:12.000Z');
    expect(parseDate('2042-04-02T10:11:12+02:00')?.toISOString()).toBe('2042-04-02T08:11:12.000Z');
    expect(parseDate('02/04/2042')).toBeNull();
    const key = parseCreateKey({ actions: ['*'], indexes: ['*'], expiresAt: '2042-04-02T00:42:42Z' });
    expect(key.expiresAt).toBe('2042-04-02T00:42:42Z');
  });
});

describe('master key rules', () => {
  it('refuses production without a 16-byte key and warns in development', () => {
    expect(() => checkMasterKey({ env: 'production', masterKey: null })).toThrow(MasterKeyError);
    expect(() => checkMasterKey({ env: 'production', masterKey: 'short' })).toThrow(/at least 16 bytes/);
    expect(checkMasterKey({ env: 'production', masterKey: MASTER })).toEqual([]);
    expect(checkMasterKey({ env: 'development', masterKey: null })[0]).toMatch(/No master key/);
    expect(checkMasterKey({ env: 'development', masterKey: MASTER })).toEqual([]);
    try {
      checkMasterKey({ env: 'production', masterKey: 'tiny-secret' });
    } catch (e) {
      expect(String(e)).not.toContain('tiny-secret');
    }
  });
});

describe('redaction', () => {
  it('keeps the scheme and a short prefix only', () => {
    expect(hideSecret('sk-abcdefghijklmnopqrstuvwxyz0123456789')).toBe('sk-abXXXXXX...');
    expect(hideSecret('short')).toBe('XXX...');
    const h = redactAuthorizationHeaders({ authorization: 'Bearer a-secret-token-value', 'X-Other': 'visible' });
    expect(h.authorization).toBe('Bearer a-sXXXXX...');
    expect(h['X-Other']).toBe('visible');
    expect(JSON.stringify(h)).not.toContain('secret-token-value');
  });
});

describe('AuthController', () => {
  let dir: string;
  let auth: AuthController;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'auth-'));
    auth = AuthController.open({ dbPath: dir, masterKey: MASTER });
  });
  afterEach(async () => {
    await auth.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const bearer = (k: string) => `Bearer ${k}`;

  it('creates the default keys once, with the reference grants', async () => {
    const { results, total } = auth.listKeys();
    expect(total).toBe(4);
    const byName = Object.fromEntries(results.map((k) => [k.name, k]));
    expect(byName['Default Search API Key']!.actions).toEqual(['search']);
    expect(byName['Default Admin API Key']!.actions).toEqual(['*']);
    expect(byName['Default Read-Only Admin API Key']!.actions).toEqual(['*.get', 'keys.get']);
    for (const k of results) expect(k.key).toBe(deriveKey(k.uid, MASTER));
    // deleting them all does not bring them back at the next start
    for (const k of results) auth.deleteKey(k.uid);
    await auth.close();
    auth = AuthController.open({ dbPath: dir, masterKey: MASTER });
    expect(auth.listKeys().total).toBe(0);
  });

  it('never stores the key value', async () => {
    const created = auth.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null });
    const stored = auth.env.keys.get(created.uid) as unknown as Record<string, unknown>;
    expect(stored).toBeDefined();
    expect(JSON.stringify(stored)).not.toContain(created.key);
    // a different master key yields a different value: the old one stops working
    await auth.close();
    auth = AuthController.open({ dbPath: dir, masterKey: MASTER + '-rotated' });
    expect(await codeOfAsync(auth.authenticate({ header: bearer(created.key), action: 'search', indexUid: 'm' }))).toBe(
      'invalid_api_key',
    );
  });

  it('finds, updates and deletes keys by uid or value', () => {
    const k = auth.createKey({ name: 'n', actions: ['search'], indexes: ['*'], expiresAt: null });
    expect(auth.getKey(k.key).uid).toBe(k.uid);
    expect(auth.getKey(k.uid.toUpperCase()).key).toBe(k.key);
    const u = auth.updateKey(k.key, { description: 'desc', name: null });
    expect(u.description).toBe('desc');
    expect(u.name).toBeNull();
    expect(codeOf(() => auth.createKey({ uid: k.uid, actions: ['*'], indexes: ['*'], expiresAt: null }))).toBe(
      'api_key_already_exists',
    );
    auth.deleteKey(k.uid);
    expect(codeOf(() => auth.getKey(k.uid))).toBe('api_key_not_found');
    expect(codeOf(() => auth.deleteKey(k.key))).toBe('api_key_not_found');
  });

  it('authenticates headers with the reference codes', async () => {
    const k = auth.createKey({ actions: ['documents.get'], indexes: ['movies*'], expiresAt: null });
    const run = (header: string | undefined, action: Parameters<AuthController['authenticate']>[0]['action'], indexUid?: string) =>
      codeOfAsync(auth.authenticate({ header, action, indexUid }));
    expect(await run(undefined, 'documents.get', 'movies')).toBe('missing_authorization_header');
    expect(await run('Basic abc', 'documents.get', 'movies')).toBe('missing_authorization_header');
    expect(await run('Bearer', 'documents.get', 'movies')).toBe('invalid_api_key');
    expect(await run(bearer('nope'), 'documents.get', 'movies')).toBe('invalid_api_key');
    expect(await run(bearer(k.key), 'documents.get', 'movies_fr')).toBe('ok');
    expect(await run(bearer(k.key), 'documents.add', 'movies')).toBe('invalid_api_key');
    expect(await run(bearer(k.key), 'documents.get', 'books')).toBe('invalid_api_key');
    expect(await run(bearer(k.key), 'keys.get')).toBe('invalid_api_key');
    expect(await run(bearer(MASTER), 'keys.create')).toBe('ok');
    const scoped = await auth.authenticate({ header: bearer(k.key), action: 'documents.get' });
    expect(scoped.filterIndexes(['movies', 'books', 'movies_fr'], (x) => x)).toEqual(['movies', 'movies_fr']);
    expect(scoped.canSeeTask({ indexUid: null, type: 'dumpCreation' })).toBe(false);
    expect(scoped.canCreateIndex('movies')).toBe(false);
  });

  it('refuses a key once it expires', async () => {
    const k = auth.createKey({ actions: ['*'], indexes: ['*'], expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect(await codeOfAsync(auth.authenticate({ header: bearer(k.key), action: 'search', indexUid: 'x' }))).toBe('ok');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      expect(await codeOfAsync(auth.authenticate({ header: bearer(k.key), action: 'search', indexUid: 'x' }))).toBe(
        'invalid_api_key',
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it('verifies tenant tokens and forces their filters', async () => {
    const k = auth.createKey({ actions: ['search', 'documents.get'], indexes: ['movies*'], expiresAt: null });
    const sign = (claims: Record<string, unknown>, alg = 'HS256', key = k.key) =>
      new SignJWT(claims).setProtectedHeader({ alg }).sign(new TextEncoder().encode(key));
    const rules = { 'movies*': { filter: 'genre = comedy' }, movies_fr: { filter: ['lang = fr', ['a = 1', 'b = 2']] } };
    for (const alg of ['HS256', 'HS384', 'HS512']) {
      const token = await sign({ apiKeyUid: k.uid, searchRules: rules, exp: Math.floor(Date.now() / 1000) + 60 }, alg);
      const a = await auth.authenticate({ header: bearer(token), action: 'search', indexUid: 'movies' });
      expect(a.isTenantToken).toBe(true);
      expect(a.searchFilterFor('movies')).toBe('genre = comedy');
      expect(a.searchFilterFor('movies_fr')).toEqual(['lang = fr', ['a = 1', 'b = 2']]);
      expect(a.applySearchRules('movies', 'year > 2000')).toEqual(['year > 2000', 'genre = comedy']);
      expect(a.applySearchRules('movies', ['x = 1', ['y = 1', 'y = 2']])).toEqual(['x = 1', ['y = 1', 'y = 2'], 'genre = comedy']);
      expect(a.applySearchRules('movies', undefined)).toBe('genre = comedy');
      expect(a.applySearchRules('movies', 42 as unknown as string)).toEqual([42, 'genre = comedy']);
    }
    const token = await sign({ apiKeyUid: k.uid, searchRules: ['movies'] });
    const run = (t: string, action: 'search' | 'documents.get', indexUid: string) =>
      codeOfAsync(auth.authenticate({ header: bearer(t), action, indexUid }));
    expect(await run(token, 'search', 'movies')).toBe('ok');
    // outside the rules, outside the key, on another action, expired, forged, unknown key
    expect(await run(token, 'search', 'movies_fr')).toBe('invalid_api_key');
    const wide = await sign({ apiKeyUid: k.uid, searchRules: ['*'] });
    expect(await run(wide, 'search', 'books')).toBe('invalid_api_key');
    expect(await run(token, 'documents.get', 'movies')).toBe('invalid_api_key');
    const old = await sign({ apiKeyUid: k.uid, searchRules: ['*'], exp: Math.floor(Date.now() / 1000) - 10 });
    await expect(auth.authenticate({ header: bearer(old), action: 'search', indexUid: 'movies' })).rejects.toThrow(
      /Tenant token expired/,
    );
    const forged = await sign({ apiKeyUid: k.uid, searchRules: ['*'] }, 'HS256', 'f'.repeat(64));
    expect(await run(forged, 'search', 'movies')).toBe('invalid_api_key');
    const stranger = await sign({ apiKeyUid: '00000000-0000-4000-8000-000000000000', searchRules: ['*'] });
    expect(await run(stranger, 'search', 'movies')).toBe('invalid_api_key');
    const masterSigned = await sign({ apiKeyUid: k.uid, searchRules: ['*'] }, 'HS256', MASTER);
    expect(await run(masterSigned, 'search', 'movies')).toBe('invalid_api_key');
    // a token outlives neither its key's deletion nor its key's rights
    auth.deleteKey(k.uid);
    expect(await run(token, 'search', 'movies')).toBe('invalid_api_key');
  });

  it('a token verified once is still refused once it expires', async () => {
    const k = auth.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null });
    const token = await new SignJWT({ apiKeyUid: k.uid, searchRules: ['*'], exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(k.key));
    const run = () => codeOfAsync(auth.authenticate({ header: bearer(token), action: 'search', indexUid: 'm' }));
    expect(await run()).toBe('ok');
    expect(await run()).toBe('ok');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 120_000);
      await expect(auth.authenticate({ header: bearer(token), action: 'search', indexUid: 'm' })).rejects.toThrow(/Tenant token expired/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('without a master key, everything is open except keys', async () => {
    await auth.close();
    auth = AuthController.open({ dbPath: dir, masterKey: null });
    expect(await codeOfAsync(auth.authenticate({ header: undefined, action: 'documents.add', indexUid: 'x' }))).toBe('ok');
    expect(await codeOfAsync(auth.authenticate({ header: 'Bearer whatever', action: 'search', indexUid: 'x' }))).toBe('ok');
    expect(await codeOfAsync(auth.authenticate({ header: undefined, action: 'keys.get' }))).toBe('missing_master_key');
    expect(await codeOfAsync(auth.authenticate({ header: 'Bearer x', action: 'keys.create' }))).toBe('missing_master_key');
  });
});
