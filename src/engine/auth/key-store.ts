/**
 * API key records in the auth environment, plus the reverse lookup key value -> uid.
 *
 * The reverse lookup is a cache rebuilt from the records (values are derived, never stored), so
 * that authenticating a request is one map lookup instead of one HMAC per stored key.
 */
import type { AuthEnv } from './auth-env.js';
import { defaultKeys, type ApiKeyRecord } from './api-key.js';
import { deriveKey } from './key-derivation.js';

const DEFAULT_KEYS_FLAG = 'defaultKeysCreated';

export class KeyStore {
  private byValue: Map<string, string> | null = null;

  constructor(
    private readonly auth: AuthEnv,
    private readonly masterKey: string | null,
  ) {}

  /** Create the default keys once per database, at its first start (not again after deletion). */
  ensureDefaultKeys(): void {
    if (this.auth.meta.get(DEFAULT_KEYS_FLAG)) return;
    this.auth.env.transactionSync(() => {
      if (this.auth.meta.get(DEFAULT_KEYS_FLAG)) return;
      // A database that already has keys (imported from a dump) keeps exactly those.
      if (this.auth.keys.getKeysCount() === 0) for (const k of defaultKeys()) this.auth.keys.putSync(k.uid, k);
      this.auth.meta.putSync(DEFAULT_KEYS_FLAG, true);
    });
    this.byValue = null;
  }

  get(uid: string): ApiKeyRecord | undefined {
    return this.auth.keys.get(uid);
  }

  /** Every key, newest first (as `GET /keys` lists them). */
  list(): ApiKeyRecord[] {
    const keys: ApiKeyRecord[] = [];
    for (const { value } of this.auth.keys.getRange()) keys.push(value);
    return keys.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  put(record: ApiKeyRecord): void {
    this.auth.keys.putSync(record.uid, record);
    this.byValue = null;
  }

  delete(uid: string): boolean {
    const existed = this.auth.keys.removeSync(uid);
    this.byValue = null;
    return existed;
  }

  /** Remove every key (dump import replaces the whole set). */
  clear(): void {
    this.auth.keys.clearSync();
    this.byValue = null;
  }

  /** The uid whose derived value is `value`, or undefined (always undefined without a master key). */
  uidForValue(value: string): string | undefined {
    if (this.masterKey === null) return undefined;
    if (!this.byValue) {
      const map = new Map<string, string>();
      for (const { key } of this.auth.keys.getRange()) map.set(deriveKey(key, this.masterKey), key);
      this.byValue = map;
    }
    return this.byValue.get(value.toLowerCase());
  }
}
