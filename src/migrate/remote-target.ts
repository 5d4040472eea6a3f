/** The remote target: any running server with the Meilisearch API, through `SearchClient`. */
import { ClientError, SearchClient } from '../client/index.js';
import { failIfUnsuccessful } from './engine-target.js';
import { MigrationError } from './errors.js';
import type { IndexSettingsPatch } from './qdrant/mapping.js';
import type { DocumentBatch, PendingWrite, Target, TargetDocument, TargetIndex } from './target.js';

export class RemoteTarget implements Target {
  readonly wantsNdjson = true;
  readonly description: string;
  private readonly client: SearchClient;

  constructor(url: string, apiKey?: string) {
    this.client = new SearchClient({ url, apiKey });
    this.description = `server ${this.client.baseUrl}`;
  }

  /** Fails early, with a clear message, when the server is down or refuses the key. */
  async check(): Promise<void> {
    await this.call('reach the server', () => this.client.health());
    await this.call('list indexes with this API key', () => this.client.request('GET', '/indexes', { query: { limit: 1 } }));
  }

  async getIndex(uid: string): Promise<TargetIndex | null> {
    try {
      const info = await this.client.getIndex(uid);
      const stats = await this.client.indexStats(uid);
      return { primaryKey: info.primaryKey, numberOfDocuments: stats.numberOfDocuments };
    } catch (e) {
      if (e instanceof ClientError && e.code === 'index_not_found') return null;
      throw this.translate(e, `read index ${uid}`);
    }
  }

  async createIndex(uid: string, primaryKey: string): Promise<void> {
    await this.task(`create index ${uid}`, () => this.client.createIndex(uid, primaryKey));
  }

  async deleteIndex(uid: string): Promise<void> {
    await this.task(`delete index ${uid}`, () => this.client.deleteIndex(uid));
  }

  async updateSettings(uid: string, patch: IndexSettingsPatch): Promise<void> {
    await this.task(`update the settings of ${uid}`, () => this.client.updateSettings(uid, patch));
  }

  getSettings(uid: string): Promise<Record<string, unknown>> {
    return this.call(`read the settings of ${uid}`, () => this.client.getSettings(uid));
  }

  async addDocuments(uid: string, batch: DocumentBatch, primaryKey: string): Promise<PendingWrite> {
    const ndjson = batch.ndjson ?? batch.docs.map((d) => JSON.stringify(d)).join('\n');
    const t = await this.call(`send ${batch.docs.length} documents`, () => this.client.addDocumentsNdjson(uid, ndjson, primaryKey));
    return { taskUid: t.taskUid };
  }

  async wait(write: PendingWrite): Promise<void> {
    const task = await this.call(`wait for task ${write.taskUid}`, () => this.client.waitForTask(write.taskUid));
    failIfUnsuccessful(task, `task ${write.taskUid}`);
  }

  async getDocuments(uid: string, ids: string[]): Promise<Map<string, TargetDocument>> {
    const out = new Map<string, TargetDocument>();
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      const r = await this.call('fetch documents', () => this.client.fetchDocuments(uid, { ids: chunk, retrieveVectors: true, limit: chunk.length }));
      for (const d of r.results) out.set(String(d.id), d);
    }
    return out;
  }

  async swapIndexes(a: string, b: string): Promise<void> {
    await this.task(`swap ${a} and ${b}`, () => this.client.swapIndexes([[a, b]]));
  }

  async close(): Promise<void> {}

  private async task(what: string, enqueue: () => Promise<{ taskUid: number }>): Promise<void> {
    const t = await this.call(what, enqueue);
    failIfUnsuccessful(await this.call(what, () => this.client.waitForTask(t.taskUid)), what);
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw this.translate(e, what);
    }
  }

  private translate(e: unknown, what: string): Error {
    if (e instanceof MigrationError) return e;
    if (e instanceof ClientError) {
      if (e.isAuth) return new MigrationError('auth', `the target server refused to ${what} (${e.status} ${e.code ?? ''}): check --api-key`);
      if (e.status === 0) return new MigrationError('unreachable', `cannot ${what}: ${e.message}`);
      return new MigrationError('target', `cannot ${what}: ${e.message}`, { status: e.status, code: e.code });
    }
    return e as Error;
  }
}
