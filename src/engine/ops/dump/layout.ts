/**
 * The Meilisearch v6 dump layout: file names and record shapes.
 *
 * A `.dump` is a gzipped tar whose root holds:
 *
 *   metadata.json                      {dumpVersion: "V6", dbVersion, dumpDate}
 *   instance_uid.uuid                  the instance uid, plain text
 *   keys.jsonl                         one API key per line
 *   tasks/queue.jsonl                  one task per line
 *   tasks/update_files/<taskUid>.jsonl documents of a still-enqueued document task
 *   batches/queue.jsonl                one batch per line
 *   indexes/<uid>/metadata.json        {uid, primaryKey, createdAt, updatedAt}
 *   indexes/<uid>/settings.json        the index settings
 *   indexes/<uid>/documents.jsonl      one document per line, with `_vectors`
 *   webhooks.json                      {webhooks: {<uuid>: {url, headers}}}
 *   experimental-features.json         the flags set through PATCH /experimental-features
 *
 * Meilisearch names update files after the task uid (not a uuid); so do we, so that a dump
 * moves between the two engines either way.
 */
import { hideSecret } from '../../auth/redact.js';
import { formatPayloadSize } from '../../export/payload-size.js';
import type { Batch, Document, Task, TaskType } from '../../types.js';

export const DUMP_VERSION = 'V6';

export const FILES = {
  metadata: 'metadata.json',
  instanceUid: 'instance_uid.uuid',
  keys: 'keys.jsonl',
  tasksDir: 'tasks',
  tasksQueue: 'tasks/queue.jsonl',
  updateFilesDir: 'tasks/update_files',
  batchesDir: 'batches',
  batchesQueue: 'batches/queue.jsonl',
  indexesDir: 'indexes',
  webhooks: 'webhooks.json',
  experimentalFeatures: 'experimental-features.json',
  /** Ours: the dynamic search rules, one per line (Meilisearch keeps them out of its dumps so far). */
  searchRules: 'dynamic-search-rules.jsonl',
} as const;

export const INDEX_FILES = {
  metadata: 'metadata.json',
  settings: 'settings.json',
  documents: 'documents.jsonl',
} as const;

export function updateFileName(taskUid: number): string {
  return `${FILES.updateFilesDir}/${taskUid}.jsonl`;
}

export interface DumpMetadata {
  dumpVersion: string;
  dbVersion: string;
  dumpDate: string;
}

export interface DumpIndexMetadata {
  uid: string;
  primaryKey: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * An API key line as Meilisearch writes it: its `Key` has no camelCase renaming, so the dates are
 * `expires_at`, `created_at`, `updated_at`, and a null name or description is left out. The key
 * value itself is not stored: it is derived from the uid and the master key.
 */
export interface DumpKey {
  uid: string;
  name?: string | null;
  description?: string | null;
  actions: string[];
  indexes: string[];
  expires_at?: string | null;
  created_at?: string;
  updated_at?: string;
  /** camelCase spellings, accepted on import from other writers */
  expiresAt?: string | null;
  createdAt?: string;
  updatedAt?: string;
}

export interface DumpWebhook {
  url: string;
  headers: Record<string, string>;
}

export interface DumpWebhooks {
  webhooks: Record<string, DumpWebhook>;
}

/**
 * A task line: the public task object, except that `type` holds the kind with its content as
 * Meilisearch writes it (`"documentClear"` or `{"documentImport": {...}}`), so that an enqueued task
 * can be re-enqueued on import. `kindToType` recovers the public task type.
 */
export interface DumpTask extends Omit<Task, 'type'> {
  type: DumpKind;
}

export type DumpKind = string | Record<string, Record<string, unknown>>;

export interface DumpIndex {
  metadata: DumpIndexMetadata;
  settings: Record<string, unknown>;
  documents: AsyncIterable<Document> | Iterable<Document>;
}

export interface DumpTaskEntry {
  task: DumpTask;
  /** The payload of an enqueued document task, as documents. */
  updateFile?: AsyncIterable<Document> | Iterable<Document>;
}

/** What a dump is written from: everything is iterated lazily, never collected. */
export interface DumpSource {
  instanceUid: string;
  dbVersion: string;
  keys(): AsyncIterable<DumpKey> | Iterable<DumpKey>;
  tasks(): AsyncIterable<DumpTaskEntry> | Iterable<DumpTaskEntry>;
  batches(): AsyncIterable<Batch> | Iterable<Batch>;
  indexes(): AsyncIterable<DumpIndex> | Iterable<DumpIndex>;
  webhooks(): DumpWebhooks | Promise<DumpWebhooks>;
  /** The experimental flags (camelCase, as the reference writes them); absent: none written. */
  experimentalFeatures?(): Record<string, boolean>;
  /** The dynamic search rules; absent: none written. */
  searchRules?(): unknown[];
}

/** Kind names (Meilisearch's dump enum) -> public task types. */
const KIND_TO_TYPE: Record<string, TaskType> = {
  documentImport: 'documentAdditionOrUpdate',
  documentDeletion: 'documentDeletion',
  documentClear: 'documentDeletion',
  documentDeletionByFilter: 'documentDeletion',
  documentEdition: 'documentEdition',
  settings: 'settingsUpdate',
  indexDeletion: 'indexDeletion',
  indexCreation: 'indexCreation',
  indexUpdate: 'indexUpdate',
  indexSwap: 'indexSwap',
  indexCompaction: 'indexCompaction',
  taskCancelation: 'taskCancelation',
  tasksDeletion: 'taskDeletion',
  dumpCreation: 'dumpCreation',
  snapshotCreation: 'snapshotCreation',
  upgradeDatabase: 'upgradeDatabase',
  dsrUpdate: 'dsrUpdate',
  dsrClear: 'dsrClear',
  export: 'export',
};

/** Public task types -> the kind name used when the content is not known more precisely. */
const TYPE_TO_KIND: Record<TaskType, string> = {
  documentAdditionOrUpdate: 'documentImport',
  documentDeletion: 'documentDeletion',
  documentEdition: 'documentEdition',
  settingsUpdate: 'settings',
  indexDeletion: 'indexDeletion',
  indexCreation: 'indexCreation',
  indexUpdate: 'indexUpdate',
  indexSwap: 'indexSwap',
  indexCompaction: 'indexCompaction',
  taskCancelation: 'taskCancelation',
  taskDeletion: 'tasksDeletion',
  dumpCreation: 'dumpCreation',
  snapshotCreation: 'snapshotCreation',
  upgradeDatabase: 'upgradeDatabase',
  dsrUpdate: 'dsrUpdate',
  dsrClear: 'dsrClear',
  export: 'export',
};

const UNIT_KINDS = new Set(['documentClear', 'indexDeletion', 'indexCompaction', 'snapshotCreation', 'dsrClear']);

export function kindName(kind: DumpKind): string {
  if (typeof kind === 'string') return kind;
  const names = Object.keys(kind);
  if (names.length !== 1) throw new Error(`a task kind has exactly one name, got ${JSON.stringify(kind)}`);
  return names[0]!;
}

export function kindContent(kind: DumpKind): Record<string, unknown> {
  return typeof kind === 'string' ? {} : (Object.values(kind)[0] ?? {});
}

export function kindToType(kind: DumpKind): TaskType {
  const name = kindName(kind);
  const type = KIND_TO_TYPE[name];
  if (!type) throw new Error(`unknown task kind \`${name}\` in the dump`);
  return type;
}

/** Build the dump kind of a task from its public type and the content the engine knows of. */
export function typeToKind(type: TaskType, content?: Record<string, unknown>, name?: string): DumpKind {
  const kind = name ?? TYPE_TO_KIND[type];
  if (UNIT_KINDS.has(kind) && (!content || Object.keys(content).length === 0)) return kind;
  return { [kind]: content ?? {} };
}

/** `yyyymmdd-hhmmssSSS`, the name Meilisearch gives a dump file (UTC). */
export function dumpFileStem(date: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}-` +
    `${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}${p(date.getUTCMilliseconds(), 3)}`
  );
}

// --- task details -----------------------------------------------------------------------------
//
// Meilisearch writes a task's details as its internal enum: externally tagged, snake_case fields,
// e.g. `{"DocumentAdditionOrUpdate": {"received_documents": 2, "indexed_documents": 2}}`. The
// public details (camelCase, flat) are converted both ways, so dumps move between the engines.

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function detailsVariant(type: TaskType, details: Record<string, unknown>): string | null {
  switch (type) {
    case 'documentAdditionOrUpdate':
      return 'DocumentAdditionOrUpdate';
    case 'documentEdition':
      return 'DocumentEdition';
    case 'documentDeletion':
      if ('originalFilter' in details) return 'DocumentDeletionByFilter';
      if ('providedIds' in details) return 'DocumentDeletion';
      return 'ClearAll';
    case 'indexDeletion':
      return 'ClearAll';
    case 'settingsUpdate':
      return 'SettingsUpdate';
    case 'indexCreation':
    case 'indexUpdate':
      return 'IndexInfo';
    case 'indexSwap':
      return 'IndexSwap';
    case 'indexCompaction':
      return 'IndexCompaction';
    case 'taskCancelation':
      return 'TaskCancelation';
    case 'taskDeletion':
      return 'TaskDeletion';
    case 'dumpCreation':
      return 'Dump';
    case 'upgradeDatabase':
      return 'UpgradeDatabase';
    case 'export':
      return 'Export';
    default:
      return null;
  }
}

const triple = (v: unknown) => String(v ?? '0.0.0').replace(/^v/, '').split('.').map(Number);

export function toDumpDetails(type: TaskType, details: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!details) return null;
  const variant = detailsVariant(type, details);
  if (!variant) return null;
  if (variant === 'SettingsUpdate') return { SettingsUpdate: { settings: details } };
  if (variant === 'UpgradeDatabase') return { UpgradeDatabase: { from: triple(details.upgradeFrom), to: triple(details.upgradeTo) } };
  return { [variant]: Object.fromEntries(Object.entries(details).map(([k, v]) => [snake(k), v])) };
}

export function fromDumpDetails(details: unknown): Record<string, unknown> | null {
  if (!details || typeof details !== 'object' || Array.isArray(details)) return null;
  const entries = Object.entries(details as Record<string, unknown>);
  const [name, inner] = entries[0] ?? [];
  // already public (camelCase) details, as older versions of this engine wrote them
  if (entries.length !== 1 || !name || !/^[A-Z]/.test(name) || !inner || typeof inner !== 'object') return details as Record<string, unknown>;
  const content = inner as Record<string, unknown>;
  if (name === 'SettingsUpdate') return { ...((content.settings as Record<string, unknown>) ?? {}) };
  if (name === 'UpgradeDatabase')
    return { upgradeFrom: `v${(content.from as number[]).join('.')}`, upgradeTo: `v${(content.to as number[]).join('.')}` };
  if (name === 'Export') return exportDetailsFromDump(content);
  return Object.fromEntries(Object.entries(content).map(([k, v]) => [camel(k), v]));
}

/**
 * The reference keeps an export's API key in clear in its task details (and hides it when it
 * shows them): hide it here once, since these details are shown as they are stored.
 */
function exportDetailsFromDump(content: Record<string, unknown>): Record<string, unknown> {
  const apiKey = content.api_key ?? content.apiKey;
  const size = content.payload_size ?? content.payloadSize;
  return {
    url: content.url,
    ...(typeof apiKey === 'string' ? { apiKey: /XXX\.\.\.$/.test(apiKey) ? apiKey : hideSecret(apiKey) } : {}),
    ...(typeof size === 'number' ? { payloadSize: formatPayloadSize(size) } : typeof size === 'string' ? { payloadSize: size } : {}),
    indexes: content.indexes ?? {},
  };
}
