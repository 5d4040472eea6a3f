/**
 * `--import-dump`: build a database from a dump, re-indexing every document. Any dump version
 * Meilisearch wrote (v1 to v6) is read into the v6 shapes by the reader; documents go in with
 * the vectors they carry, no embedder is called.
 *
 * Everything is written into a staging directory beside the target and renamed into place only
 * when the whole dump went in, so a corrupt or truncated dump (or a crash) never leaves a
 * half-imported database. Indexes are written directly (not through tasks, so the imported task
 * history is exactly the dump's), in chunks of documents with progress in the log; then the
 * task queue (same uids), batches, API keys and webhooks.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AuthEnv } from '../../auth/auth-env.js';
import type { ApiKeyRecord } from '../../auth/api-key.js';
import { Engine } from '../../engine.js';
import { SearchError } from '../../errors.js';
import type { Index } from '../../index/index.js';
import { ChangeSet, prepareExtensions } from '../../index/pipeline.js';
import type { PrepareOptions } from '../../index/extension.js';
import type { Settings } from '../../settings/types.js';
import type { TaskPayload } from '../../tasks/payload.js';
import { isoDuration } from '../../tasks/scheduler.js';
import type { TaskRecord } from '../../tasks/store.js';
import type { Batch, Document, TaskStatus, TaskType } from '../../types.js';
import { isAction } from '../../auth/actions.js';
import { JsonlWriter } from './jsonl.js';
import { fromDumpDetails, kindName, kindToType, type DumpTask } from './layout.js';
import { DumpReader } from './reader.js';
import type { DynamicSearchRule } from '../../search-rules/rules.js';
import { importedSettings } from './settings.js';
import { documentsPayload, payloadOf } from './task-payload.js';
import type { ImportFlagNames } from '../snapshot/snapshot.js';

export interface DumpImportOptions {
  ignoreMissing?: boolean;
  ignoreIfDbExists?: boolean;
  /** The caller's flags for the two options above, named in the errors (default: those of `search serve`). */
  flagNames?: ImportFlagNames;
  /** Documents per write transaction (default 10,000). */
  chunkSize?: number;
  log?: (message: string) => void;
}

export interface DumpImportResult {
  outcome: 'imported' | 'skipped-missing' | 'skipped-db-exists';
  indexes: number;
  documents: number;
  tasks: number;
}

export async function importDump(file: string, dbPath: string, options: DumpImportOptions = {}): Promise<DumpImportResult> {
  const log = options.log ?? (() => {});
  const none = (outcome: DumpImportResult['outcome']): DumpImportResult => ({ outcome, indexes: 0, documents: 0, tasks: 0 });
  if (!existsSync(file)) {
    if (options.ignoreMissing) return none('skipped-missing');
    throw new SearchError('invalid_dump', `The dump \`${file}\` does not exist (use \`${options.flagNames?.ignoreMissing ?? '--ignore-missing-dump'}\` to go on without it).`);
  }
  if (existsSync(join(dbPath, 'VERSION'))) {
    if (options.ignoreIfDbExists) return none('skipped-db-exists');
    throw new SearchError(
      'invalid_state',
      `A database already exists at \`${dbPath}\`; refusing to import the dump over it (use \`${options.flagNames?.ignoreIfDbExists ?? '--ignore-dump-if-db-exists'}\` to keep it).`,
    );
  }
  const parent = dirname(resolve(dbPath));
  await mkdir(parent, { recursive: true });
  await removeLeftovers(parent, basename(resolve(dbPath)));
  const reader = await DumpReader.open(file, { workDir: parent, log });
  const staging = await mkdtemp(join(parent, `.${basename(resolve(dbPath))}.import-`));
  let engine: Engine | null = null;
  let auth: AuthEnv | null = null;
  try {
    if (reader.instanceUid) await writeFile(join(staging, 'instance-uid'), reader.instanceUid);
    engine = await Engine.open({ dbPath: staging, autoProcess: false, logLevel: 'off', warm: false });
    auth = AuthEnv.open(staging);
    const date = reader.metadata.dumpDate ? ` on ${reader.metadata.dumpDate}` : '';
    log(`importing dump \`${file}\` (dump ${reader.version.toLowerCase()}, written by version ${reader.metadata.dbVersion}${date})`);
    const { indexes, documents } = await importIndexes(engine, reader, options.chunkSize ?? 10_000, log);
    const tasks = await importTasks(engine, reader, log);
    await importBatches(engine, reader);
    await importAuth(auth, reader, log);
    engine.features.replace(await reader.experimentalFeatures());
    const rules: DynamicSearchRule[] = [];
    for await (const rule of reader.searchRules()) rules.push(rule as unknown as DynamicSearchRule);
    if (rules.length > 0) engine.searchRules.replace(rules);
    log(`dump imported: ${indexes} index(es), ${documents} document(s), ${tasks} task(s)`);
    await auth.close();
    auth = null;
    await engine.close();
    engine = null;
    if (existsSync(dbPath)) {
      if (readdirSync(dbPath).length > 0)
        throw new SearchError('invalid_state', `\`${dbPath}\` is not empty; refusing to replace it with the imported dump.`);
      await rm(dbPath, { recursive: true });
    }
    await rename(staging, dbPath);
    return { outcome: 'imported', indexes, documents, tasks };
  } catch (error) {
    await auth?.close().catch(() => {});
    await engine?.close().catch(() => {});
    await rm(staging, { recursive: true, force: true });
    if (error instanceof SearchError && (error.code === 'invalid_dump' || error.code === 'invalid_state')) throw error;
    // e.g. a document the engine refuses: say which dump, keep the engine's reason and code
    const reason = error instanceof SearchError ? `${error.message} (\`${error.code}\`)` : `${(error as Error).message}.`;
    throw new SearchError('invalid_dump', `The dump \`${file}\` cannot be imported: ${reason}`, { cause: error });
  } finally {
    await reader.close();
  }
}

async function importIndexes(engine: Engine, reader: DumpReader, chunkSize: number, log: (m: string) => void) {
  let indexes = 0;
  let documents = 0;
  for await (const dumped of reader.indexes()) {
    const { metadata } = dumped;
    const index = engine.indexes.create(dumped.uid, metadata.primaryKey, metadata.createdAt);
    const settings = importedSettings(dumped.settings, `index \`${dumped.uid}\``, log);
    const missing = new Map<string, number>();
    const vectorsAsGiven = { onMissing: (embedder: string, ids: string[]) => missing.set(embedder, (missing.get(embedder) ?? 0) + ids.length) };
    const write = async (chunk: Document[]) => {
      try {
        return await writeChunk(index, chunk, metadata.primaryKey, settings, vectorsAsGiven);
      } catch (error) {
        const code = error instanceof SearchError ? error.code : 'internal';
        throw new SearchError(code, `index \`${dumped.uid}\`: ${(error as Error).message}`, { cause: error });
      }
    };
    index.store.write(() => index.store.setSettings(settings));
    let chunk: Document[] = [];
    let count = 0;
    for await (const document of dumped.documents()) {
      chunk.push(document);
      if (chunk.length >= chunkSize) {
        count += await write(chunk);
        chunk = [];
        log(`index \`${dumped.uid}\`: ${count} documents imported`);
      }
    }
    if (chunk.length > 0) count += await write(chunk);
    for (const [embedder, n] of missing)
      log(`index \`${dumped.uid}\`: ${n} document(s) carry no vectors for embedder \`${embedder}\`; they are embedded at their next update`);
    index.store.write(() => index.store.main.putSync('updatedAt', metadata.updatedAt));
    log(`index \`${dumped.uid}\`: done, ${count} documents`);
    documents += count;
    indexes++;
  }
  return { indexes, documents };
}

/** Documents go in with the vectors they carry: importing never calls an embedder. */
async function writeChunk(index: Index, chunk: Document[], primaryKey: string | null, settings: Settings, vectorsAsGiven: NonNullable<PrepareOptions['vectorsAsGiven']>): Promise<number> {
  const changes = new ChangeSet(index.store);
  const count = changes.addDocuments(chunk, 'replace', primaryKey);
  const list = changes.list();
  const prepared = await prepareExtensions(index.extensions, list, settings, index.store, { vectorsAsGiven });
  index.store.write(() => changes.commit(index.extensions, settings, prepared));
  return count;
}

/** Tasks are written this many per transaction: a long history imports in seconds. */
const TASKS_PER_WRITE = 1000;

async function importTasks(engine: Engine, reader: DumpReader, log: (m: string) => void): Promise<number> {
  const store = engine.tasks;
  const meta = store.env.openDB<number, string>({ name: 'meta', encoding: 'msgpack' });
  let count = 0;
  let next = 0;
  let batch: TaskRecord[] = [];
  const flush = () => {
    // keep the dump's task uids: the next uid the store hands out is the dumped one
    store.write(() => {
      for (const { uid, ...record } of batch) {
        meta.putSync('nextTaskUid', uid);
        store.insert(record);
      }
    });
    batch = [];
  };
  for await (const { task, updateFile } of reader.tasks()) {
    const type = supportedType(task.type);
    if (!type) {
      // a kind from a newer Meilisearch (e.g. an export): this engine cannot show or run it
      log(`dump: task ${task.uid} of kind \`${kindName(task.type)}\` is not supported by this engine and is left out`);
      continue;
    }
    const pending = task.status === 'enqueued' || task.status === 'processing';
    const payload = pending && updateFile ? await writeUpdateFile(engine, task, updateFile) : payloadOf(task);
    batch.push({ uid: task.uid, ...taskRecord(task, type, payload) });
    if (batch.length >= TASKS_PER_WRITE) flush();
    next = Math.max(next, task.uid + 1);
    count++;
  }
  flush();
  // queues of dumps v4/v5 list the newest task first: new tasks continue after the highest uid
  store.write(() => meta.putSync('nextTaskUid', next));
  await store.flushed();
  return count;
}

/** The documents of an enqueued document task, as an update file of the new database. */
async function writeUpdateFile(engine: Engine, task: DumpTask, documents: AsyncIterable<Document>): Promise<TaskPayload> {
  const name = `${randomUUID()}.ndjson`;
  const writer = new JsonlWriter(join(engine.paths.updateFiles, name));
  try {
    for await (const doc of documents) await writer.push(doc);
  } finally {
    await writer.close();
  }
  return documentsPayload(task, name, writer.count);
}

/** A task processing at dump time is enqueued again, as if it had never started. */
function taskRecord(task: DumpTask, type: TaskType, payload: TaskPayload): Omit<TaskRecord, 'uid'> {
  const status: TaskStatus = task.status === 'processing' ? 'enqueued' : task.status;
  const pending = status === 'enqueued';
  return {
    batchUid: pending ? null : (task.batchUid ?? null),
    indexUid: task.indexUid ?? null,
    status,
    type,
    canceledBy: task.canceledBy ?? null,
    details: fromDumpDetails(task.details),
    error: task.error ?? null,
    duration: pending ? null : (task.duration ?? durationOf(task)),
    enqueuedAt: task.enqueuedAt,
    startedAt: pending ? null : (task.startedAt ?? null),
    finishedAt: pending ? null : (task.finishedAt ?? null),
    payload,
  };
}

function supportedType(kind: DumpTask['type']): TaskType | null {
  try {
    return kindToType(kind);
  } catch {
    return null;
  }
}

/** Meilisearch's task lines have no duration: it is the time between start and finish. */
function durationOf(task: DumpTask): string | null {
  if (!task.startedAt || !task.finishedAt) return null;
  const ms = Date.parse(task.finishedAt) - Date.parse(task.startedAt);
  return Number.isFinite(ms) && ms >= 0 ? isoDuration(ms) : null;
}

async function importBatches(engine: Engine, reader: DumpReader): Promise<void> {
  const store = engine.tasks;
  const meta = store.env.openDB<number, string>({ name: 'meta', encoding: 'msgpack' });
  let next = 0;
  for await (const dumped of reader.batches()) {
    const batch = publicBatch(dumped);
    store.write(() => store.putBatch(batch));
    next = Math.max(next, batch.uid + 1);
  }
  if (next > 0) store.write(() => meta.putSync('nextBatchUid', next));
  await store.flushed();
}

/**
 * Meilisearch's batch lines hold `stopReason` and `enqueuedAt` but no duration; the public batch
 * shows the reason as `batchStrategy` and the duration between start and finish.
 */
function publicBatch(dumped: Batch & { stopReason?: string; enqueuedAt?: unknown }): Batch {
  const { stopReason, enqueuedAt: _enqueuedAt, ...batch } = dumped;
  const ms = batch.finishedAt ? Date.parse(batch.finishedAt) - Date.parse(batch.startedAt) : NaN;
  return {
    ...batch,
    progress: batch.progress ?? null,
    duration: batch.duration ?? (Number.isFinite(ms) && ms >= 0 ? isoDuration(ms) : null),
    ...(batch.batchStrategy === undefined && stopReason !== undefined ? { batchStrategy: stopReason } : {}),
  };
}

async function importAuth(auth: AuthEnv, reader: DumpReader, log: (m: string) => void): Promise<void> {
  let keys = 0;
  for await (const key of reader.keys()) {
    const unknown = key.actions.filter((a) => !isAction(a));
    if (unknown.length) log(`dump: API key \`${key.uid}\`: action(s) ${unknown.map((a) => `\`${a}\``).join(', ')} unknown to this engine are left out`);
    const record: ApiKeyRecord = {
      uid: key.uid,
      name: key.name ?? null,
      description: key.description ?? null,
      actions: key.actions.filter((a) => !unknown.includes(a)) as ApiKeyRecord['actions'],
      indexes: key.indexes,
      expiresAt: key.expires_at ?? key.expiresAt ?? null,
      createdAt: (key.created_at ?? key.createdAt)!,
      updatedAt: (key.updated_at ?? key.updatedAt)!,
    };
    await auth.keys.put(record.uid, record);
    keys++;
  }
  // the dump's keys replace the defaults a fresh database would create
  if (keys > 0) await auth.meta.put('defaultKeysCreated', true);
  const { webhooks } = await reader.webhooks();
  for (const [uuid, hook] of Object.entries(webhooks)) await auth.webhooks.put(uuid, { url: hook.url, headers: hook.headers ?? {} });
}

/** Staging directories of an import killed midway: never a database, safe to drop. */
async function removeLeftovers(parent: string, name: string): Promise<void> {
  for (const entry of readdirSync(parent)) {
    if (entry.startsWith(`.${name}.import-`)) await rm(join(parent, entry), { recursive: true, force: true });
  }
}
