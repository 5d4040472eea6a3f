/** The embedded target: an `Engine` on a database directory, in this process. */
import { Engine } from '../engine/engine.js';
import { SearchError } from '../engine/errors.js';
import type { Task } from '../engine/types.js';
import { MigrationError } from './errors.js';
import type { IndexSettingsPatch } from './qdrant/mapping.js';
import type { DocumentBatch, PendingWrite, Target, TargetDocument, TargetIndex } from './target.js';

/** Indexing a 100k-document batch with vectors can take minutes on a small machine. */
const TASK_TIMEOUT_MS = 6 * 60 * 60 * 1000;

export class EngineTarget implements Target {
  readonly wantsNdjson = false;
  readonly description: string;

  private constructor(private readonly engine: Engine) {
    this.description = `database ${engine.dbPath}`;
  }

  static async open(dbPath: string): Promise<EngineTarget> {
    try {
      return new EngineTarget(await Engine.open({ dbPath, logLevel: 'warn', warm: false }));
    } catch (e) {
      throw new MigrationError('target', `cannot open the database at ${dbPath}: ${(e as Error).message}`);
    }
  }

  async getIndex(uid: string): Promise<TargetIndex | null> {
    try {
      const info = this.engine.getIndex(uid);
      return { primaryKey: info.primaryKey, numberOfDocuments: this.engine.indexStats(uid).numberOfDocuments };
    } catch (e) {
      if (e instanceof SearchError && e.code === 'index_not_found') return null;
      throw e;
    }
  }

  async createIndex(uid: string, primaryKey: string): Promise<void> {
    await this.run(this.engine.createIndex(uid, { primaryKey }), `create index ${uid}`);
  }

  async deleteIndex(uid: string): Promise<void> {
    await this.run(this.engine.deleteIndex(uid), `delete index ${uid}`);
  }

  async updateSettings(uid: string, patch: IndexSettingsPatch): Promise<void> {
    await this.run(this.engine.updateSettings(uid, patch as never), `update the settings of ${uid}`);
  }

  async getSettings(uid: string): Promise<Record<string, unknown>> {
    return this.engine.getSettings(uid) as unknown as Record<string, unknown>;
  }

  async addDocuments(uid: string, batch: DocumentBatch, primaryKey: string): Promise<PendingWrite> {
    const task = await this.engine.addDocuments(uid, batch.docs, { primaryKey, method: 'replace' });
    return { taskUid: task.taskUid };
  }

  async wait(write: PendingWrite): Promise<void> {
    const task = await this.engine.waitForTask(write.taskUid, { timeoutMs: TASK_TIMEOUT_MS });
    failIfUnsuccessful(task, `task ${write.taskUid}`);
  }

  async getDocuments(uid: string, ids: string[]): Promise<Map<string, TargetDocument>> {
    const out = new Map<string, TargetDocument>();
    for (const id of ids) {
      try {
        out.set(id, this.engine.getDocument(uid, id, { retrieveVectors: true }));
      } catch (e) {
        if (!(e instanceof SearchError && e.code === 'document_not_found')) throw e;
      }
    }
    return out;
  }

  async swapIndexes(a: string, b: string): Promise<void> {
    await this.run(this.engine.swapIndexes([{ indexes: [a, b] }]), `swap ${a} and ${b}`);
  }

  async close(): Promise<void> {
    await this.engine.close();
  }

  private async run(enqueue: Promise<{ taskUid: number }>, what: string): Promise<void> {
    let summarized;
    try {
      summarized = await enqueue;
    } catch (e) {
      throw new MigrationError('target', `cannot ${what}: ${(e as Error).message}`);
    }
    failIfUnsuccessful(await this.engine.waitForTask(summarized.taskUid, { timeoutMs: TASK_TIMEOUT_MS }), what);
  }
}

export function failIfUnsuccessful(task: Pick<Task, 'status' | 'error' | 'uid'>, what: string): void {
  if (task.status === 'succeeded') return;
  const reason = task.error ? `${task.error.code}: ${task.error.message}` : task.status;
  throw new MigrationError('target', `${what} failed (task ${task.uid}): ${reason}`, { task: task.uid });
}
