/**
 * The scheduler: one loop that takes the next batch (see autobatcher.ts), hands it to the
 * processor of its kind, and records the outcome.
 *
 * Crash safety: a batch's index changes commit in the index environment, then its task states
 * commit in the task environment. A crash between the two leaves the tasks `processing`; at the
 * next start they go back to `enqueued` and the processors recognise work already applied (see
 * `lastTaskUid` in the index store), so every acknowledged task completes exactly once.
 */
import { PreciseDate } from '../wire/timestamp.js';
import { BatchTrace, processingProgress } from './progress-trace.js';
import { EventEmitter } from 'node:events';
import { statSync } from 'node:fs';
import { SearchError, toSearchError } from '../errors.js';
import { asSpaceError, ensureSpaceFor, INDEX_BYTES_PER_PAYLOAD_BYTE } from '../store/disk-space.js';
import { expectSmallWrites, expectWrites, writableMap } from '../index/writable-map.js';
import type { IndexRegistry } from '../index/registry.js';
import type { Batch, Task, TaskStatus, TaskType } from '../types.js';
import { planNextBatch, type BatchKind, type PlannedBatch } from './autobatcher.js';
import { guardBatch, type CrashCounts } from './crash-guard.js';
import { BatchAborted, type BatchContext, type OperationProcessor, type Processor, type TaskOutcome } from './processing.js';
import { processDocuments, failedDetails } from './processors/documents.js';
import { processIndexLifecycle } from './processors/index-lifecycle.js';
import { processSettings } from './processors/settings.js';
import { processCancelations, processTaskDeletions, removeUpdateFile } from './processors/task-admin.js';
import type { TaskRecord, TaskStore } from './store.js';
import { publicTask } from './view.js';
import type { WriteSide } from './write-side.js';
import type { WebhookOutbox } from '../webhooks/outbox.js';
import type { ClosedSpan } from '../logs/event.js';
import { newSpanId } from '../logs/logger.js';

/** How long the queue waits before it tries again after its own store refused a write. */
const RETRY_AFTER_STORE_FAILURE_MS = 5000;

export interface SchedulerOptions {
  taskStore: TaskStore;
  /** Where each finished batch's notification is kept for the webhooks, with its results. */
  outbox?: WebhookOutbox;
  registry: IndexRegistry;
  updateFilePath: (name: string) => string;
  /** The database directory, whose free space is checked before a batch adds data (store/disk-space.ts). */
  dataPath?: string;
  maxBatchPayloadBytes: number;
  /** Log lines, with structured fields and the span they close for the logs routes (logs/event.ts). */
  log: (level: 'info' | 'warn' | 'error' | 'debug', message: string, fields?: Record<string, unknown>, span?: ClosedSpan) => void;
}

export interface BatchFinished {
  batch: Batch;
  tasks: Task[];
}

/** Emitted when a batch starts: which tasks and indexes it holds (for `isIndexing` and cancelation). */
export interface BatchStarted {
  batchUid: number;
  taskUids: number[];
  indexUids: string[];
}

/** An idle scheduler looks at the queue on its own only this rarely: wake-ups announce every task. */
const IDLE_RECHECK_MS = 60_000;

export function isoDuration(ms: number): string {
  return `PT${(ms / 1000).toFixed(6).replace(/\.?0+$/, '') || '0'}S`;
}

export class Scheduler extends EventEmitter implements WriteSide {
  private running = false;
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  private wokenWhileBusy = false;
  private loopDone: Promise<void> | null = null;
  private current: { batch: PlannedBatch; controller: AbortController; uid: number } | null = null;
  private readonly operations = new Map<TaskType, OperationProcessor>();
  private readonly processors: Record<BatchKind, Processor>;

  constructor(private readonly options: SchedulerOptions) {
    super();
    this.processors = {
      documents: processDocuments,
      settings: processSettings,
      indexLifecycle: processIndexLifecycle,
      cancelation: processCancelations,
      deletion: processTaskDeletions,
      operation: (ctx) => this.processOperation(ctx),
      upgrade: (ctx) => this.processOperation(ctx),
    };
  }

  private gate: ((planned: PlannedBatch) => PlannedBatch | null) | null = null;
  private crashes: CrashCounts = new Map();

  /** Tasks that were being processed when earlier write sides died (see crash-guard.ts). */
  setCrashCounts(crashes: CrashCounts): void {
    this.crashes = crashes;
  }

  /** The ops module holds back or reorders work while a database upgrade is pending (see ops/service.ts). */
  setGate(gate: (planned: PlannedBatch) => PlannedBatch | null): void {
    this.gate = gate;
  }

  /** Dumps, snapshots and upgrades are provided by the ops module. */
  registerOperation(type: TaskType, processor: OperationProcessor): void {
    this.operations.set(type, processor);
  }

  /** Put back tasks a crash left `processing`, and drop the batches they were in. */
  recover(): void {
    const store = this.options.taskStore;
    const processing = store.uidsWithStatus('processing');
    if (processing.isEmpty) return;
    store.write(() => {
      for (const uid of processing) {
        const task = store.get(uid);
        if (!task) continue;
        if (task.batchUid !== null) store.deleteBatch(task.batchUid);
        store.update({ ...task, status: 'enqueued', batchUid: null, startedAt: null });
      }
    });
    this.options.log('warn', `recovered ${processing.size} task(s) interrupted by a previous stop`);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.loopDone = this.loop();
  }

  /** Stop after the current batch; `abort` also interrupts it (its tasks stay enqueued). */
  async stop(abort = false): Promise<void> {
    this.stopping = true;
    if (abort) this.current?.controller.abort();
    this.wake();
    await this.loopDone;
    this.running = false;
  }

  close(abort = false): Promise<void> {
    return this.stop(abort);
  }

  wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    if (wake) wake();
    else this.wokenWhileBusy = true;
  }

  /**
   * Wait for a wake-up: an idle server does no work at all. A wake-up that came while a batch was
   * planned or processed is kept, so the task it announced is not left waiting.
   */
  private idle(): Promise<void> {
    if (this.wokenWhileBusy) {
      this.wokenWhileBusy = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(wake, IDLE_RECHECK_MS);
      timer.unref();
      this.wakeUp = wake;
    });
  }

  get isProcessing(): boolean {
    return this.current !== null;
  }

  processingIndexUids(): Set<string> {
    const uids = new Set<string>();
    for (const task of this.current?.batch.tasks ?? []) if (task.indexUid) uids.add(task.indexUid);
    return uids;
  }

  /** Called when a cancelation is registered: interrupt the running batch if it is concerned. */
  abortIfProcessing(uids: Iterable<number>): void {
    if (!this.current) return;
    const inBatch = new Set(this.current.batch.tasks.map((t) => t.uid));
    for (const uid of uids) {
      if (inBatch.has(uid)) {
        this.current.controller.abort();
        return;
      }
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let planned: PlannedBatch | null;
      try {
        planned = this.plan();
      } catch (error) {
        this.options.log('error', `could not plan the next batch: ${(error as Error).message}`);
        planned = null;
      }
      if (!planned) {
        await this.idle();
        continue;
      }
      try {
        await this.runBatch(planned);
      } catch (error) {
        // The task queue itself could not be written (a disk full to the last byte) before the
        // batch started: its tasks are still enqueued; try again later rather than spin or stop.
        this.current = null;
        this.options.log('error', `could not record a batch: ${(error as Error).message}; retrying in ${RETRY_AFTER_STORE_FAILURE_MS / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_STORE_FAILURE_MS).unref());
      }
      // Let HTTP requests through between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** The next batch the queue holds (as the gate lets it through), or null. */
  private plan(): PlannedBatch | null {
    // the tasks a wake-up announces were committed by the serving thread
    this.options.taskStore.renewReads();
    const planned = planNextBatch(this.options.taskStore, this.options.maxBatchPayloadBytes, (task) => payloadSize(task, this.options.updateFilePath));
    const gated = planned && this.gate ? this.gate(planned) : planned;
    return gated && guardBatch(gated, this.crashes);
  }

  /** Whether a batch is waiting now (for a stopped scheduler: would a start process one?). */
  hasWork(): boolean {
    try {
      return this.plan() !== null;
    } catch {
      // a queue that cannot be read: let whoever asks start a scheduler that will say why
      return true;
    }
  }

  private async runBatch(planned: PlannedBatch): Promise<void> {
    const store = this.options.taskStore;
    const startedAt = new PreciseDate();
    const controller = new AbortController();
    const trace = new BatchTrace();
    let batchUid = -1;
    const processing: TaskRecord[] = [];
    store.write(() => {
      batchUid = store.newBatchUid();
      for (const task of planned.tasks) {
        const record = { ...task, status: 'processing' as TaskStatus, batchUid, startedAt: startedAt.toISOString() };
        store.update(record);
        processing.push(record);
      }
      store.putBatch(this.batchObject(batchUid, processing, startedAt, null, planned.reason));
    });
    this.current = { batch: { ...planned, tasks: processing }, controller, uid: batchUid };
    this.options.log('debug', `batch ${batchUid} started`, { batchUid, kind: planned.kind, taskUids: processing.map((t) => t.uid), reason: planned.reason });
    this.emit('batchStarted', {
      batchUid,
      taskUids: processing.map((t) => t.uid),
      indexUids: [...this.processingIndexUids()],
    } satisfies BatchStarted);
    const ctx: BatchContext = {
      batchUid,
      tasks: processing,
      registry: this.options.registry,
      taskStore: store,
      updateFilePath: this.options.updateFilePath,
      signal: controller.signal,
      startedAt,
      progress: (step) => {
        trace.step(step);
        this.options.log('debug', `batch ${batchUid}: ${step}`);
      },
    };

    let outcomes: TaskOutcome[];
    try {
      if (planned.failWith) throw planned.failWith;
      this.checkSpace(planned);
      if (writableMap()) expectWrites(this.expectedWrites(planned));
      outcomes = await this.processors[planned.kind](ctx);
    } catch (caught) {
      const error = this.options.dataPath ? asSpaceError(caught, this.options.dataPath) : caught;
      if (error instanceof BatchAborted || controller.signal.aborted) {
        this.requeue(batchUid, processing);
        this.current = null;
        this.emit('batchAborted', { batchUid });
        return;
      }
      const searchError = toSearchError(error);
      this.options.log('error', `batch ${batchUid} failed: ${searchError.message}`);
      outcomes = processing.map((task) => ({ uid: task.uid, status: 'failed', details: failedDetails(task), error: searchError }));
    } finally {
      expectSmallWrites();
    }
    trace.processingDone();
    await this.recordOutcomes(() => this.finish(batchUid, processing, outcomes, startedAt, planned.reason, trace));
    this.current = null;
  }

  /**
   * The outcomes of a processed batch, written to the task queue; while the queue's store refuses
   * the write (a disk full to the last byte) it is tried again, so that the tasks do not stay
   * `processing` until the next start. Stopping gives up: the next start requeues them, and the
   * index's recorded outcomes keep them from being applied twice.
   */
  private async recordOutcomes(write: () => void): Promise<void> {
    for (;;) {
      try {
        write();
        return;
      } catch (error) {
        if (this.stopping) throw error;
        this.options.log('error', `could not record the outcome of a batch: ${(error as Error).message}; retrying in ${RETRY_AFTER_STORE_FAILURE_MS / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_STORE_FAILURE_MS).unref());
      }
    }
  }

  /** A batch that adds data is refused before it writes when it would eat into the disk reserve. */
  private checkSpace(planned: PlannedBatch): void {
    const dataPath = this.options.dataPath;
    if (!dataPath || (planned.kind !== 'documents' && planned.kind !== 'settings')) return;
    const payload = this.batchPayload(planned);
    if (planned.kind === 'documents' && payload === 0) return; // deletions only: they free space
    ensureSpaceFor(dataPath, payload * INDEX_BYTES_PER_PAYLOAD_BYTE, 'this batch');
  }

  /** Bytes of document payload the batch's tasks carry. */
  private batchPayload(planned: PlannedBatch): number {
    let payload = 0;
    for (const task of planned.tasks) {
      if (task.payload.kind === 'documents') payload += payloadSize(task, this.options.updateFilePath);
    }
    return payload;
  }

  /**
   * Bytes a batch may write past an index's data (the space reserved ahead with the writable
   * map, index/writable-map.ts): its payload's estimate; what may rewrite a whole index (a
   * settings change, an edition by function) that index's size. An upgrade's steps get the
   * allowance of small transactions: opening the indexes to size them is the upgrade's own work,
   * and its journal rolls back a step that dies.
   */
  private expectedWrites(planned: PlannedBatch): number {
    const registry = this.options.registry;
    const size = (uid: string | null | undefined) => (uid && registry.exists(uid) ? registry.get(uid).store.usedBytes() : 0);
    const uid = planned.tasks[0]?.indexUid;
    switch (planned.kind) {
      case 'documents':
        return this.batchPayload(planned) * INDEX_BYTES_PER_PAYLOAD_BYTE + (planned.tasks.some((task) => task.type === 'documentEdition') ? size(uid) : 0);
      case 'settings':
        return size(uid);
      default:
        return 0;
    }
  }

  /** An aborted batch changed nothing: its tasks go back to the queue, where a cancelation finds them. */
  private requeue(batchUid: number, tasks: TaskRecord[]): void {
    const store = this.options.taskStore;
    store.write(() => {
      store.deleteBatch(batchUid);
      for (const task of tasks) {
        const latest = store.get(task.uid);
        if (latest && latest.status === 'processing') store.update({ ...latest, status: 'enqueued', batchUid: null, startedAt: null });
      }
    });
  }

  private finish(batchUid: number, tasks: TaskRecord[], outcomes: TaskOutcome[], startedAt: Date, reason: string, trace: BatchTrace): void {
    const store = this.options.taskStore;
    const writeStarted = performance.now();
    const finishedAt = new PreciseDate();
    const duration = isoDuration(finishedAt.getTime() - startedAt.getTime());
    const byUid = new Map(outcomes.map((o) => [o.uid, o]));
    const finished: TaskRecord[] = [];
    store.write(() => {
      for (const task of tasks) {
        const latest = store.get(task.uid);
        if (!latest || latest.status !== 'processing') continue;
        const outcome = byUid.get(task.uid) ?? {
          uid: task.uid,
          status: 'failed' as const,
          details: failedDetails(task),
          error: new SearchError('internal', 'The task was not processed by its batch.'),
        };
        const record: TaskRecord = {
          ...latest,
          status: outcome.status,
          details: outcome.details,
          error: outcome.error ? outcome.error.toJSON() : null,
          duration,
          finishedAt: finishedAt.toISOString(),
        };
        store.update(record);
        finished.push(record);
      }
      store.putBatch(this.batchObject(batchUid, finished, startedAt, finishedAt, reason, trace.view(performance.now() - writeStarted)));
      this.options.outbox?.record(batchUid, finished.map(publicTask), finishedAt.getTime());
    });
    for (const task of finished) removeUpdateFile({ updateFilePath: this.options.updateFilePath }, task);
    this.logFinished(batchUid, finished, startedAt, finishedAt);
    const batch = store.getBatch(batchUid)!;
    this.emit('batchFinished', { batch, tasks: finished.map(publicTask) } satisfies BatchFinished);
  }

  /** One line per task, then the batch's commit as a span (what a profile shows). */
  private logFinished(batchUid: number, finished: TaskRecord[], startedAt: Date, finishedAt: Date): void {
    const durationMs = finishedAt.getTime() - startedAt.getTime();
    for (const task of finished)
      this.options.log('info', `task ${task.uid} ${task.status}`, {
        taskUid: task.uid,
        type: task.type,
        status: task.status,
        indexUid: task.indexUid ?? null,
        batchUid,
        durationMs,
        ...(task.error ? { error: task.error.message } : {}),
      });
    this.options.log(
      'info',
      'batch committed',
      { batchUid, tasks: finished.length },
      { name: 'batch', id: newSpanId(), start: startedAt.getTime(), durationMs },
    );
  }

  private batchObject(
    uid: number,
    tasks: TaskRecord[],
    startedAt: Date,
    finishedAt: Date | null,
    reason: string,
    progressTrace?: Record<string, string>,
  ): Batch {
    const status: Partial<Record<TaskStatus, number>> = {};
    const types: Partial<Record<TaskType, number>> = {};
    const indexUids: Record<string, number> = {};
    const details: Record<string, unknown> = {};
    for (const task of tasks) {
      status[task.status] = (status[task.status] ?? 0) + 1;
      types[task.type] = (types[task.type] ?? 0) + 1;
      if (task.indexUid) indexUids[task.indexUid] = (indexUids[task.indexUid] ?? 0) + 1;
      for (const [key, value] of Object.entries(task.details ?? {})) {
        if (typeof value === 'number') details[key] = ((details[key] as number | undefined) ?? 0) + value;
        else if (!(key in details)) details[key] = value;
      }
    }
    return {
      uid,
      progress: finishedAt ? null : processingProgress(),
      details,
      stats: { totalNbTasks: tasks.length, status, types, indexUids, ...(progressTrace ? { progressTrace } : {}) },
      duration: finishedAt ? isoDuration(finishedAt.getTime() - startedAt.getTime()) : null,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt ? finishedAt.toISOString() : null,
      batchStrategy: reason,
    };
  }

  private async processOperation(ctx: BatchContext): Promise<TaskOutcome[]> {
    const task = ctx.tasks[0]!;
    const processor = this.operations.get(task.type);
    if (!processor) {
      return [{ uid: task.uid, status: 'failed', details: task.details, error: new SearchError('invalid_state', `No processor is registered for \`${task.type}\` tasks.`) }];
    }
    try {
      const details = await processor(publicTask(task), ctx);
      return [{ uid: task.uid, status: 'succeeded', details: details ?? task.details }];
    } catch (error) {
      if (error instanceof BatchAborted) throw error;
      return [{ uid: task.uid, status: 'failed', details: task.details, error: toSearchError(error) }];
    }
  }
}

/** Bytes of a document task's update file; 1 for tasks without a payload. */
function payloadSize(task: TaskRecord, updateFilePath: (name: string) => string): number {
  if (task.payload.kind !== 'documents') return 1;
  try {
    return Math.max(1, statSync(updateFilePath(task.payload.updateFile)).size);
  } catch {
    // A missing update file fails the task when processed; count it by its documents.
    return Math.max(1, task.payload.count) * 1024;
  }
}
