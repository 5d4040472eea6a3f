/**
 * Where migrated documents go. The pipeline talks only to this interface; `EngineTarget` writes
 * into a database directory in-process, `RemoteTarget` into any running server with the
 * Meilisearch API (ours or Meilisearch itself).
 */
import type { IndexSettingsPatch } from './qdrant/mapping.js';

export type TargetDocument = Record<string, unknown>;

export interface TargetIndex {
  primaryKey: string | null;
  numberOfDocuments: number;
}

/** A write the target accepted (a task) and may still be processing. */
export interface PendingWrite {
  taskUid: number;
}

export interface DocumentBatch {
  docs: TargetDocument[];
  /** NDJSON of `docs` when the target asked for it (`wantsNdjson`). */
  ndjson?: string;
  bytes: number;
}

export interface Target {
  /** For messages: the database path or the server URL. */
  readonly description: string;
  /** True when batches should carry their NDJSON text (remote targets send it as is). */
  readonly wantsNdjson: boolean;
  getIndex(uid: string): Promise<TargetIndex | null>;
  createIndex(uid: string, primaryKey: string): Promise<void>;
  deleteIndex(uid: string): Promise<void>;
  /** Applies and waits; throws MigrationError('target') when the server rejects it. */
  updateSettings(uid: string, patch: IndexSettingsPatch): Promise<void>;
  getSettings(uid: string): Promise<Record<string, unknown>>;
  /** Enqueues a batch (replace by primary key); wait for it with `wait`. */
  addDocuments(uid: string, batch: DocumentBatch, primaryKey: string): Promise<PendingWrite>;
  wait(write: PendingWrite): Promise<void>;
  /** Documents by id, with their vectors; missing ids are absent from the map. */
  getDocuments(uid: string, ids: string[]): Promise<Map<string, TargetDocument>>;
  swapIndexes(a: string, b: string): Promise<void>;
  close(): Promise<void>;
}
