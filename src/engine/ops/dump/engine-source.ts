/**
 * A `DumpSource` over a live engine: everything is read lazily from the stores, so a dump of a
 * large database never holds more than one document at a time in the heap.
 */
import type { AuthEnv } from '../../auth/auth-env.js';
import type { Engine } from '../../engine.js';
import { readUpdateFile } from '../../index/payload.js';
import type { TaskPayload } from '../../tasks/payload.js';
import type { TaskRecord } from '../../tasks/store.js';
import { publicTask } from '../../tasks/view.js';
import type { Batch, Document } from '../../types.js';
import { toDumpDetails, typeToKind, type DumpIndex, type DumpKey, type DumpKind, type DumpSource, type DumpTaskEntry } from './layout.js';

export interface EngineDumpOptions {
  dbVersion: string;
  auth: AuthEnv | null;
  /** The task writing this dump: left out, so that importing the dump does not dump again. */
  excludeTaskUid?: number;
}

export function engineDumpSource(engine: Engine, options: EngineDumpOptions): DumpSource {
  return {
    instanceUid: engine.instanceUid,
    dbVersion: options.dbVersion,
    keys: () => authKeys(options.auth),
    tasks: () => tasks(engine, options.excludeTaskUid),
    batches: () => batches(engine),
    indexes: () => indexes(engine),
    experimentalFeatures: () => ({ ...engine.features.runtime() }),
    searchRules: () => engine.searchRules.all(),
    webhooks: () => {
      const webhooks: Record<string, { url: string; headers: Record<string, string> }> = {};
      if (options.auth) for (const { key, value } of options.auth.webhooks.getRange()) webhooks[key] = { url: value.url, headers: value.headers ?? {} };
      return { webhooks };
    },
  };
}

function* authKeys(auth: AuthEnv | null): Generator<DumpKey> {
  if (!auth) return;
  for (const { value: k } of auth.keys.getRange()) {
    const line: DumpKey = { uid: k.uid, actions: k.actions, indexes: k.indexes, expires_at: k.expiresAt, created_at: k.createdAt, updated_at: k.updatedAt };
    if (k.name !== null) line.name = k.name;
    if (k.description !== null) line.description = k.description;
    yield line;
  }
}

async function* tasks(engine: Engine, exclude?: number): AsyncGenerator<DumpTaskEntry> {
  for (const uid of engine.tasks.allUids()) {
    if (uid === exclude) continue;
    const record = engine.tasks.get(uid);
    if (!record) continue;
    const { type, ...rest } = publicTask(record);
    void type;
    const task = { ...rest, type: dumpKind(record), details: toDumpDetails(record.type, record.details) };
    const pending = record.status === 'enqueued' || record.status === 'processing';
    if (pending && record.payload.kind === 'documents') {
      yield { task, updateFile: readUpdateFile(engine.paths.updateFiles + '/' + record.payload.updateFile) };
    } else {
      yield { task };
    }
  }
}

function* batches(engine: Engine): Generator<Batch> {
  for (const uid of engine.tasks.batchUids()) {
    const batch = engine.tasks.getBatch(uid);
    if (batch) yield batch;
  }
}

function* indexes(engine: Engine): Generator<DumpIndex> {
  for (const uid of engine.indexes.uids()) {
    const index = engine.indexes.get(uid);
    const meta = index.store.meta();
    yield {
      metadata: { uid, primaryKey: meta.primaryKey, createdAt: meta.createdAt, updatedAt: meta.updatedAt },
      settings: index.settings as unknown as Record<string, unknown>,
      documents: documents(index),
    };
  }
}

function* documents(index: ReturnType<Engine['index']>): Generator<Document> {
  // the dump task runs alone, so the live docids do not change under this iteration; iterating
  // the bitmap (not an array of it) keeps memory flat whatever the index size
  for (const docid of index.store.docids()) {
    const stored = index.store.getDocument(docid);
    if (!stored) continue;
    yield index.withVectors(docid, stored);
  }
}

/** The Meilisearch dump kind of a task, with the content needed to re-enqueue it. */
export function dumpKind(record: TaskRecord): DumpKind {
  const p: TaskPayload = record.payload;
  switch (p.kind) {
    case 'documents':
      return typeToKind(record.type, {
        primary_key: p.primaryKey,
        method: p.method === 'update' ? 'UpdateDocuments' : 'ReplaceDocuments',
        documents_count: p.count,
        allow_index_creation: true,
      });
    case 'deleteIds':
      return typeToKind(record.type, { documents_ids: p.ids }, 'documentDeletion');
    case 'deleteFilter':
      return typeToKind(record.type, { filter: p.filter }, 'documentDeletionByFilter');
    case 'clearDocuments':
      return typeToKind(record.type, undefined, 'documentClear');
    case 'editDocuments':
      return typeToKind(record.type, { filter_expr: p.filter, context: p.context, function: p.function }, 'documentEdition');
    case 'settings':
      return typeToKind(record.type, { settings: p.patch, is_deletion: false, allow_index_creation: true });
    case 'indexCreation':
      return typeToKind(record.type, { primary_key: p.primaryKey });
    case 'indexUpdate':
      return typeToKind(record.type, { primary_key: p.primaryKey ?? null, ...(p.newIndexUid !== undefined ? { new_index_uid: p.newIndexUid } : {}) });
    case 'indexDeletion':
    case 'indexCompaction':
      return typeToKind(record.type);
    case 'indexSwap':
      return typeToKind(record.type, { swaps: p.swaps });
    case 'dsrUpdate':
      return typeToKind(record.type, p.update === null ? { Deletion: p.ruleUid } : { CreateOrUpdate: { rule_id: p.ruleUid, update: p.update } });
    case 'dsrClear':
      return typeToKind(record.type);
    case 'taskCancelation':
    case 'taskDeletion':
      return typeToKind(record.type, { query: p.filter, tasks: [] });
    case 'operation':
      if (record.type === 'upgradeDatabase') {
        const from = String(p.options?.from ?? '0.0.0').split('.').map(Number);
        return typeToKind(record.type, { from });
      }
      if (record.type === 'dumpCreation') return typeToKind(record.type, { keys: [], instance_uid: null });
      if (record.type === 'export') {
        const r = (p.options ?? {}) as { url?: string; apiKey?: string | null; payloadSize?: number | null; indexes?: unknown };
        return typeToKind(record.type, { url: r.url, api_key: r.apiKey ?? null, payload_size: r.payloadSize ?? null, indexes: r.indexes ?? {} });
      }
      return typeToKind(record.type);
  }
}
