/**
 * The database's `auth/` LMDB environment: API keys and runtime webhooks.
 *
 * Layout:
 *   api-keys   uid (string) -> ApiKeyRecord (msgpack)
 *   webhooks   uuid (string) -> {url, headers} (msgpack)
 *   meta       string -> any     `defaultKeysCreated`
 *
 * One environment for both, opened once per process and shared by the key store and the
 * webhook store, so that dumps and snapshots copy a single directory.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { ApiKeyRecord } from './api-key.js';

export interface StoredWebhook {
  url: string;
  headers: Record<string, string>;
}

export class AuthEnv {
  readonly env: RootDatabase;
  readonly keys: Database<ApiKeyRecord, string>;
  readonly webhooks: Database<StoredWebhook, string>;
  readonly meta: Database<unknown, string>;

  private constructor(readonly path: string) {
    mkdirSync(path, { recursive: true });
    this.env = open({ path, maxDbs: 8, compression: false });
    this.keys = this.env.openDB<ApiKeyRecord, string>({ name: 'api-keys', encoding: 'msgpack' });
    this.webhooks = this.env.openDB<StoredWebhook, string>({ name: 'webhooks', encoding: 'msgpack' });
    this.meta = this.env.openDB<unknown, string>({ name: 'meta', encoding: 'msgpack' });
  }

  /** Open `<dbPath>/auth`. */
  static open(dbPath: string): AuthEnv {
    return new AuthEnv(join(dbPath, 'auth'));
  }

  async close(): Promise<void> {
    await this.env.close();
  }
}
