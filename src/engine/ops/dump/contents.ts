/**
 * What an extracted dump offers the importer, whatever its version: every layout (Meilisearch
 * dump v1 to v6) is read into these v6-shaped records, so the importer has one code path.
 */
import type { Batch, Document } from '../../types.js';
import type { DumpIndexMetadata, DumpKey, DumpTask, DumpWebhooks } from './layout.js';

export const DUMP_VERSIONS = ['V1', 'V2', 'V3', 'V4', 'V5', 'V6'] as const;
export type DumpVersion = (typeof DUMP_VERSIONS)[number];

export interface DumpIndexReader {
  uid: string;
  metadata: DumpIndexMetadata;
  /** The index settings in the v6 wire shape (older layouts are converted). */
  settings: Record<string, unknown>;
  documents(): AsyncGenerator<Document>;
}

export interface DumpTaskReader {
  task: DumpTask;
  /** The documents of an enqueued document task, read lazily. */
  updateFile?: AsyncGenerator<Document>;
}

export interface DumpContents {
  readonly version: DumpVersion;
  readonly dbVersion: string;
  /** Absent from v1 dumps. */
  readonly dumpDate: string | null;
  readonly instanceUid: string | null;
  indexes(): AsyncGenerator<DumpIndexReader>;
  tasks(): AsyncGenerator<DumpTaskReader>;
  keys(): AsyncGenerator<DumpKey>;
  batches(): AsyncGenerator<Batch>;
  webhooks(): Promise<DumpWebhooks>;
  /** The instance's experimental flags, `{}` when the dump has none. */
  experimentalFeatures(): Promise<Record<string, unknown>>;
  /** The dynamic search rules (our dumps; none in Meilisearch's so far). */
  searchRules(): AsyncGenerator<Record<string, unknown>>;
}

/** Reads the files of one extracted dump: names relative to its root, failures as `invalid_dump`. */
export interface DumpFiles {
  readonly file: string;
  readonly dir: string;
  exists(name: string): boolean;
  json<T>(name: string): Promise<T>;
  lines<T>(name: string): AsyncGenerator<T>;
  text(name: string): Promise<string>;
  /** Sub-directory names of `name`, sorted. */
  dirs(name: string): Promise<string[]>;
  fail(reason: string, cause?: unknown): Error;
  /** Log a conversion the reference also makes silently or with a warning. */
  warn(message: string): void;
}
