/**
 * Public shapes of the engine API. They are the Meilisearch v1 wire shapes on purpose: the HTTP
 * layer serialises them as they are, and in-process users get the same objects.
 */

export type Document = Record<string, unknown>;

export interface Page<T> {
  results: T[];
  offset: number;
  limit: number;
  total: number;
}

/** Cursor pagination used by `/tasks` and `/batches`. */
export interface CursorPage<T> {
  results: T[];
  total: number;
  limit: number;
  from: number | null;
  next: number | null;
}

export interface IndexInfo {
  uid: string;
  primaryKey: string | null;
  createdAt: string;
  updatedAt: string;
}

export type TaskStatus = 'enqueued' | 'processing' | 'succeeded' | 'failed' | 'canceled';

export const TASK_TYPES = [
  'indexCreation',
  'indexUpdate',
  'indexDeletion',
  'indexSwap',
  'indexCompaction',
  'documentAdditionOrUpdate',
  'documentEdition',
  'documentDeletion',
  'settingsUpdate',
  'dumpCreation',
  'taskCancelation',
  'taskDeletion',
  'snapshotCreation',
  'upgradeDatabase',
  'dsrUpdate',
  'dsrClear',
  'export',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const TASK_STATUSES: readonly TaskStatus[] = ['enqueued', 'processing', 'succeeded', 'failed', 'canceled'];

export interface TaskError {
  message: string;
  code: string;
  type: string;
  link: string;
}

export interface Task {
  uid: number;
  batchUid: number | null;
  indexUid: string | null;
  status: TaskStatus;
  type: TaskType;
  canceledBy: number | null;
  details: Record<string, unknown> | null;
  error: TaskError | null;
  /** ISO-8601 duration, e.g. `PT0.012S`, null until finished. */
  duration: string | null;
  enqueuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** The `customMetadata` the write was sent with; absent when none was. */
  customMetadata?: string;
}

/** What every write returns (HTTP 202). */
export interface SummarizedTask {
  taskUid: number;
  indexUid: string | null;
  status: TaskStatus;
  type: TaskType;
  enqueuedAt: string;
  customMetadata?: string;
}

/** One pair of `POST /swap-indexes`. */
export interface IndexSwap {
  indexes: [string, string];
  /** Rename `indexes[0]` to `indexes[1]` (which must not exist) instead of swapping. */
  rename?: boolean;
}

/** Options every write accepts. */
export interface WriteOptions {
  /** An arbitrary string carried onto the task object (the `customMetadata` query parameter). */
  customMetadata?: string;
}

export interface Batch {
  uid: number;
  progress: unknown | null;
  details: Record<string, unknown>;
  stats: {
    totalNbTasks: number;
    status: Partial<Record<TaskStatus, number>>;
    types: Partial<Record<TaskType, number>>;
    indexUids: Record<string, number>;
    /** How long each step of the batch took (`"processing tasks > writing": "1.20ms"`), once it is finished. */
    progressTrace?: Record<string, string>;
  };
  duration: string | null;
  startedAt: string;
  finishedAt: string | null;
  batchStrategy?: string;
}

/** Filters shared by GET /tasks, POST /tasks/cancel, DELETE /tasks and GET /batches. */
export interface TaskFilter {
  uids?: number[];
  batchUids?: number[];
  types?: TaskType[];
  statuses?: TaskStatus[];
  indexUids?: string[];
  canceledBy?: number[];
  beforeEnqueuedAt?: Date;
  afterEnqueuedAt?: Date;
  beforeStartedAt?: Date;
  afterStartedAt?: Date;
  beforeFinishedAt?: Date;
  afterFinishedAt?: Date;
}

export interface TaskListQuery extends TaskFilter {
  limit?: number;
  from?: number;
  reverse?: boolean;
}

export interface IndexStats {
  numberOfDocuments: number;
  rawDocumentDbSize: number;
  avgDocumentSize: number;
  isIndexing: boolean;
  numberOfEmbeddings: number;
  numberOfEmbeddedDocuments: number;
  fieldDistribution: Record<string, number>;
  /** With `showInternalDatabaseSizes`: bytes of each LMDB database of the index, by name. */
  internalDatabaseSizes?: Record<string, number>;
}

export interface StatsOptions {
  internalDatabaseSizes?: boolean;
}

export interface GlobalStats {
  databaseSize: number;
  usedDatabaseSize: number;
  lastUpdate: string | null;
  indexes: Record<string, IndexStats>;
}

/** A document payload as received: raw bytes plus the format they are in. */
export interface DocumentPayload {
  format: 'json' | 'ndjson' | 'csv';
  data: Buffer | string;
  csvDelimiter?: string;
}

export interface DocumentsQuery {
  offset?: number;
  limit?: number;
  fields?: string[] | null;
  filter?: unknown;
  ids?: Array<string | number>;
  retrieveVectors?: boolean;
  /** `field:asc|desc` expressions on sortable attributes (array, or the GET form's comma-separated string). */
  sort?: string[] | string;
}
