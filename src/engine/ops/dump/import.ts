/**
 * `--import-dump`: build a database from a dump, re-indexing every document.
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
import { applySettingsPatch } from '../../settings/apply.js';
import { defaultSettings, type Settings } from '../../settings/types.js';
import type { TaskPayload } from '../../tasks/payload.js';
import type { TaskRecord } from '../../tasks/store.js';
import type { Document, TaskStatus } from '../../types.js';
import { JsonlWriter } from './jsonl.js';
import { fromDumpDetails, kindContent, kindName, kindToType, type DumpTask } from './layout.js';
import { DumpReader } from './reader.js';
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
  const reader = await DumpReader.open(file, { workDir: parent });
  const staging = await mkdtemp(join(parent, `.${basename(resolve(dbPath))}.import-`));
  let engine: Engine | null = null;
  let auth: AuthEnv | null = null;
  try {
    if (reader.instanceUid) await writeFile(join(staging, 'instance-uid'), reader.instanceUid);
    engine = await Engine.open({ dbPath: staging, autoProcess: false, logLevel: 'off' });
    auth = AuthEnv.open(staging);
    log(`importing dump \`${file}\` (written by version ${reader.metadata.dbVersion} on ${reader.metadata.dumpDate})`);
    const { indexes, documents } = await importIndexes(engine, reader, options.chunkSize ?? 10_000, log);
    const tasks = await importTasks(engine, reader);
    await importBatches(engine, reader);
    await importAuth(auth, reader);
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
    if (error instanceof SearchError) throw error;
    throw new SearchError('invalid_dump', `The dump \`${file}\` cannot be imported: ${(error as Error).message}.`, { cause: error });
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
    const settings = dumpSettings(dumped.settings);
    index.store.write(() => index.store.setSettings(settings));
    let chunk: Document[] = [];
    let count = 0;
    for await (const document of dumped.documents()) {
      chunk.push(document);
      if (chunk.length >= chunkSize) {
        count += await writeChunk(index, chunk, metadata.primaryKey, settings);
        chunk = [];
        log(`index \`${dumped.uid}\`: ${count} documents imported`);
      }
    }
    if (chunk.length > 0) count += await writeChunk(index, chunk, metadata.primaryKey, settings);
    index.store.write(() => index.store.main.putSync('updatedAt', metadata.updatedAt));
    log(`index \`${dumped.uid}\`: done, ${count} documents`);
    documents += count;
    indexes++;
  }
  return { indexes, documents };
}

async function writeChunk(index: Index, chunk: Document[], primaryKey: string | null, settings: Settings): Promise<number> {
  const changes = new ChangeSet(index.store);
  const count = changes.addDocuments(chunk, 'replace', primaryKey);
  const list = changes.list();
  const prepared = await prepareExtensions(index.extensions, list, settings, index.store);
  index.store.write(() => changes.commit(index.extensions, settings, prepared));
  return count;
}

/** Keep the settings this engine knows; a newer Meilisearch may dump settings we do not have. */
function dumpSettings(raw: Record<string, unknown>): Settings {
  const defaults = defaultSettings();
  const known: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (key in defaults && value !== undefined) known[key] = value;
  return applySettingsPatch(defaults, known as Partial<Settings>);
}

async function importTasks(engine: Engine, reader: DumpReader): Promise<number> {
  const store = engine.tasks;
  const meta = store.env.openDB<number, string>({ name: 'meta', encoding: 'msgpack' });
  let count = 0;
  for await (const { task, updateFile } of reader.tasks()) {
    const status: TaskStatus = task.status === 'processing' ? 'enqueued' : task.status;
    const pending = status === 'enqueued';
    let payload: TaskPayload;
    if (pending && updateFile) {
      const name = `${randomUUID()}.ndjson`;
      const writer = new JsonlWriter(join(engine.paths.updateFiles, name));
      try {
        for await (const doc of updateFile) await writer.push(doc);
      } finally {
        await writer.close();
      }
      payload = documentsPayload(task, name, writer.count);
    } else {
      payload = payloadOf(task);
    }
    const record: Omit<TaskRecord, 'uid'> = {
      batchUid: pending ? null : (task.batchUid ?? null),
      indexUid: task.indexUid ?? null,
      status,
      type: kindToType(task.type),
      canceledBy: task.canceledBy ?? null,
      details: fromDumpDetails(task.details),
      error: task.error ?? null,
      duration: pending ? null : (task.duration ?? null),
      enqueuedAt: task.enqueuedAt,
      startedAt: pending ? null : (task.startedAt ?? null),
      finishedAt: pending ? null : (task.finishedAt ?? null),
      payload,
    };
    // keep the dump's task uids: the next uid the store hands out is the dumped one
    store.write(() => {
      meta.putSync('nextTaskUid', task.uid);
      store.insert(record);
    });
    count++;
  }
  await store.flushed();
  return count;
}

function documentsPayload(task: DumpTask, updateFile: string, count: number): TaskPayload {
  const content = kindContent(task.type);
  return {
    kind: 'documents',
    updateFile,
    method: content.method === 'UpdateDocuments' ? 'update' : 'replace',
    primaryKey: (content.primary_key as string | null | undefined) ?? null,
    count,
  };
}

/** The processing payload of a dumped task, from its kind and content. */
function payloadOf(task: DumpTask): TaskPayload {
  const c = kindContent(task.type);
  switch (kindName(task.type)) {
    case 'documentImport':
      // finished document tasks keep no payload file; an enqueued one without its file fails cleanly
      return { kind: 'documents', updateFile: `missing-${task.uid}.ndjson`, method: c.method === 'UpdateDocuments' ? 'update' : 'replace', primaryKey: (c.primary_key as string | null) ?? null, count: Number(c.documents_count ?? 0) };
    case 'documentDeletion':
      return { kind: 'deleteIds', ids: (c.documents_ids as string[] | undefined) ?? [] };
    case 'documentDeletionByFilter':
      return { kind: 'deleteFilter', filter: c.filter };
    case 'documentClear':
      return { kind: 'clearDocuments' };
    case 'settings':
      return { kind: 'settings', patch: (c.settings as Partial<Settings> | undefined) ?? {} };
    case 'indexCreation':
      return { kind: 'indexCreation', primaryKey: (c.primary_key as string | null) ?? null };
    case 'indexUpdate':
      return { kind: 'indexUpdate', primaryKey: (c.primary_key as string | null) ?? null };
    case 'indexDeletion':
      return { kind: 'indexDeletion' };
    case 'indexSwap':
      return { kind: 'indexSwap', swaps: (c.swaps as Array<{ indexes: [string, string] }>) ?? [] };
    case 'taskCancelation':
      return { kind: 'taskCancelation', filter: typeof c.query === 'object' && c.query ? (c.query as object) : { uids: [] } };
    case 'tasksDeletion':
      return { kind: 'taskDeletion', filter: typeof c.query === 'object' && c.query ? (c.query as object) : { uids: [] } };
    case 'upgradeDatabase':
      return { kind: 'operation', options: { from: Array.isArray(c.from) ? c.from.join('.') : undefined } };
    default:
      return { kind: 'operation' };
  }
}

async function importBatches(engine: Engine, reader: DumpReader): Promise<void> {
  const store = engine.tasks;
  const meta = store.env.openDB<number, string>({ name: 'meta', encoding: 'msgpack' });
  let next = 0;
  for await (const batch of reader.batches()) {
    store.write(() => store.putBatch(batch));
    next = Math.max(next, batch.uid + 1);
  }
  if (next > 0) store.write(() => meta.putSync('nextBatchUid', next));
  await store.flushed();
}

async function importAuth(auth: AuthEnv, reader: DumpReader): Promise<void> {
  let keys = 0;
  for await (const key of reader.keys()) {
    const record: ApiKeyRecord = {
      uid: key.uid,
      name: key.name ?? null,
      description: key.description ?? null,
      actions: key.actions as ApiKeyRecord['actions'],
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
