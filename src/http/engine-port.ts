/**
 * What the HTTP layer needs from the engine. The routes are typed against this shape rather than
 * the `Engine` class so that the server can be built and unit-tested on its own; `Engine` satisfies
 * it structurally (the CLI passes a real one, so any drift is a compile error there).
 */
import type {
  Batch,
  CursorPage,
  Document,
  DocumentPayload,
  DocumentsQuery,
  GlobalStats,
  IndexInfo,
  IndexStats,
  StatsOptions,
  Page,
  SummarizedTask,
  Task,
  TaskFilter,
  TaskListQuery,
  IndexSwap,
  WriteOptions,
} from '../engine/types.js';
import type { Settings } from '../engine/settings/types.js';
import type { ExportRequest } from '../engine/export/index.js';
import type { ExperimentalFeatures } from '../engine/experimental-features.js';
import type { FieldMetadata, FieldsQuery } from '../engine/settings/field-metadata.js';
import type { TaskScope } from '../engine/tasks/store.js';
import type { SearchRequest } from '../engine/search/search-threads.js';

export interface HttpEngine {
  listIndexes(q: { offset?: number; limit?: number }): Page<IndexInfo>;
  getIndex(uid: string): IndexInfo;
  createIndex(uid: string, o?: { primaryKey?: string | null } & WriteOptions): Promise<SummarizedTask>;
  updateIndex(uid: string, o: { primaryKey?: string | null; uid?: string } & WriteOptions): Promise<SummarizedTask>;
  deleteIndex(uid: string, o?: WriteOptions): Promise<SummarizedTask>;
  compactIndex(uid: string, o?: WriteOptions): Promise<SummarizedTask>;
  listSearchRules(body: unknown): unknown;
  getSearchRule(uid: string): unknown;
  updateSearchRule(uid: string, body: unknown, o?: WriteOptions): Promise<SummarizedTask>;
  deleteSearchRule(uid: string, o?: WriteOptions): Promise<SummarizedTask>;
  clearSearchRules(o?: WriteOptions): Promise<SummarizedTask>;
  swapIndexes(swaps: IndexSwap[], o?: WriteOptions): Promise<SummarizedTask>;
  indexStats(uid: string, options?: StatsOptions): IndexStats;
  listFields(uid: string, q: FieldsQuery): Page<FieldMetadata>;
  stats(options?: StatsOptions): GlobalStats;
  addDocuments(
    uid: string,
    payload: DocumentPayload | Document[],
    o: { primaryKey?: string; method: 'replace' | 'update'; allowIndexCreation?: boolean; skipCreation?: boolean } & WriteOptions,
  ): Promise<SummarizedTask>;
  getDocuments(uid: string, q: DocumentsQuery): Page<Document>;
  getDocument(uid: string, id: string, q?: { fields?: string[] | null; retrieveVectors?: boolean }): Document;
  deleteDocument(uid: string, id: string, o?: WriteOptions): Promise<SummarizedTask>;
  deleteDocuments(uid: string, ids: Array<string | number>, o?: WriteOptions): Promise<SummarizedTask>;
  deleteDocumentsByFilter(uid: string, filter: unknown, o?: WriteOptions): Promise<SummarizedTask>;
  clearDocuments(uid: string, o?: WriteOptions): Promise<SummarizedTask>;
  editDocuments(
    uid: string,
    edition: { function: string; filter?: unknown; context?: Record<string, unknown> | null },
    o?: WriteOptions,
  ): Promise<SummarizedTask>;
  getSettings(uid: string): Settings;
  updateSettings(uid: string, patch: unknown, o?: { allowIndexCreation?: boolean } & WriteOptions): Promise<SummarizedTask>;
  resetSettings(uid: string, keys?: Array<keyof Settings>, o?: { allowIndexCreation?: boolean } & WriteOptions): Promise<SummarizedTask>;
  // Search lands with the search module; its routes are served once the engine has these.
  search?(uid: string, body: unknown): unknown;
  multiSearch?(body: unknown): unknown;
  facetSearch?(uid: string, body: unknown): unknown;
  similar?(uid: string, body: unknown): unknown;
  /** `POST /render-template`. */
  renderTemplate?(body: unknown): unknown;
  /** `POST /export`: enqueue an `export` task. */
  exportTo?(request: ExportRequest, o?: WriteOptions): Promise<SummarizedTask>;
  /** The response body of one of the four above as UTF-8 JSON (the engine may answer in search threads). */
  answer?(request: SearchRequest): Promise<Buffer>;
  getTasks(q: TaskListQuery, scope?: TaskScope): CursorPage<Task>;
  getTask(uid: number): Task;
  taskDocuments(uid: number): AsyncIterable<Document>;
  cancelTasks(f: TaskFilter): Promise<SummarizedTask>;
  deleteTasks(f: TaskFilter): Promise<SummarizedTask>;
  /** `POST /tasks/compact` (throws `feature_not_enabled` while the flag is off). */
  compactTaskQueue?(): Promise<{ preSize: number; postSize: number }>;
  getBatches(q: TaskListQuery, scope?: TaskScope): CursorPage<Batch>;
  getBatch(uid: number): Batch;
  getExperimentalFeatures(): ExperimentalFeatures;
  updateExperimentalFeatures(patch: Partial<ExperimentalFeatures>): ExperimentalFeatures;
}
