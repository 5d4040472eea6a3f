/**
 * The engine: one typed API over a database directory. The HTTP routes, the CLI and in-process
 * users all go through it. Reads answer at once from the stores; writes register a task (flushed
 * to disk before the call returns) that the scheduler processes in the background, by default
 * in a worker thread (tasks/write-thread.ts), so that no read ever waits for a batch.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { batchPayloadBytes, defaultIndexingMemory } from './tasks/batch-budget.js';
import { SearchError } from './errors.js';
import type { Index } from './index/index.js';
import { defaultModules } from './modules.js';
import { searchWithVectors, type HybridSearchResponse } from './search/hybrid.js';
import { redactPatch, redactEmbedders } from './embedders/settings.js';
import { similarDocuments, type SimilarResponse } from './search/similar.js';
import { multiSearch, type MultiSearchResponse } from './search/multi-search.js';
import { UPDATE_FILE_EXTENSION, writeUpdateFile } from './index/payload.js';
import { persistPayload } from './index/intake.js';
import { noteForeignCommit } from './index/store.js';
import { IndexRegistry, indexNotFound, validateIndexUid } from './index/registry.js';
import { normalizeDocumentId } from './index/documents.js';
import { defaultSettings, type Settings } from './settings/types.js';
import { validateSettingsPatch } from './settings/validate.js';
import { databaseExists, databasePaths, ensureDirectories, ensureInstanceUid, readVersion, writeVersion, type DatabasePaths } from './store/database-dir.js';
import { DB_FORMAT_VERSION, versionMismatch } from './store/format.js';
import { asSpaceError, ensureSpaceFor } from './store/disk-space.js';
import { removeOrphanUpdateFiles } from './tasks/update-files.js';
import { originalFilterString, serializeTaskFilter, type TaskPayload } from './tasks/payload.js';
import type { OperationProcessor } from './tasks/processing.js';
import { Scheduler, type BatchFinished } from './tasks/scheduler.js';
import { NoWriteSide, type WriteSide } from './tasks/write-side.js';
import { SearchThreads, type SearchRequest } from './search/search-threads.js';
import { WriteThread, type PortableOpsOptions } from './tasks/write-thread.js';
import { TaskStore, type TaskRecord } from './tasks/store.js';
import { facetSearchRequest } from './search/facets/facet-search-request.js';
import type { FacetSearchResult } from './search/facets/facet-search.js';
import { publicTask, summarizedTask } from './tasks/view.js';
import type {
  Batch,
  CursorPage,
  Document,
  DocumentPayload,
  DocumentsQuery,
  GlobalStats,
  IndexInfo,
  IndexStats,
  Page,
  SummarizedTask,
  Task,
  TaskFilter,
  TaskListQuery,
  TaskType,
} from './types.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'off';

export interface EngineOptions {
  dbPath: string;
  /** Memory the indexer may use for one batch, which bounds the payload a batch gathers (see tasks/batch-budget.ts). */
  maxIndexingMemory?: number;
  logLevel?: LogLevel;
  logger?: (level: string, message: string) => void;
  /** Start processing tasks at once (default true). */
  autoProcess?: boolean;
  /** Allow opening a database written by another format version (the upgrade path does this). */
  skipVersionCheck?: boolean;
  /**
   * Where batches are processed: `thread` (the default), a worker thread with its own engine over
   * the same directory, so that reads in this thread never wait for a write; `inline`, this
   * thread (what the write thread itself uses); `none`, nowhere (a search thread's read-only engine).
   */
  writer?: 'thread' | 'inline' | 'none';
  /** Worker threads that answer `answer()` (the HTTP search routes), each with a read-only engine; 0 (default): this thread. */
  searchThreads?: number;
}

const LEVELS: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };

export class Engine {
  readonly dbPath: string;
  readonly instanceUid: string;
  readonly paths: DatabasePaths;
  readonly tasks: TaskStore;
  readonly indexes: IndexRegistry;
  private writeSide!: WriteSide;
  private searchThreads: SearchThreads | null = null;
  private readonly logLevel: number;
  private readonly logger: (level: string, message: string) => void;
  private closed = false;

  private constructor(options: EngineOptions) {
    this.dbPath = options.dbPath;
    this.paths = databasePaths(options.dbPath);
    this.logLevel = LEVELS[options.logLevel ?? 'info'];
    this.logger = options.logger ?? ((level, message) => process.stderr.write(`[${new Date().toISOString()} ${level.toUpperCase()}] ${message}\n`));
    const fresh = !databaseExists(this.dbPath);
    if (!fresh && !options.skipVersionCheck) {
      const found = readVersion(this.dbPath)!;
      if (found !== DB_FORMAT_VERSION) throw versionMismatch(found);
    }
    ensureDirectories(this.paths);
    this.instanceUid = ensureInstanceUid(this.dbPath);
    this.tasks = new TaskStore(this.paths.tasks);
    if (fresh) writeVersion(this.dbPath, DB_FORMAT_VERSION);
    this.indexes = new IndexRegistry(this.paths.indexes, this.tasks, defaultModules);
  }

  static async open(options: EngineOptions): Promise<Engine> {
    const engine = new Engine(options);
    try {
      engine.writeSide =
        options.writer === 'inline' ? engine.inlineWriteSide(options) : options.writer === 'none' ? new NoWriteSide() : await engine.writeThread(options);
      if (options.searchThreads) engine.searchThreads = await SearchThreads.start(engine.dbPath, options.searchThreads);
    } catch (error) {
      await engine.writeSide?.close();
      await engine.indexes.closeAll();
      await engine.tasks.close();
      throw error;
    }
    if (options.autoProcess !== false) engine.scheduler.start();
    return engine;
  }

  /** The scheduler in this thread: it alone changes the stores, so it cleans up after a crash first. */
  private inlineWriteSide(options: EngineOptions): Scheduler {
    this.indexes.removeOrphans();
    const orphans = removeOrphanUpdateFiles(this.paths.updateFiles, this.tasks);
    if (orphans > 0) this.log('warn', `removed ${orphans} update file(s) that no pending task refers to`);
    const scheduler = new Scheduler({
      taskStore: this.tasks,
      registry: this.indexes,
      updateFilePath: (name) => join(this.paths.updateFiles, name),
      dataPath: this.paths.root,
      maxBatchPayloadBytes: batchPayloadBytes(options.maxIndexingMemory ?? defaultIndexingMemory()),
      log: (level, message) => this.log(level, message),
    });
    try {
      scheduler.recover();
    } catch (error) {
      // A disk full to the last byte: the interrupted tasks stay `processing` until a start that
      // can write; reads are served meanwhile.
      this.log('error', `could not requeue the interrupted tasks: ${(error as Error).message}`);
    }
    return scheduler;
  }

  private writeThread(options: EngineOptions): Promise<WriteThread> {
    return WriteThread.spawn({
      dbPath: this.dbPath,
      maxIndexingMemory: options.maxIndexingMemory,
      logLevel: options.logLevel ?? 'info',
      log: (lvl, message) => this.logger(lvl, message),
      beforeBatchFinished: () => this.followCommit(),
    });
  }

  /** Another thread committed a batch: read it from fresh snapshots, and let go of deleted indexes. */
  followCommit(): void {
    this.tasks.env.resetReadTxn();
    this.indexes.renewReads();
    noteForeignCommit();
    this.searchThreads?.noteCommit();
    this.indexes.closeUnmapped().catch((error: Error) => this.log('warn', `could not close a deleted index: ${error.message}`));
  }

  /** Whatever processes the task queue: this thread's scheduler, or the write thread's mirror. */
  get scheduler(): WriteSide {
    return this.writeSide;
  }

  /** The scheduler when it runs in this thread (`writer: 'inline'`), else null. */
  get inlineScheduler(): Scheduler | null {
    return this.writeSide instanceof Scheduler ? this.writeSide : null;
  }

  /** Options of the dump, snapshot and upgrade processors, for a write thread (see Ops.install). */
  configureOperations(options: PortableOpsOptions): Promise<void> {
    return this.writeSide instanceof WriteThread ? this.writeSide.configureOperations(options) : Promise.resolve();
  }

  log(level: 'error' | 'warn' | 'info' | 'debug', message: string): void {
    if (LEVELS[level] <= this.logLevel) this.logger(level, message);
  }

  /** Stop processing (the current batch finishes, or is aborted with `abort`) and close the stores. */
  async close(options: { abort?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.scheduler.close(options.abort ?? false);
    await this.searchThreads?.close();
    await this.indexes.closeAll();
    await this.tasks.flushed();
    await this.tasks.close();
  }

  onBatchFinished(listener: (event: BatchFinished) => void): void {
    this.scheduler.on('batchFinished', listener);
  }

  /** Install the processor of an operation task; only where the scheduler runs in this thread. */
  registerOperation(type: TaskType, processor: OperationProcessor): void {
    const scheduler = this.inlineScheduler;
    if (!scheduler) throw new SearchError('invalid_state', 'Operation processors are installed in the write thread (see Ops.install).');
    scheduler.registerOperation(type, processor);
  }

  // --- task registration ----------------------------------------------------------------------

  /** Register a task and flush it to disk: once this resolves, the task survives any crash. */
  async enqueue(type: TaskType, indexUid: string | null, payload: TaskPayload, details: Record<string, unknown> | null): Promise<SummarizedTask> {
    if (this.closed) throw new SearchError('invalid_state', 'The engine is shutting down.');
    const record = this.registerTask(() =>
      this.tasks.insert({
        batchUid: null,
        indexUid,
        status: 'enqueued',
        type,
        canceledBy: null,
        details,
        error: null,
        duration: null,
        enqueuedAt: new Date().toISOString(),
        startedAt: null,
        finishedAt: null,
        payload,
      }),
    );
    await this.tasks.flushed();
    this.scheduler.wake();
    return summarizedTask(record);
  }

  /** Write a new task; a full disk answers `no_space_left_on_device` (the commit aborted whole). */
  private registerTask<T>(insert: () => T): T {
    try {
      return this.tasks.write(insert);
    } catch (error) {
      throw asSpaceError(error, this.paths.root);
    }
  }

  // --- indexes --------------------------------------------------------------------------------

  index(uid: string): Index {
    return this.indexes.get(uid);
  }

  listIndexes(query: { offset?: number; limit?: number } = {}): Page<IndexInfo> {
    const offset = query.offset ?? 0;
    const limit = query.limit ?? 20;
    const uids = this.indexes.uids();
    return { results: uids.slice(offset, offset + limit).map((uid) => this.indexes.get(uid).info()), offset, limit, total: uids.length };
  }

  getIndex(uid: string): IndexInfo {
    return this.indexes.get(uid).info();
  }

  async createIndex(uid: string, options: { primaryKey?: string | null } = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const primaryKey = options.primaryKey ?? null;
    return this.enqueue('indexCreation', uid, { kind: 'indexCreation', primaryKey }, { primaryKey });
  }

  async updateIndex(uid: string, options: { primaryKey?: string | null }): Promise<SummarizedTask> {
    validateIndexUid(uid);
    return this.enqueue('indexUpdate', uid, { kind: 'indexUpdate', primaryKey: options.primaryKey }, { primaryKey: options.primaryKey ?? null });
  }

  async deleteIndex(uid: string): Promise<SummarizedTask> {
    validateIndexUid(uid);
    return this.enqueue('indexDeletion', uid, { kind: 'indexDeletion' }, { deletedDocuments: null });
  }

  async swapIndexes(swaps: Array<{ indexes: [string, string] }>): Promise<SummarizedTask> {
    const seen = new Set<string>();
    for (const swap of swaps) {
      if (!Array.isArray(swap?.indexes) || swap.indexes.length !== 2) {
        throw new SearchError('invalid_swap_indexes', 'Invalid value at `.indexes`: two index uids must be specified for each swap.');
      }
      for (const uid of swap.indexes) {
        validateIndexUid(uid, 'invalid_swap_indexes');
        if (seen.has(uid)) {
          throw new SearchError('invalid_swap_duplicate_index_found', `Indexes must be declared only once during a swap. \`${uid}\` was specified several times.`);
        }
        seen.add(uid);
      }
    }
    return this.enqueue('indexSwap', null, { kind: 'indexSwap', swaps }, { swaps });
  }

  indexStats(uid: string): IndexStats {
    const index = this.indexes.get(uid);
    return index.stats(this.isIndexing(uid));
  }

  private isIndexing(uid: string): boolean {
    return this.scheduler.processingIndexUids().has(uid);
  }

  stats(): GlobalStats {
    const indexes: Record<string, IndexStats> = {};
    let lastUpdate: string | null = null;
    for (const uid of this.indexes.uids()) {
      const index = this.indexes.get(uid);
      indexes[uid] = index.stats(this.isIndexing(uid));
      const updated = index.store.updatedAt;
      if (!lastUpdate || updated > lastUpdate) lastUpdate = updated;
    }
    const databaseSize = directorySize(this.dbPath);
    return { databaseSize, usedDatabaseSize: databaseSize, lastUpdate, indexes };
  }

  // --- documents ------------------------------------------------------------------------------

  async addDocuments(
    uid: string,
    payload: DocumentPayload | Document[],
    options: { primaryKey?: string | null; method?: 'replace' | 'update'; allowIndexCreation?: boolean } = {},
  ): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const allowIndexCreation = options.allowIndexCreation ?? true;
    const updateFile = `${randomUUID()}${UPDATE_FILE_EXTENSION}`;
    const path = join(this.paths.updateFiles, updateFile);
    // Refused before a byte is written when it would eat into the disk reserve (store/disk-space.ts).
    ensureSpaceFor(this.paths.updateFiles, Array.isArray(payload) ? 0 : payload.data.length, 'this payload');
    let count: number;
    if (Array.isArray(payload)) {
      try {
        writeUpdateFile(path, payload);
      } catch (error) {
        rmSync(path, { force: true });
        throw error;
      }
      count = payload.length;
    } else count = await persistPayload(payload, path);
    try {
      return await this.enqueue(
        'documentAdditionOrUpdate',
        uid,
        { kind: 'documents', updateFile, method: options.method ?? 'replace', primaryKey: options.primaryKey ?? null, count, allowIndexCreation },
        { receivedDocuments: count, indexedDocuments: null },
      );
    } catch (error) {
      rmSync(join(this.paths.updateFiles, updateFile), { force: true });
      throw error;
    }
  }

  getDocuments(uid: string, query: DocumentsQuery = {}): Page<Document> {
    return this.indexes.get(uid).getDocuments(query);
  }

  getDocument(uid: string, id: string, query: { fields?: string[] | null; retrieveVectors?: boolean } = {}): Document {
    return this.indexes.get(uid).getDocument(id, query);
  }

  async deleteDocument(uid: string, id: string): Promise<SummarizedTask> {
    return this.deleteDocuments(uid, [id]);
  }

  async deleteDocuments(uid: string, ids: Array<string | number>): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const normalized = ids.map((id) => {
      if (typeof id === 'number') return normalizeDocumentId(id);
      if (typeof id === 'string') return id;
      throw new SearchError('invalid_document_ids', `Invalid value type: expected a string or an integer, found \`${JSON.stringify(id)}\`.`);
    });
    return this.enqueue('documentDeletion', uid, { kind: 'deleteIds', ids: normalized }, { providedIds: normalized.length, deletedDocuments: null });
  }

  async deleteDocumentsByFilter(uid: string, filter: unknown): Promise<SummarizedTask> {
    validateIndexUid(uid);
    if (filter === undefined || filter === null) throw new SearchError('missing_document_filter', 'Missing field `filter`');
    if (this.indexes.exists(uid)) this.indexes.get(uid).filterDocids(filter, 'invalid_document_filter');
    return this.enqueue(
      'documentDeletion',
      uid,
      { kind: 'deleteFilter', filter },
      { providedIds: 0, originalFilter: JSON.stringify(filter), deletedDocuments: null },
    );
  }

  async clearDocuments(uid: string): Promise<SummarizedTask> {
    validateIndexUid(uid);
    return this.enqueue('documentDeletion', uid, { kind: 'clearDocuments' }, { deletedDocuments: null });
  }

  // --- settings -------------------------------------------------------------------------------

  getSettings(uid: string): Settings {
    // A copy: the store's settings are shared (and frozen) inside the engine.
    const settings = structuredClone(this.indexes.get(uid).settings);
    // embedder API keys never leave the engine in clear (dumps read the store, not this)
    return { ...settings, embedders: redactEmbedders(settings.embedders) };
  }

  /**
   * Validated at once (400 `invalid_settings_*`, `bad_request`), as the reference does, then enqueued.
   * `allowIndexCreation: false` (a key without `indexes.create`) makes the task fail with
   * `index_not_found` instead of creating a missing index.
   */
  async updateSettings(uid: string, body: unknown, options: { allowIndexCreation?: boolean } = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const patch = validateSettingsPatch(body) as Partial<Settings>;
    const allowIndexCreation = options.allowIndexCreation ?? true;
    return this.enqueue('settingsUpdate', uid, { kind: 'settings', patch, allowIndexCreation }, redactPatch(patch));
  }

  async resetSettings(uid: string, keys?: Array<keyof Settings>, options: { allowIndexCreation?: boolean } = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const all = Object.keys(defaultSettings()) as Array<keyof Settings>;
    const patch = Object.fromEntries((keys ?? all).map((key) => [key, null])) as Partial<Settings>;
    const allowIndexCreation = options.allowIndexCreation ?? true;
    return this.enqueue('settingsUpdate', uid, { kind: 'settings', patch, allowIndexCreation }, { ...patch });
  }

  // --- search -------------------------------------------------------------------------------

  /** `POST /indexes/:uid/search`: keyword, vector or hybrid search depending on the body. */
  async search(uid: string, body: unknown): Promise<HybridSearchResponse> {
    return searchWithVectors(this.indexes.get(uid), body);
  }

  /** `POST /indexes/:uid/facet-search`: values of one facet among the documents matching `q` and `filter`. */
  async facetSearch(uid: string, body: unknown): Promise<FacetSearchResult> {
    return facetSearchRequest(this.indexes.get(uid), body);
  }

  /** `POST /multi-search`: several searches at once, or one federated (merged) result list. */
  async multiSearch(body: unknown): Promise<MultiSearchResponse> {
    return multiSearch((uid) => this.indexes.get(uid), body, searchWithVectors);
  }

  /** `POST /indexes/:uid/similar`: documents near a given document's embedding. */
  async similar(uid: string, body: unknown): Promise<SimilarResponse> {
    return similarDocuments(this.indexes.get(uid), body);
  }

  /** A search request's response body as UTF-8 JSON: computed in a search thread when there are some (`searchThreads`). */
  async answer(request: SearchRequest): Promise<Buffer> {
    if (this.searchThreads) return this.searchThreads.run(request);
    return Buffer.from(JSON.stringify(await this.read(request)));
  }

  private read(request: SearchRequest): Promise<unknown> {
    switch (request.kind) {
      case 'search':
        return this.search(request.uid, request.body);
      case 'facetSearch':
        return this.facetSearch(request.uid, request.body);
      case 'similar':
        return this.similar(request.uid, request.body);
      case 'multiSearch':
        return this.multiSearch(request.body);
    }
  }

  // --- tasks and batches ----------------------------------------------------------------------

  getTask(uid: number): Task {
    const record = this.tasks.get(uid);
    if (!record) throw new SearchError('task_not_found', `Task \`${uid}\` not found.`);
    return publicTask(record);
  }

  getTasks(query: TaskListQuery = {}): CursorPage<Task> {
    const limit = query.limit ?? 20;
    const matched = this.tasks.match(query);
    const uids = matched.toArray();
    if (!query.reverse) uids.reverse();
    const start = query.from === undefined ? 0 : firstIndexFrom(uids, query.from, !query.reverse);
    const page = uids.slice(start, start + limit);
    const next = uids[start + limit];
    return {
      results: page.map((uid) => publicTask(this.tasks.get(uid)!)),
      total: uids.length,
      limit,
      from: page.length > 0 ? page[0]! : null,
      next: next ?? null,
    };
  }

  async cancelTasks(filter: TaskFilter): Promise<SummarizedTask> {
    requireTaskFilter(filter, 'cancel');
    const task = await this.enqueue('taskCancelation', null, { kind: 'taskCancelation', filter: serializeTaskFilter(filter) }, {
      matchedTasks: this.tasks.match(filter).size,
      canceledTasks: null,
      originalFilter: originalFilterString(filter),
    });
    this.scheduler.abortIfProcessing(this.tasks.match({ ...filter, statuses: ['processing'] }));
    return task;
  }

  async deleteTasks(filter: TaskFilter): Promise<SummarizedTask> {
    requireTaskFilter(filter, 'delete');
    return this.enqueue('taskDeletion', null, { kind: 'taskDeletion', filter: serializeTaskFilter(filter) }, {
      matchedTasks: this.tasks.match(filter).size,
      deletedTasks: null,
      originalFilter: originalFilterString(filter),
    });
  }

  getBatch(uid: number): Batch {
    const batch = this.tasks.getBatch(uid);
    if (!batch) throw new SearchError('batch_not_found', `Batch \`${uid}\` not found.`);
    return batch;
  }

  getBatches(query: TaskListQuery = {}): CursorPage<Batch> {
    const limit = query.limit ?? 20;
    const hasTaskFilter = Object.keys(query).some((k) => !['limit', 'from', 'reverse'].includes(k));
    let uids = this.tasks.batchUids();
    if (hasTaskFilter) {
      const wanted = new Set<number>();
      for (const taskUid of this.tasks.match(query)) {
        const batchUid = this.tasks.get(taskUid)?.batchUid;
        if (batchUid !== null && batchUid !== undefined) wanted.add(batchUid);
      }
      uids = uids.filter((uid) => wanted.has(uid));
    }
    if (!query.reverse) uids.reverse();
    const start = query.from === undefined ? 0 : firstIndexFrom(uids, query.from, !query.reverse);
    const page = uids.slice(start, start + limit);
    return {
      results: page.map((uid) => this.tasks.getBatch(uid)!),
      total: uids.length,
      limit,
      from: page.length > 0 ? page[0]! : null,
      next: uids[start + limit] ?? null,
    };
  }

  /** Resolve once the task is finished (succeeded, failed or canceled). */
  async waitForTask(uid: number, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<Task> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const task = this.getTask(uid);
      if (task.status === 'succeeded' || task.status === 'failed' || task.status === 'canceled') {
        // seen in the task store before the write thread's message arrived: follow its commit now,
        // so that Index objects held by the caller see what the task did
        this.followCommit();
        return task;
      }
      if (Date.now() > deadline) throw new SearchError('internal', `Timed out waiting for task ${uid}.`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, options.intervalMs ?? 50);
        const self = this;
        function done() {
          clearTimeout(timer);
          self.scheduler.off('batchFinished', done);
          resolve();
        }
        this.scheduler.on('batchFinished', done);
      });
    }
  }

  /** Raw access for the ops module (dumps, snapshots). */
  taskRecord(uid: number): TaskRecord | undefined {
    return this.tasks.get(uid);
  }

  assertIndexExists(uid: string): void {
    if (!this.indexes.exists(uid)) throw indexNotFound(uid);
  }
}

function requireTaskFilter(filter: TaskFilter, action: 'cancel' | 'delete'): void {
  if (Object.values(filter).every((value) => value === undefined)) {
    throw new SearchError(
      'missing_task_filters',
      `Query parameters to filter the tasks to ${action} are missing. Available query parameters are: ` +
        '`uids`, `indexUids`, `statuses`, `types`, `canceledBy`, `beforeEnqueuedAt`, `afterEnqueuedAt`, ' +
        '`beforeStartedAt`, `afterStartedAt`, `beforeFinishedAt`, `afterFinishedAt`.',
    );
  }
}

/** Position of the first uid at or past `from` in a list sorted descending (or ascending). */
function firstIndexFrom(uids: number[], from: number, descending: boolean): number {
  const index = uids.findIndex((uid) => (descending ? uid <= from : uid >= from));
  return index === -1 ? uids.length : index;
}

function directorySize(path: string): number {
  // LMDB data files dominate; sum them without following links.
  let total = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSafe(dir)) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) total += statSize(full);
    }
  };
  walk(path);
  return total;
}


function readdirSafe(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Bytes allocated on disk: an LMDB data file with a writable map is sparse, sized to the map. */
function statSize(path: string): number {
  try {
    const stat = statSync(path);
    return Math.min(stat.size, stat.blocks * 512);
  } catch {
    return 0;
  }
}
