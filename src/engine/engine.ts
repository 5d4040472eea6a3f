/**
 * The engine: one typed API over a database directory. The HTTP routes, the CLI and in-process
 * users all go through it. Reads answer at once from the stores; writes register a task (flushed
 * to disk before the call returns) that the scheduler processes in the background, by default
 * in a worker thread (tasks/write-thread.ts), so that no read ever waits for a batch.
 */
import { preciseNow } from './wire/timestamp.js';
import { addQueueWait, sharedClock } from './search/performance.js';
import { afterHits, responseChunks } from './search/hit-bytes.js';
import { requestKey, ResultCache, resultCacheEnabled } from './search/result-cache.js';
import { hydrateHits, type ForeignIndexes } from './search/foreign-keys.js';
import { renderTemplate, type RenderTemplateResponse } from './embedders/render-template.js';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { batchPayloadBytes, defaultIndexingMemory } from './tasks/batch-budget.js';
import { SearchError } from './errors.js';
import { emptyDocumentFilter, parseFilter } from './search/filter/parser.js';
import {
  activeEffects,
  applyRuleUpdate,
  listRules,
  parseRuleListQuery,
  parseRuleUpdate,
  ruleNotFound,
  SearchRuleStore,
  validateRuleUid,
  type DynamicSearchRule,
  type RuleUpdate,
} from './search-rules/rules.js';
import { ruleWords } from './search-rules/words.js';
import { DEFAULT_SEARCH_CUTOFF_MS, type RuleResolver } from './search/search.js';
import { checkSettingsFeatures, FeatureStore, TASK_DOCUMENTS_ACTION, TASK_QUEUE_COMPACTION_ACTION, type ExperimentalFeatures } from './experimental-features.js';
import { filterBranches, type FilterBranches } from './search-rules/filter-condition.js';
import { applyPendingTaskQueueCompaction, compactTaskQueue, type TaskQueueCompaction } from './tasks/queue-compaction.js';
import type { Index } from './index/index.js';
import { defaultModules } from './modules.js';
import { searchWithVectors, type HybridSearchResponse } from './search/hybrid.js';
import { warmQueries } from './search/warm-queries.js';
import { indexingNice } from './indexing-priority.js';
import { redactPatch, redactEmbedders } from './embedders/settings.js';
import { similarDocuments, type SimilarResponse } from './search/similar.js';
import { multiSearch, type MultiSearchResponse } from './search/multi-search.js';
import { searchMetadata, type SearchMetadata } from './search/metadata.js';
import { readUpdateFile, UPDATE_FILE_EXTENSION, writeUpdateFile } from './index/payload.js';
import { persistPayload } from './index/intake.js';
import { noteForeignCommit } from './index/store.js';
import { IndexRegistry, indexNotFound, validateIndexUid } from './index/registry.js';
import { normalizeDocumentId } from './index/documents.js';
import { compileEditFunction } from './edit-function/edition.js';
import { checkExportRequest, exportDetails, registerExportProcessor, type ExportRequest } from './export/index.js';
import { defaultSettings, type Settings } from './settings/types.js';
import { validateSettingsPatch } from './settings/validate.js';
import { listFields, type FieldMetadata, type FieldsQuery } from './settings/field-metadata.js';
import { lockDatabase, type DatabaseLock } from './store/database-lock.js';
import { databaseExists, databasePaths, ensureDirectories, requireDatabase, ensureInstanceUid, readVersion, writeVersion, type DatabasePaths } from './store/database-dir.js';
import { DB_FORMAT_VERSION, versionMismatch } from './store/format.js';
import { asSpaceError, ensureSpaceFor } from './store/disk-space.js';
import { removeOrphanUpdateFiles } from './tasks/update-files.js';
import { originalFilterString, serializeTaskFilter, type TaskPayload } from './tasks/payload.js';
import type { OperationProcessor } from './tasks/processing.js';
import { Scheduler, type BatchFinished } from './tasks/scheduler.js';
import { NoWriteSide, type WriteSide } from './tasks/write-side.js';
import { SearchThreads, type SearchRequest } from './search/search-threads.js';
import { WriteThread, type PortableOpsOptions } from './tasks/write-thread.js';
import { collectAfterWork } from './thread-heaps.js';
import roaring from 'roaring';
import { TaskStore, type KeyPage, type TaskRecord, type TaskScope } from './tasks/store.js';
import { cursorPage } from './tasks/paging.js';
import { WebhookOutbox } from './webhooks/outbox.js';
import { facetSearchRequest } from './search/facets/facet-search-request.js';
import type { FacetSearchResult } from './search/facets/facet-search.js';
import { publicTask, summarizedTask } from './tasks/view.js';
import { dispatch as dispatchLogEvent, localFilterSpecs, log as logEvent } from './logs/logger.js';
import type { Level } from './logs/targets.js';
import type { ClosedSpan } from './logs/event.js';
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
  IndexSwap,
  Page,
  SummarizedTask,
  Task,
  TaskFilter,
  TaskListQuery,
  TaskType,
  WriteOptions,
} from './types.js';

const { RoaringBitmap32 } = roaring;

export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'off';

export interface EngineOptions {
  dbPath: string;
  /** Memory the indexer may use for one batch, which bounds the payload a batch gathers (see tasks/batch-budget.ts). */
  maxIndexingMemory?: number;
  /**
   * The most verbose level this engine emits (default `info`; `off`: silent). Without `logger`,
   * events go to the thread's structured logger (logs/logger.ts), whose sinks filter them again.
   */
  logLevel?: LogLevel;
  /** Take every line here instead, as `level, message` (tests). */
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
  /**
   * Experimental features the serve options turn on for this run (`--experimental-enable-metrics`...),
   * on top of those set through PATCH /experimental-features; recorded for every thread to read.
   */
  instanceFeatures?: Partial<ExperimentalFeatures>;
  /**
   * Take the process's exclusive lock on the directory (default true; see store/database-lock.ts).
   * False only in the worker threads of an engine, which run under their parent's lock.
   */
  lock?: boolean;
  /** Create the database when the directory holds none (default true); false: fail with `database_not_found`. */
  create?: boolean;
  /**
   * After opening, load each index's vector graphs and run one search per embedder (`open` waits
   * for that, `warmWaitMs` at most), then keyword warm-up searches in the background, so that the
   * first search finds what it needs loaded and compiled (default: true in the thread that answers searches, that is without
   * `searchThreads` and not as the write thread; `writer: 'inline'` engines default to false).
   * With `warmAfterCommit` it also warms each index a commit changed.
   */
  warm?: boolean;
  /**
   * How long `open` waits for the first part of the warm-up, at most (default WARM_OPEN_WAIT_MS;
   * 0: not at all): every index opened and each embedder's vector graph loaded and searched once
   * through the answer path, so that a search sent as soon as `open` returns finds the graph
   * loaded and the search code compiled. What is not done by then goes on in the background.
   */
  warmWaitMs?: number;
  /**
   * Warm each index a commit changed, after the last of a run of commits (default false): its
   * loading warm-up searches, and on an engine that has not yet warmed any index whole, the first
   * index with words gets all of them (WARM_KEYWORD_BUDGET_MS at most) so that V8 optimizes the
   * search code before users' first searches. Off by default: in a server's search threads it
   * made searches sent while the movies were indexed wait behind the warm-up searches (p99 34 ->
   * 136-214 ms, bench/README.md) without a measurable gain as users type on a fresh index.
   */
  warmAfterCommit?: boolean;
  /**
   * Once, after the first commit that gives an index words (default false): that index's whole
   * keyword warm-up, one search at a time and only while no request has come for
   * WARM_IDLE_GAP_MS, so that V8 optimizes the search code before users' first searches without
   * a user's search waiting behind it; given up after WARM_IDLE_DEADLINE_MS. Meant for a server's
   * search threads, which open on an empty database and otherwise compile the search code on the
   * first searches users send (as you type on a freshly built index); not on there yet: served A
   * on a build with it on (50 ms gap) was far worse than `main` at a similar load, and the cause
   * was not found on a busy machine (bench/README.md, "Cheaper small buckets").
   */
  warmCodeOnce?: boolean;
  /**
   * How long the write thread may sit idle (no batch, no task registered) before it ends, giving
   * its memory back; the next task starts another. Default: 1000 ms under a memory limit below
   * 4 GiB (see tasks/write-thread.ts), else never (null).
   */
  writeThreadIdleEndMs?: number | null;
  /**
   * Run the write side in a worker thread or in a child process (see tasks/write-host.ts).
   * Default: a child process under a memory limit below 4 GiB, where its exit after an idle spell
   * gives back all the memory a build took, else a thread; `SEARCH_WRITE_PROCESS=on|off` decides
   * where this option is not given.
   */
  writeHost?: 'thread' | 'process';
  /**
   * Set in a write thread started again in the same process (after an idle end or a crash): it
   * skips the start-up clean-up of update files no task refers to, since the serving thread may
   * be writing one for a task it has not registered yet, and of unknown index directories.
   */
  resumeWriter?: boolean;
}

const LEVELS: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };
const levelName = (rank: number): LogLevel => (Object.keys(LEVELS) as LogLevel[]).find((name) => LEVELS[name] === rank) ?? 'off';

/** What a search-like read may hand back beyond the searched index. */
export interface ReadOptions {
  /** Foreign-key indexes whose documents may replace ids in hits; undefined: all. */
  foreignIndexes?: ForeignIndexes;
  /** The response is only serialized (`answer`): hits may share cached document parts (see search/hit-bytes.ts). */
  serialized?: boolean;
}

/**
 * `open` waits this long at most for the loading part of the warm-up (`warmWaitMs`): 50,000
 * vectors take 0.1-0.2 s of CPU, 500,000 about 0.3 s (bench/README.md, "restart" lines); a larger
 * database finishes in the background rather than delay startup further.
 */
const WARM_OPEN_WAIT_MS = 800;
/** Keyword warm-up searches every index gets, whatever the time (see `warm`). */
const WARM_LOADING_QUERIES = 6;
/** Time after which an engine stops its other keyword warm-up searches (see `warm`). */
const WARM_KEYWORD_BUDGET_MS = 3_000;
/**
 * `warmCodeOnce` runs a warm-up search only when no request came for this long: a real pause
 * (a build between payloads), not the gap between two searches of a steady stream, where a first
 * warm-up search in cold code (hundreds of ms on a busy machine) would hold up the stream.
 */
const WARM_IDLE_GAP_MS = 500;
/** `warmCodeOnce` gives up what is left of its warm-up this long after it started. */
const WARM_IDLE_DEADLINE_MS = 30_000;

export class Engine {
  readonly dbPath: string;
  readonly instanceUid: string;
  readonly paths: DatabasePaths;
  readonly tasks: TaskStore;
  /** Notifications of finished batches waiting for the webhooks (see webhooks/outbox.ts). */
  readonly webhookOutbox: WebhookOutbox;
  readonly indexes: IndexRegistry;
  readonly features: FeatureStore;
  /** Dynamic search rules, instance-wide (search-rules/rules.ts). */
  readonly searchRules: SearchRuleStore;
  private writeSide!: WriteSide;
  private searchThreads: SearchThreads | null = null;
  private readonly logLevel: number;
  private readonly logger: ((level: string, message: string) => void) | null;
  private closed = false;
  private readonly lock: DatabaseLock | null;

  private constructor(options: EngineOptions) {
    this.dbPath = options.dbPath;
    this.paths = databasePaths(options.dbPath);
    this.logLevel = LEVELS[options.logLevel ?? 'info'];
    this.logger = options.logger ?? null;
    if (options.create === false) requireDatabase(this.dbPath);
    // a mistyped setting fails the start, not silently each writing thread
    if (options.writer !== 'none') indexingNice();
    // before anything is read or written: a second process must not even create a file here
    this.lock = options.lock === false ? null : lockDatabase(this.dbPath);
    try {
      const fresh = !databaseExists(this.dbPath);
      if (!fresh && !options.skipVersionCheck) {
        const found = readVersion(this.dbPath)!;
        if (found !== DB_FORMAT_VERSION) throw versionMismatch(found);
      }
      ensureDirectories(this.paths);
      this.instanceUid = ensureInstanceUid(this.dbPath);
      // under the lock, before anything maps the queue: a compaction asked for before the restart
      if (!fresh && this.lock) this.applyTaskQueueCompaction();
      this.tasks = new TaskStore(this.paths.tasks);
      // a read-only engine sees the mapping change only at `followCommit`, which renews its reads
      if (options.writer === 'none') this.tasks.cacheIndexMapping();
      this.webhookOutbox = new WebhookOutbox(this.tasks.env);
      if (options.writer !== 'none' && this.tasks.ensureIndexes()) this.log('info', 'indexed the task queue and batches (first start with task indexes)');
      if (fresh) writeVersion(this.dbPath, DB_FORMAT_VERSION);
      this.features = new FeatureStore(this.tasks.env);
      this.searchRules = new SearchRuleStore(this.tasks.env);
      if (options.instanceFeatures) this.features.setInstance(options.instanceFeatures);
      this.indexes = new IndexRegistry(this.paths.indexes, this.tasks, { ...defaultModules, features: this.features });
    } catch (error) {
      this.lock?.release();
      throw error;
    }
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
      engine.lock?.release();
      throw error;
    }
    if (options.autoProcess !== false) engine.scheduler.start();
    engine.warms = options.warm ?? (!options.searchThreads && options.writer !== 'inline');
    engine.warmsAfterCommit = engine.warms && options.warmAfterCommit === true;
    engine.codeWarmPending = engine.tracksRequests = engine.warms && options.warmCodeOnce === true;
    if (engine.warms) await engine.warm(options.warmWaitMs ?? WARM_OPEN_WAIT_MS);
    return engine;
  }

  /**
   * Start the warm-up and wait for its loading part, `waitMs` at most (the rest runs on in the
   * background; see `warmLoading` and `warmKeywords`). Searches have no side effect; the warm-up
   * stops when the engine closes.
   */
  private async warm(waitMs: number): Promise<void> {
    const loading = this.warmLoading();
    void loading.then((keyword) => this.warmKeywords(keyword)).catch(() => undefined);
    if (waitMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([loading.then(() => undefined, () => undefined), late]);
    clearTimeout(timer);
  }

  /**
   * Open every index and load what its first search would load, then run its vector warm-up
   * searches through the answer path (their answers dropped), one turn of the event loop per
   * index: a request arriving meanwhile waits for one index at most. Returns the indexes opened.
   */
  private async warmLoading(): Promise<string[]> {
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const keyword: string[] = [];
    for (const uid of this.indexes.uids()) {
      await turn();
      if (this.closed) return [];
      try {
        if (!this.indexes.exists(uid)) continue;
        const index = this.indexes.get(uid);
        for (const body of index.warm()) {
          if (this.closed) return [];
          // the answer path (serialized, as HTTP asks) compiles what a first request runs
          await this.warmSearch(uid, body);
        }
        keyword.push(uid);
      } catch (error) {
        // an index that cannot be read now fails its first search with the reason instead
        this.log('debug', `warming index \`${uid}\`: ${(error as Error).message}`);
      }
    }
    return keyword;
  }

  /**
   * The keyword warm-up searches of `uids`, made from each index's words (see
   * search/warm-queries.ts: its word dictionary is loaded for them, which `open` does not wait
   * for), one per turn of the event loop: every index gets its first few (what they load, each
   * index needs once); the rest, which only let V8 optimize the code, run while
   * WARM_KEYWORD_BUDGET_MS lasts.
   */
  private async warmKeywords(uids: string[]): Promise<void> {
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const keyword: Array<{ uid: string; bodies: unknown[] }> = [];
    for (const uid of uids) {
      await turn();
      if (this.closed) return;
      try {
        if (!this.indexes.exists(uid)) continue;
        const index = this.indexes.get(uid);
        const bodies = warmQueries(index);
        if (bodies.length > 0) this.codeWarmed = true;
        keyword.push({ uid, bodies });
      } catch (error) {
        this.log('debug', `warming index \`${uid}\`: ${(error as Error).message}`);
      }
    }
    const started = performance.now();
    for (const [from, to] of [[0, WARM_LOADING_QUERIES], [WARM_LOADING_QUERIES, Infinity]] as const)
      for (const { uid, bodies } of keyword)
        for (const body of bodies.slice(from, to)) {
          await turn();
          if (this.closed || (from > 0 && performance.now() - started > WARM_KEYWORD_BUDGET_MS)) return;
          try {
            await this.warmSearch(uid, body);
          } catch (error) {
            this.log('debug', `warming index \`${uid}\`: ${(error as Error).message}`);
            break;
          }
        }
  }

  /** Whether this engine answers searches itself and warms its indexes (see `EngineOptions.warm`). */
  private warms = false;
  /** The commit of each index when it was last warmed after one (see `warmAfterCommit`). */
  private readonly warmedAt = new WeakMap<object, number>();
  /**
   * Some index had all its warm-up searches (at open or after a commit): V8 has optimized the
   * search code, which serves every index, so later indexes get only their loading searches.
   */
  private codeWarmed = false;
  /** `EngineOptions.warmAfterCommit`, on an engine that warms. */
  private warmsAfterCommit = false;
  private warmingAfterCommit = false;
  /** A commit arrived while warming: start over with what it changed. */
  private commitWhileWarming = false;

  /**
   * After a commit, run the loading warm-up searches (see `warm`) on each index whose commit
   * changed, one per turn of the event loop, off any request's path: the first search after a
   * commit otherwise reloads the index's word dictionary and vocabulary (tens of milliseconds on
   * the movies) and reads the new pages, and on a fresh server the first searches of an index
   * are its first searches at all, in code V8 has not optimized yet. Several commits in a row
   * warm once, after the last.
   */
  private warmAfterCommit(): void {
    if (!this.warmsAfterCommit || this.closed) return;
    if (this.warmingAfterCommit) {
      this.commitWhileWarming = true;
      return;
    }
    this.warmingAfterCommit = true;
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    void (async () => {
      try {
        do {
          this.commitWhileWarming = false;
          await turn();
          for (const uid of this.indexes.uids()) {
            if (this.closed || this.commitWhileWarming) break;
            await this.warmIndexAfterCommit(uid, turn);
          }
        } while (this.commitWhileWarming && !this.closed);
      } finally {
        this.warmingAfterCommit = false;
      }
    })();
  }

  /**
   * An index a commit changed: its loading warm-up searches (dropped when a newer commit arrives,
   * the next pass runs them on it). On an engine that has not yet warmed any index whole (a
   * fresh server), the first index with words gets all its warm-up searches within
   * WARM_KEYWORD_BUDGET_MS, whatever commits follow: that lets V8 optimize the search code before
   * users' first searches; the code is shared, so later indexes need only their loading searches.
   */
  private async warmIndexAfterCommit(uid: string, turn: () => Promise<unknown>): Promise<void> {
    try {
      if (!this.indexes.exists(uid)) return;
      const index = this.indexes.get(uid);
      const commit = index.store.commit;
      if (this.warmedAt.get(index) === commit) return;
      this.warmedAt.set(index, commit);
      const bodies = warmQueries(index);
      const full = bodies.length > 0 && !this.codeWarmed;
      if (full) this.codeWarmed = true;
      const started = performance.now();
      for (const body of full ? bodies : bodies.slice(0, WARM_LOADING_QUERIES)) {
        await turn();
        if (this.closed) return;
        if (full ? performance.now() - started > WARM_KEYWORD_BUDGET_MS : this.commitWhileWarming) {
          // not finished: the next pass warms it again, whatever the next commit changed
          if (!full) this.warmedAt.delete(index);
          return;
        }
        await this.warmSearch(uid, body);
      }
    } catch (error) {
      // a deleted or unreadable index fails its own searches with the reason
      this.log('debug', `warming index \`${uid}\` after a commit: ${(error as Error).message}`);
    }
  }

  /** `EngineOptions.warmCodeOnce`: its warm-up has not started yet. */
  private codeWarmPending = false;
  private codeWarming = false;
  /** Requests being answered by `answer`, and when the last one came or left (for `whenIdle`; counted only with `warmCodeOnce`). */
  private tracksRequests = false;
  private answering = 0;
  private lastRequestAt = 0;

  /**
   * `EngineOptions.warmCodeOnce`, after a commit: the first index with words gets its whole
   * keyword warm-up (see warm-queries.ts), in idle time (`whenIdle`), once per engine. Even the
   * dictionary it is made from waits for idle time: loading it takes tens of milliseconds.
   */
  private warmCodeOnce(): void {
    if (!this.codeWarmPending || this.codeWarming || this.closed) return;
    if (this.codeWarmed) {
      this.codeWarmPending = false;
      return;
    }
    this.codeWarming = true;
    const started = performance.now();
    void (async () => {
      try {
        await this.whenIdle();
        for (const uid of this.indexes.uids()) {
          if (this.closed || !this.indexes.exists(uid)) continue;
          const bodies = warmQueries(this.indexes.get(uid));
          if (bodies.length === 0) continue;
          this.codeWarmPending = false;
          this.codeWarmed = true;
          for (const body of bodies) {
            await this.whenIdle();
            if (this.closed || performance.now() - started > WARM_IDLE_DEADLINE_MS) return;
            await this.answerHere({ kind: 'search', uid, body }, false);
          }
          return;
        }
      } catch (error) {
        // a deleted or unreadable index fails its own searches with the reason
        this.log('debug', `warming the search code: ${(error as Error).message}`);
      } finally {
        this.codeWarming = false;
      }
    })();
  }

  /** Resolves once no request is being answered and none came for WARM_IDLE_GAP_MS (or the engine closed). */
  private whenIdle(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        const quiet = performance.now() - this.lastRequestAt;
        if (this.closed || (this.answering === 0 && quiet >= WARM_IDLE_GAP_MS)) resolve();
        else setTimeout(check, Math.max(1, WARM_IDLE_GAP_MS - quiet)).unref();
      };
      check();
    });
  }

  /** The scheduler in this thread: it alone changes the stores, so it cleans up after a crash first. */
  private inlineWriteSide(options: EngineOptions): Scheduler {
    if (!options.resumeWriter) {
      this.indexes.removeOrphans();
      const orphans = removeOrphanUpdateFiles(this.paths.updateFiles, this.tasks);
      if (orphans > 0) this.log('warn', `removed ${orphans} update file(s) that no pending task refers to`);
    }
    const scheduler = new Scheduler({
      taskStore: this.tasks,
      outbox: this.webhookOutbox,
      registry: this.indexes,
      updateFilePath: (name) => join(this.paths.updateFiles, name),
      dataPath: this.paths.root,
      maxBatchPayloadBytes: batchPayloadBytes(options.maxIndexingMemory ?? defaultIndexingMemory()),
      log: (level, message, fields, span) => this.log(level, message, 'search::tasks', fields, span),
    });
    this.registerSearchRuleProcessors(scheduler);
    registerExportProcessor(scheduler, this.indexes, (level, message) => this.log(level, message));
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
      log: (lvl, message) => this.log(lvl, message, 'search::tasks'),
      logFilters: () => (this.logger ? [levelName(this.logLevel)] : localFilterSpecs()),
      followLogFilters: !this.logger,
      logEvent: (event) => {
        if (LEVELS[event.level] > this.logLevel) return;
        if (this.logger) this.logger(event.level, event.message);
        else dispatchLogEvent(event);
      },
      beforeBatchFinished: () => this.followCommit(),
      idleEndMs: options.writeThreadIdleEndMs,
      host: options.writeHost,
      lockFd: this.lock?.fd,
      // the payloads this thread handed on and the replies it decoded are garbage by now
      afterIdleEnd: () => collectAfterWork(),
    });
  }

  /** Another thread committed a batch: read it from fresh snapshots, and let go of deleted indexes. */
  followCommit(): void {
    this.tasks.renewReads();
    this.searchRules.forget();
    this.indexes.renewReads();
    noteForeignCommit();
    this.searchThreads?.noteCommit();
    this.indexes.closeUnmapped().catch((error: Error) => this.log('warn', `could not close a deleted index: ${error.message}`));
    this.warmAfterCommit();
    this.warmCodeOnce();
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

  /** Log from this engine, under `target` (see logs/targets.ts): its `logLevel` first, then the thread's logger. */
  log(level: Level, message: string, target = 'search::engine', fields?: Record<string, unknown>, span?: ClosedSpan): void {
    if (LEVELS[level] > this.logLevel) return;
    if (this.logger) this.logger(level, message);
    else logEvent(target, level, message, fields, span);
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
    this.lock?.release();
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
  async enqueue(
    type: TaskType,
    indexUid: string | null,
    payload: TaskPayload,
    details: Record<string, unknown> | null,
    options: WriteOptions = {},
  ): Promise<SummarizedTask> {
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
        enqueuedAt: preciseNow(),
        startedAt: null,
        finishedAt: null,
        payload,
        ...(options.customMetadata !== undefined ? { customMetadata: options.customMetadata } : {}),
      }),
    );
    // The task is committed (visible to the write thread) once `registerTask` returns: wake it
    // now rather than after the flush, so that a caller enqueuing many payloads in one go (each
    // written synchronously, the event loop busy until the last) has the first ones processed
    // while it writes the next. The caller's answer still waits for the flush: nothing is
    // acknowledged before it is on disk, and a batch's own commits flush the queue with it.
    this.scheduler.wake();
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

  async createIndex(uid: string, options: { primaryKey?: string | null } & WriteOptions = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const primaryKey = options.primaryKey ?? null;
    return this.enqueue('indexCreation', uid, { kind: 'indexCreation', primaryKey }, { primaryKey }, options);
  }

  /** Change the primary key and/or rename the index (`uid`: its new uid). */
  async updateIndex(uid: string, options: { primaryKey?: string | null; uid?: string } & WriteOptions): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const newIndexUid = options.uid === undefined ? undefined : validateIndexUid(options.uid);
    const details: Record<string, unknown> = { primaryKey: options.primaryKey ?? null };
    if (newIndexUid !== undefined) Object.assign(details, { oldIndexUid: uid, newIndexUid });
    return this.enqueue(
      'indexUpdate',
      uid,
      { kind: 'indexUpdate', primaryKey: options.primaryKey, ...(newIndexUid !== undefined ? { newIndexUid } : {}) },
      details,
      options,
    );
  }

  async deleteIndex(uid: string, options: WriteOptions = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    return this.enqueue('indexDeletion', uid, { kind: 'indexDeletion' }, { deletedDocuments: null }, options);
  }

  /**
   * `POST /tasks/compact`: write the task queue's compacted copy now, put in place at the next
   * start (see tasks/queue-compaction.ts). Synchronous, not a task, as in the reference.
   */
  async compactTaskQueue(): Promise<TaskQueueCompaction> {
    this.features.require('taskQueueCompactionRoute', TASK_QUEUE_COMPACTION_ACTION);
    return compactTaskQueue(this.paths.root);
  }

  private applyTaskQueueCompaction(): void {
    const outcome = applyPendingTaskQueueCompaction(this.paths.root);
    if (outcome === 'applied') this.log('info', 'the compacted task queue written before the restart is now in use');
    else if (outcome === 'stale')
      this.log('warn', 'the task queue changed after its compaction: the compacted copy was dropped and the queue kept as it is (compact it again)');
    else if (outcome === 'interrupted') this.log('warn', 'removed an interrupted task queue compaction');
  }

  /** `POST /indexes/:uid/compact`: an `indexCompaction` task (see index/compaction.ts). */
  async compactIndex(uid: string, options: WriteOptions = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    return this.enqueue('indexCompaction', uid, { kind: 'indexCompaction' }, {}, options);
  }

  /** Swap pairs of indexes; a pair with `rename: true` renames its first index to the second uid, which must not exist. */
  async swapIndexes(swaps: IndexSwap[], options: WriteOptions = {}): Promise<SummarizedTask> {
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
    const normalized = swaps.map((swap) => ({ indexes: swap.indexes, rename: swap.rename ?? false }));
    return this.enqueue('indexSwap', null, { kind: 'indexSwap', swaps: normalized }, { swaps: normalized }, options);
  }

  /** `POST /indexes/:uid/fields`: the index's fields with what its settings make of each. */
  listFields(uid: string, query: FieldsQuery = {}): Page<FieldMetadata> {
    const index = this.indexes.get(uid);
    return listFields(index.settings, Object.keys(index.store.fieldDistribution), query);
  }

  indexStats(uid: string, options: StatsOptions = {}): IndexStats {
    const index = this.indexes.get(uid);
    return index.stats(this.isIndexing(uid), options);
  }

  /** From the task store (two bitmaps), so that it agrees with the task statuses a client reads. */
  private isIndexing(uid: string): boolean {
    return !this.tasks.match({ statuses: ['processing'], indexUids: [uid] }).isEmpty;
  }

  /**
   * `databaseSize` is every file of the database directory; `usedDatabaseSize` leaves out the
   * pages each index's environment freed and keeps for reuse (the data file never shrinks by
   * itself: `POST /indexes/:uid/compact` gives that space back).
   */
  stats(options: StatsOptions = {}): GlobalStats {
    const indexes: Record<string, IndexStats> = {};
    let lastUpdate: string | null = null;
    let unused = 0;
    for (const uid of this.indexes.uids()) {
      const index = this.indexes.get(uid);
      indexes[uid] = index.stats(this.isIndexing(uid), options);
      const updated = index.store.updatedAt;
      if (!lastUpdate || updated > lastUpdate) lastUpdate = updated;
      unused += Math.max(0, statSize(index.store.dataFile) - index.store.usedBytes());
    }
    const databaseSize = directorySize(this.dbPath);
    return { databaseSize, usedDatabaseSize: Math.max(0, databaseSize - unused), lastUpdate, indexes };
  }

  // --- documents ------------------------------------------------------------------------------

  async addDocuments(
    uid: string,
    payload: DocumentPayload | Document[],
    options: { primaryKey?: string | null; method?: 'replace' | 'update'; allowIndexCreation?: boolean; skipCreation?: boolean } & WriteOptions = {},
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
        {
          kind: 'documents',
          updateFile,
          method: options.method ?? 'replace',
          primaryKey: options.primaryKey ?? null,
          count,
          allowIndexCreation,
          ...(options.skipCreation ? { skipCreation: true } : {}),
        },
        { receivedDocuments: count, indexedDocuments: null },
        options,
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

  async deleteDocument(uid: string, id: string, options: WriteOptions = {}): Promise<SummarizedTask> {
    return this.deleteDocuments(uid, [id], options);
  }

  async deleteDocuments(uid: string, ids: Array<string | number>, options: WriteOptions = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const normalized = ids.map((id) => {
      if (typeof id === 'number') return normalizeDocumentId(id);
      if (typeof id === 'string') return id;
      throw new SearchError('invalid_document_ids', `Invalid value type: expected a string or an integer, found \`${JSON.stringify(id)}\`.`);
    });
    return this.enqueue('documentDeletion', uid, { kind: 'deleteIds', ids: normalized }, { providedIds: normalized.length, deletedDocuments: null }, options);
  }

  async deleteDocumentsByFilter(uid: string, filter: unknown, options: WriteOptions = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    if (filter === undefined || filter === null) throw new SearchError('missing_document_filter', 'Missing field `filter`');
    // As the reference: a filter that selects nothing to filter on ("", [], [[""]]) would read as
    // "every document"; it is refused before anything is enqueued.
    if (parseFilter(filter, 'invalid_document_filter') === null) throw emptyDocumentFilter();
    if (this.indexes.exists(uid)) this.indexes.get(uid).filterDocids(filter, 'invalid_document_filter');
    return this.enqueue(
      'documentDeletion',
      uid,
      { kind: 'deleteFilter', filter },
      { providedIds: 0, originalFilter: JSON.stringify(filter), deletedDocuments: null },
      options,
    );
  }

  /**
   * `POST /documents/edit`: run an edition function (see edit-function/) on every document, or on
   * those matching `filter`, as a `documentEdition` task. The function and filter are checked now.
   */
  async editDocuments(
    uid: string,
    edition: { function: string; filter?: unknown; context?: Record<string, unknown> | null },
    options: WriteOptions = {},
  ): Promise<SummarizedTask> {
    this.features.require('editDocumentsByFunction', 'Using the documents edit route');
    validateIndexUid(uid);
    compileEditFunction(edition.function);
    const filter = edition.filter ?? null;
    if (filter !== null) {
      if (filter === '' || (Array.isArray(filter) && filter.length === 0)) throw new SearchError('invalid_document_filter', 'Sending an empty filter is forbidden.');
      if (this.indexes.exists(uid)) this.indexes.get(uid).filterDocids(filter, 'invalid_document_filter');
    }
    const context = edition.context ?? null;
    return this.enqueue(
      'documentEdition',
      uid,
      { kind: 'editDocuments', function: edition.function, filter, context },
      {
        editedDocuments: null,
        deletedDocuments: null,
        originalFilter: filter === null ? null : JSON.stringify(filter),
        context,
        function: edition.function,
      },
      options,
    );
  }

  async clearDocuments(uid: string, options: WriteOptions = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    return this.enqueue('documentDeletion', uid, { kind: 'clearDocuments' }, { deletedDocuments: null }, options);
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
  async updateSettings(uid: string, body: unknown, options: { allowIndexCreation?: boolean } & WriteOptions = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    checkSettingsFeatures(this.features, body);
    const patch = validateSettingsPatch(body) as Partial<Settings>;
    const allowIndexCreation = options.allowIndexCreation ?? true;
    return this.enqueue('settingsUpdate', uid, { kind: 'settings', patch, allowIndexCreation }, redactPatch(patch), options);
  }

  async resetSettings(uid: string, keys?: Array<keyof Settings>, options: { allowIndexCreation?: boolean } & WriteOptions = {}): Promise<SummarizedTask> {
    validateIndexUid(uid);
    const all = Object.keys(defaultSettings()) as Array<keyof Settings>;
    const patch = Object.fromEntries((keys ?? all).map((key) => [key, null])) as Partial<Settings>;
    const allowIndexCreation = options.allowIndexCreation ?? true;
    return this.enqueue('settingsUpdate', uid, { kind: 'settings', patch, allowIndexCreation }, { ...patch }, options);
  }

  // --- search -------------------------------------------------------------------------------

  /** `POST /indexes/:uid/search`: keyword, vector or hybrid search depending on the body. */
  async search(uid: string, body: unknown, options: ReadOptions = {}): Promise<HybridSearchResponse> {
    const index = this.indexes.get(uid);
    const response = await searchWithVectors(index, body, undefined, { rules: this.ruleResolver(), serialized: options.serialized === true });
    this.hydrate(response.hits, index, options);
    return response;
  }

  /** Foreign ids in hits -> the documents they name (the `foreignKeys` setting), from the indexes the caller may read. */
  private hydrate(hits: Document[], index: Index, options: ReadOptions): void {
    if (index.settings.foreignKeys.length === 0) return;
    hydrateHits(hits, index.settings, (uid) => (this.indexes.exists(uid) ? this.indexes.get(uid) : undefined), options.foreignIndexes);
  }

  /** `POST /indexes/:uid/facet-search`: values of one facet among the documents matching `q` and `filter`. */
  async facetSearch(uid: string, body: unknown): Promise<FacetSearchResult> {
    return facetSearchRequest(this.indexes.get(uid), body);
  }

  /** `POST /multi-search`: several searches at once, or one federated (merged) result list. */
  async multiSearch(body: unknown, options: ReadOptions = {}): Promise<MultiSearchResponse> {
    const rules = this.ruleResolver();
    const response = await multiSearch((uid) => this.indexes.get(uid), body, (index, query) => searchWithVectors(index, query, undefined, { rules }), rules);
    if ('results' in response) for (const result of response.results) this.hydrate(result.hits, this.indexes.get(result.indexUid), options);
    else {
      const byIndex = new Map<string, Document[]>();
      for (const hit of response.hits) {
        const uid = (hit._federation as { indexUid: string }).indexUid;
        byIndex.set(uid, [...(byIndex.get(uid) ?? []), hit]);
      }
      for (const [uid, hits] of byIndex) this.hydrate(hits, this.indexes.get(uid), options);
    }
    return response;
  }

  /** `POST /render-template`: an embedder's document template (or an inline one) rendered on a document. */
  renderTemplate(body: unknown): RenderTemplateResponse {
    return renderTemplate(body, { settings: (uid) => this.getSettings(uid), document: (uid, id) => this.getDocument(uid, id) });
  }

  /** `POST /indexes/:uid/similar`: documents near a given document's embedding. */
  async similar(uid: string, body: unknown, options: ReadOptions = {}): Promise<SimilarResponse> {
    const index = this.indexes.get(uid);
    const response = await similarDocuments(index, body);
    this.hydrate(response.hits, index, options);
    return response;
  }

  /** A search request's response body as UTF-8 JSON: computed in a search thread when there are some (`searchThreads`). */
  async answer(request: SearchRequest): Promise<Buffer> {
    if (this.searchThreads) return this.searchThreads.run({ ...request, queuedAt: request.queuedAt ?? sharedClock() });
    const chunks = await this.answerChunks(request);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }

  /**
   * `answer` computed here (never in a search thread), the body in pieces to copy one after the
   * other (see hit-bytes.ts, `responseChunks`): a search thread copies them straight into the
   * buffer of its batch of answers instead of joining them first.
   */
  async answerChunks(request: SearchRequest, cache = true): Promise<Buffer[]> {
    if (!this.tracksRequests) return this.answerHere(request, cache);
    // a warm-up in idle time (`warmCodeOnce`) waits while requests come
    this.answering++;
    this.lastRequestAt = performance.now();
    try {
      return await this.answerHere(request, cache);
    } finally {
      this.answering--;
      this.lastRequestAt = performance.now();
    }
  }

  /** A warm-up search, answered as a request is but never kept: nobody asked for it, and it would push out answers users did. */
  private async warmSearch(uid: string, body: unknown): Promise<void> {
    await this.answerChunks({ kind: 'search', uid, body }, false);
  }

  private async answerHere(request: SearchRequest, cache: boolean): Promise<Buffer[]> {
    const started = sharedClock();
    const cacheable = cache ? this.cacheable(request) : undefined;
    const kept = cacheable && this.results.get(cacheable.key, cacheable.commit);
    if (kept) return [...kept.hits, afterHits({ ...kept.rest, processingTimeMs: Math.round(sharedClock() - started) })];
    const response = await this.read(request);
    if (request.queuedAt !== undefined) addQueueWait(response, started - request.queuedAt);
    const chunks = responseChunks(response);
    if (cacheable) this.keepAnswer(cacheable, response as { hits: unknown; processingTimeMs: number }, chunks);
    return chunks;
  }

  /** Recent answers (search/result-cache.ts). */
  private readonly results = new ResultCache();

  /** What the answer cache holds, and how many answers it gave (this engine's: each search thread has its own). */
  resultCacheStats(): { entries: number; bytes: number; hits: number } {
    return { entries: this.results.size, bytes: this.results.heldBytes, hits: this.results.hits };
  }

  /** Where the answer to `request` may be kept and found again: its key and the index's commit. */
  private cacheable(request: SearchRequest): { key: string; commit: number; index: Index } | undefined {
    if (!this.cachesResults) return undefined;
    let key = requestKey(request);
    if (key === undefined || request.kind !== 'search' || !this.indexes.exists(request.uid)) return undefined;
    const index = this.indexes.get(request.uid);
    if (index.settings.foreignKeys.length > 0 || this.searchRulesApply()) return undefined;
    // the one experimental feature a search reads: it decides whether a filter is refused
    if ((request.body as { filter?: unknown }).filter !== undefined && this.features.enabled('containsFilter')) key += '\u0000contains';
    return { key, commit: index.store.commit, index };
  }

  private readonly cachesResults = resultCacheEnabled();

  /** Keep a computed answer, unless it took long enough to have been cut short by the index's `searchCutoffMs`. */
  private keepAnswer(at: { key: string; commit: number; index: Index }, response: { hits: unknown; processingTimeMs: number }, chunks: Buffer[]): void {
    if (chunks.length < 2 || response.processingTimeMs * 2 >= (at.index.settings.searchCutoffMs ?? DEFAULT_SEARCH_CUTOFF_MS)) return;
    const { hits: _, ...rest } = response;
    const hits = chunks.slice(0, -1);
    let bytes = 0;
    for (const chunk of chunks) bytes += chunk.byteLength;
    this.results.set(at.key, { commit: at.commit, hits, rest, bytes });
  }

  private async read(request: SearchRequest): Promise<unknown> {
    switch (request.kind) {
      case 'search': {
        const response = await this.search(request.uid, request.body, { foreignIndexes: request.foreignIndexes, serialized: true });
        return request.includeMetadata ? { ...response, metadata: this.queryMetadata(request.uid) } : response;
      }
      case 'facetSearch':
        return this.facetSearch(request.uid, request.body);
      case 'similar':
        return this.similar(request.uid, request.body, request);
      case 'multiSearch': {
        const response = await this.multiSearch(request.body, request);
        return request.includeMetadata ? this.withMultiSearchMetadata(response, request.body) : response;
      }
    }
  }

  /** A query's `metadata` (the `Meili-Include-Metadata` header); `query` is given in federated answers only. */
  private queryMetadata(uid: string, query?: string): SearchMetadata {
    return searchMetadata(uid, this.indexes.get(uid).store.primaryKey, query);
  }

  /** Each result's metadata, or in a federated answer one entry per query (the body was valid: it was answered). */
  private withMultiSearchMetadata(response: MultiSearchResponse, body: unknown): unknown {
    if ('results' in response) return { results: response.results.map((result) => ({ ...result, metadata: this.queryMetadata(result.indexUid) })) };
    const queries = (body as { queries: Array<{ indexUid: string; q?: unknown }> }).queries;
    return { ...response, metadata: queries.map((q) => this.queryMetadata(q.indexUid, typeof q.q === 'string' ? q.q : undefined)) };
  }

  // --- dynamic search rules -------------------------------------------------------------------

  private requireSearchRules(): void {
    this.features.require('dynamicSearchRules', 'Using the `/dynamic-search-rules` routes');
  }

  /** `POST /dynamic-search-rules`: the rules, most recently updated first. */
  listSearchRules(body: unknown) {
    this.requireSearchRules();
    return listRules(this.searchRules.all(), parseRuleListQuery(body), (text) => ruleWords(text));
  }

  getSearchRule(uid: string): DynamicSearchRule {
    this.requireSearchRules();
    const rule = this.searchRules.get(uid);
    if (!rule) throw ruleNotFound(uid);
    return rule;
  }

  /** `PATCH /dynamic-search-rules/:uid`: create or update, as a `dsrUpdate` task. */
  async updateSearchRule(uid: string, body: unknown, options: WriteOptions = {}): Promise<SummarizedTask> {
    this.requireSearchRules();
    validateRuleUid(uid);
    const update = parseRuleUpdate(body);
    return this.enqueue('dsrUpdate', null, { kind: 'dsrUpdate', ruleUid: uid, update }, null, options);
  }

  async deleteSearchRule(uid: string, options: WriteOptions = {}): Promise<SummarizedTask> {
    this.requireSearchRules();
    return this.enqueue('dsrUpdate', null, { kind: 'dsrUpdate', ruleUid: uid, update: null }, null, options);
  }

  async clearSearchRules(options: WriteOptions = {}): Promise<SummarizedTask> {
    this.requireSearchRules();
    return this.enqueue('dsrClear', null, { kind: 'dsrClear' }, null, options);
  }

  /**
   * Whether dynamic search rules may change searches: some are stored and the feature is on (the
   * rules apply only then, as in the reference). Emptiness is asked first: it is one cursor step,
   * where the flags are two records decoded and merged (4% of a `star wars` search's CPU when
   * asked first).
   */
  private searchRulesApply(): boolean {
    return !this.searchRules.isEmpty() && this.features.enabled('dynamicSearchRules');
  }

  private ruleResolver(): RuleResolver | undefined {
    if (!this.searchRulesApply()) return undefined;
    const rules = this.searchRules.all();
    const now = Date.now();
    return (index, q, filter) => {
      const words = (text: string) => ruleWords(text, index.settings);
      let branches: FilterBranches = null;
      try {
        branches = filterBranches(parseFilter(filter));
      } catch {
        // a malformed filter fails the search itself with its own error
      }
      return activeEffects(rules, { indexUid: index.uid, queryWords: words(q), filter: branches, now }, words);
    };
  }

  private registerSearchRuleProcessors(scheduler: Scheduler): void {
    scheduler.registerOperation('dsrUpdate', async (_task, ctx) => {
      const payload = ctx.tasks[0]!.payload;
      if (payload.kind !== 'dsrUpdate') throw new SearchError('invalid_state', 'A dsrUpdate task without its payload.');
      // a task imported from a dump of another version may name no valid rule: it fails alone
      validateRuleUid(payload.ruleUid);
      this.tasks.write(() => {
        if (payload.update === null) {
          if (!this.searchRules.removeSync(payload.ruleUid)) throw ruleNotFound(payload.ruleUid);
          return;
        }
        const current = this.searchRules.get(payload.ruleUid);
        this.searchRules.putSync(applyRuleUpdate(payload.ruleUid, current, payload.update as RuleUpdate, preciseNow()));
      });
      return null;
    });
    scheduler.registerOperation('dsrClear', async () => {
      this.tasks.write(() => this.searchRules.clearSync());
      return null;
    });
  }

  // --- export -------------------------------------------------------------------------------

  /** `POST /export`: push indexes to another instance, as an `export` task (see export/). */
  async exportTo(request: ExportRequest, options: WriteOptions = {}): Promise<SummarizedTask> {
    checkExportRequest(request);
    return this.enqueue('export', null, { kind: 'operation', options: { ...request } }, exportDetails(request), options);
  }

  // --- experimental features ----------------------------------------------------------------

  getExperimentalFeatures(): ExperimentalFeatures {
    return this.features.get();
  }

  /** Synchronous, as in the reference: the flags change at once, no task is registered. */
  updateExperimentalFeatures(patch: Partial<ExperimentalFeatures>): ExperimentalFeatures {
    return this.features.update(patch);
  }

  // --- tasks and batches ----------------------------------------------------------------------

  getTask(uid: number): Task {
    const record = this.tasks.get(uid);
    if (!record) throw new SearchError('task_not_found', `Task \`${uid}\` not found.`);
    return publicTask(record);
  }

  /** `GET /tasks`: a page of the matching tasks, newest first; `scope` keeps those a restricted key may see. */
  getTasks(query: TaskListQuery = {}, scope?: TaskScope): CursorPage<Task> {
    const limit = query.limit ?? 20;
    const { uids, next, total } = this.taskPage(query, scope);
    return {
      results: uids.map((uid) => publicTask(this.tasks.get(uid)!)),
      total,
      limit,
      from: uids[0] ?? null,
      next,
    };
  }

  /**
   * `GET /tasks/:uid/documents`: the documents a document task received, while its payload is
   * still kept (the task is enqueued or processing); the payload is dropped once processed.
   */
  taskDocuments(uid: number): AsyncGenerator<Document> {
    this.features.require('getTaskDocumentsRoute', TASK_DOCUMENTS_ACTION);
    const record = this.tasks.get(uid);
    if (!record) throw new SearchError('task_not_found', `Task \`${uid}\` not found.`);
    const path = record.payload.kind === 'documents' ? join(this.paths.updateFiles, record.payload.updateFile) : null;
    // a finished task's file is removed after its batch commits: between the two it must not be read
    const pending = record.status === 'enqueued' || record.status === 'processing';
    if (!path || !pending || !existsSync(path)) {
      throw new SearchError(
        'task_file_not_found',
        `Task \`${uid}\` does not contain any documents. Only \`documentAdditionOrUpdate\` tasks with the statuses \`enqueued\` or \`processing\` contain documents`,
      );
    }
    return readUpdateFile(path);
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

  /** `GET /batches`: a page of the matching batches, newest first; `scope` keeps those a restricted key may see. */
  getBatches(query: TaskListQuery = {}, scope?: TaskScope): CursorPage<Batch> {
    const limit = query.limit ?? 20;
    const { uids, next, total } = this.batchPage(query, scope);
    return {
      results: uids.map((uid) => this.tasks.getBatch(uid)!),
      total,
      limit,
      from: uids[0] ?? null,
      next,
    };
  }

  /** Unfiltered and unscoped listings read the record keys; the others go through the indexes. */
  private taskPage(query: TaskListQuery, scope?: TaskScope): KeyPage {
    if (!scope && !hasTaskFilter(query)) return this.tasks.pageAllTasks(query);
    let matched = this.tasks.match(query);
    if (scope) matched = RoaringBitmap32.and(matched, this.tasks.visibleTasks(scope));
    return { ...cursorPage(matched, query), total: matched.size };
  }

  private batchPage(query: TaskListQuery, scope?: TaskScope): KeyPage {
    if (!scope && !hasTaskFilter(query)) return this.tasks.pageAllBatches(query);
    let matched = this.tasks.matchBatches(query);
    if (scope) matched = RoaringBitmap32.and(matched, this.tasks.visibleBatches(scope));
    return { ...cursorPage(matched, query), total: matched.size };
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

function hasTaskFilter(query: TaskListQuery): boolean {
  return Object.entries(query).some(([key, value]) => value !== undefined && key !== 'limit' && key !== 'from' && key !== 'reverse');
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
