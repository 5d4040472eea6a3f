/**
 * The write thread, seen from the thread that serves reads.
 *
 * Every batch (payload parsing, extraction, the LMDB write transaction, embedding, vector graph
 * merges, dumps, snapshots, upgrade steps) runs in one worker thread with its own engine over
 * the same database directory (write-thread.worker.ts), or in a child process that runs the same
 * script (under a memory limit: see write-host.ts). LMDB gives the serving thread a
 * consistent snapshot of the last commit while the worker writes, so a search never waits for a
 * batch; the serving thread's caches notice new commits by the commit count of each index
 * environment (see IndexStore.sync).
 *
 * This class mirrors the worker's scheduler: it forwards `start`, `wake`, `stop` and
 * cancelations, and re-emits the batch events. The task queue itself lives in LMDB, so nothing
 * acknowledged depends on a message: if the worker dies, a new one recovers the tasks that were
 * `processing` (they go back to `enqueued`) and carries on.
 *
 * Under a memory limit (see thread-heaps.ts) the worker also ends once the queue has been idle
 * for IDLE_END_MS, and the next task starts another (some 100-300 ms: it opens its engine). A
 * build leaves the worker's V8 heap and its native buffers (the extraction's tables, LMDB's dirty
 * pages) at their peak; garbage collection frees them but neither V8 nor glibc hands that memory
 * back to the system while the thread lives, and inside a container every megabyte kept is one
 * fewer for the index's pages that searches read (bench/README.md, "Memory in a container").
 * Ending the thread returns its heap whole.
 */
import { EventEmitter } from 'node:events';
import { addEmbedderCalls, type EmbedderCallCounts } from '../embedders/call-counts.js';
import { SearchError } from '../errors.js';
import { onOutboundPolicyChange, outboundPolicy } from '../net/address-policy.js';
import { workerScriptUrl } from '../worker-script.js';
import { workerHeapLimits } from '../thread-heaps.js';
import { startWriteHost, writeHostKind, type WriteHost, type WriteHostKind } from './write-host.js';
import type { BatchFinished, BatchStarted } from './scheduler.js';
import type { WriteSide } from './write-side.js';
import type { LogEvent } from '../logs/event.js';
import { onFiltersChange } from '../logs/logger.js';

export type WriteLogLevel = 'error' | 'warn' | 'info' | 'debug';

/** What the worker needs to open its engine (structured-cloneable). */
export interface WriteThreadData {
  dbPath: string;
  maxIndexingMemory?: number;
  logLevel: string;
  /** The serving thread's log filters: the worker forwards the events one of them accepts (logs/logger.ts). */
  logFilters: string[];
  /** The serving thread's outbound address policy (`AddressPolicy.spec`), for embedders and webhooks. */
  outboundPolicy?: string;
  /** Started again in the same process (see EngineOptions.resumeWriter): no start-up clean-up. */
  resumed?: boolean;
}

/** The operations options that reach the worker (those of `OpsOptions` that are plain data). */
export interface PortableOpsOptions {
  dumpDir?: string;
  snapshotDir?: string;
  upgradeFailAfterIndexes?: number;
  upgradeDelayPerIndexMs?: number;
}

export type ToWriteThread =
  | { type: 'start' }
  | { type: 'wake' }
  | { type: 'abort'; uids: number[] }
  | { type: 'stop'; abort: boolean }
  /** `idle`: the write side ends because the queue is idle; the reply says whether tasks are waiting. */
  | { type: 'close'; abort: boolean; idle?: boolean }
  | { type: 'operations'; options: PortableOpsOptions }
  | { type: 'outboundPolicy'; spec: string }
  | { type: 'logFilters'; specs: string[] }
  /** Task uid -> write sides that died processing it (see crash-guard.ts). */
  | { type: 'crashes'; counts: Array<[number, number]> };

export type FromWriteThread =
  | { type: 'ready' }
  | { type: 'initFailed'; code: string; message: string }
  | { type: 'log'; level: WriteLogLevel; message: string }
  /** An event of the worker's structured logger, for the serving thread's sinks. */
  | { type: 'logEvent'; event: LogEvent }
  | { type: 'operationsSet' }
  | { type: 'batchStarted'; event: BatchStarted }
  | { type: 'batchFinished'; event: BatchFinished }
  | { type: 'batchAborted'; event: { batchUid: number } }
  /** Embedder calls made since the last report, for /metrics (see embedders/call-counts.ts). */
  | { type: 'embedderCalls'; counts: EmbedderCallCounts }
  | { type: 'stopped' }
  | { type: 'closed'; pending?: boolean };

export interface WriteThreadOptions extends Omit<WriteThreadData, 'outboundPolicy' | 'logFilters'> {
  log: (level: WriteLogLevel, message: string) => void;
  /** The filters the worker forwards by, read at each (re)start and, with `followLogFilters`, at each change. */
  logFilters: () => string[];
  followLogFilters: boolean;
  logEvent: (event: LogEvent) => void;
  /** Runs before the `batchFinished` listeners: the reader drops what the batch made stale. */
  beforeBatchFinished?: (event: BatchFinished) => void;
  /**
   * End the worker after this many milliseconds with no batch and no task registered, and start
   * one again on the next task; null: keep it. Default: IDLE_END_MS under a memory limit below
   * AMPLE_MEMORY (when the threads' heaps are bounded, see thread-heaps.ts), else null.
   */
  idleEndMs?: number | null;
  /** Runs when an idle worker has ended (the serving thread may collect its own garbage then). */
  afterIdleEnd?: () => void;
  /** A worker thread or a child process (see write-host.ts); default: writeHostKind(). */
  host?: WriteHostKind;
  /** The directory lock's descriptor, which a child process keeps open while it lives (see write-host.ts). */
  lockFd?: number;
}

const SCRIPT = workerScriptUrl(import.meta.url, './write-thread.worker.js');

/** How long the queue stays idle, under a memory limit, before the worker ends. */
export const IDLE_END_MS = 1000;

/** Restart delays after the worker died, doubling up to the last. */
const RESTART_DELAYS_MS = [100, 200, 400, 800, 1600, 3200, 6400, 12_800, 25_600];

export class WriteThread extends EventEmitter implements WriteSide {
  private worker: WriteHost | null = null;
  private readonly hostKind: WriteHostKind;
  private current: BatchStarted | null = null;
  private started = false;
  private stopping: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private operations: PortableOpsOptions | null = null;
  private operationsAcks: Array<() => void> = [];
  private restarts = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private readonly unfollowPolicy: () => void;
  private readonly unfollowLogFilters: () => void;
  private readonly idleEndMs: number | null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** The worker was asked to end because the queue was idle; `revive`: something happened since that needs a worker. */
  private retiring: { revive: boolean } | null = null;
  /** A worker was started before (a later one skips the start-up clean-up). */
  private booted = false;
  /** The current worker has opened its engine (it may be asked to end when idle). */
  private ready = false;

  private constructor(private readonly options: WriteThreadOptions) {
    super();
    this.idleEndMs = options.idleEndMs !== undefined ? options.idleEndMs : workerHeapLimits('write') ? IDLE_END_MS : null;
    this.hostKind = options.host ?? writeHostKind();
    this.unfollowPolicy = onOutboundPolicyChange((policy) => this.post({ type: 'outboundPolicy', spec: policy.spec }));
    this.unfollowLogFilters = options.followLogFilters ? onFiltersChange(() => this.post({ type: 'logFilters', specs: options.logFilters() })) : () => {};
  }

  /** Start the worker and wait until its engine is open (it recovers interrupted tasks first). */
  static async spawn(options: WriteThreadOptions): Promise<WriteThread> {
    const thread = new WriteThread(options);
    await thread.boot();
    return thread;
  }

  private boot(): Promise<void> {
    const data: WriteThreadData = {
      dbPath: this.options.dbPath,
      maxIndexingMemory: this.options.maxIndexingMemory,
      logLevel: this.options.logLevel,
      outboundPolicy: outboundPolicy().spec,
      logFilters: this.options.logFilters(),
      resumed: this.booted,
    };
    this.booted = true;
    const worker = startWriteHost(this.hostKind, { script: SCRIPT, data, inheritFd: this.options.lockFd });
    this.worker = worker;
    this.ready = false;
    return new Promise<void>((resolve, reject) => {
      let booted = false;
      worker.onMessage((message) => {
        if (message.type === 'ready') {
          booted = true;
          this.ready = true;
          this.restarts = 0;
          if (this.operations) this.post({ type: 'operations', options: this.operations });
          if (this.crashes.size > 0) this.post({ type: 'crashes', counts: [...this.crashes] });
          if (this.started) this.post({ type: 'start' });
          this.armIdleEnd();
          resolve();
        } else if (message.type === 'initFailed') {
          reject(new SearchError(message.code, message.message));
        } else this.receive(message);
      });
      worker.onError((error) => {
        this.options.log('error', `the write ${worker.kind} failed: ${error.stack ?? error.message}`);
        if (!booted) reject(error);
      });
      worker.onExit((code) => {
        if (this.worker !== worker) return;
        this.worker = null;
        const interrupted = this.current;
        this.current = null;
        const retired = this.retiring;
        this.retiring = null;
        // a worker that is gone is stopped
        for (const ack of this.stopAcks.splice(0)) ack();
        if (!booted) return reject(new SearchError('internal', `The write thread exited (code ${code}) before it was ready.`));
        if (this.closing) return;
        if (!retired) {
          for (const uid of interrupted?.taskUids ?? []) this.crashes.set(uid, (this.crashes.get(uid) ?? 0) + 1);
          return this.restartLater(code);
        }
        this.options.afterIdleEnd?.();
        if (retired.revive) this.revive();
      });
    });
  }

  /**
   * (Re)start the idle timer: the worker ends if nothing happens for idleEndMs. Every batch event
   * and every wake-up restarts it, so the worker is asked to end only when it has planned no
   * batch since the last task was registered; a batch it starts meanwhile still finishes (the
   * end is a graceful close), and anything that happens while it ends starts another.
   */
  private armIdleEnd(): void {
    if (this.idleEndMs === null || this.closing || !this.ready) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (!this.worker || !this.ready || this.retiring || this.current || this.closing) return;
      this.retiring = { revive: false };
      this.post({ type: 'close', abort: false, idle: true });
    }, this.idleEndMs);
    this.idleTimer.unref();
  }

  /** Work came after the worker ended (or while it was ending): start another. */
  private revive(): void {
    if (this.retiring) {
      this.retiring.revive = true;
      return;
    }
    if (this.worker || this.closing || this.restartTimer) return;
    this.boot().catch((error: Error) => this.options.log('error', `could not start the write thread again: ${error.message}`));
  }

  /** The worker died (a bug, or memory): start another; it puts the interrupted batch back in the queue. */
  private restartLater(code: number): void {
    const delay = RESTART_DELAYS_MS[Math.min(this.restarts, RESTART_DELAYS_MS.length - 1)]!;
    this.restarts++;
    this.options.log('error', `the write thread exited (code ${code}); starting it again in ${delay} ms`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.closing) return;
      this.boot().catch((error: Error) => this.options.log('error', `could not restart the write thread: ${error.message}`));
    }, delay);
    this.restartTimer.unref();
  }

  private receive(message: FromWriteThread): void {
    switch (message.type) {
      case 'log':
        this.options.log(message.level, message.message);
        break;
      case 'logEvent':
        this.options.logEvent(message.event);
        break;
      case 'operationsSet':
        this.operationsAcks.shift()?.();
        break;
      case 'batchStarted':
        if (this.retiring) this.retiring.revive = true;
        this.current = message.event;
        this.emit('batchStarted', message.event);
        break;
      case 'batchAborted':
        this.current = null;
        this.armIdleEnd();
        this.emit('batchAborted', message.event);
        break;
      case 'batchFinished':
        this.current = null;
        for (const task of message.event.tasks) this.crashes.delete(task.uid);
        this.armIdleEnd();
        this.options.beforeBatchFinished?.(message.event);
        this.emit('batchFinished', message.event);
        break;
      case 'embedderCalls':
        addEmbedderCalls(message.counts);
        break;
      case 'stopped':
        this.stopAcks.shift()?.();
        break;
      case 'closed':
        // an idle worker ended: its engine is closed, nothing of it is needed
        if (this.retiring && !this.closing) {
          if (message.pending) this.retiring.revive = true;
          void this.worker?.terminate();
        }
        break;
      default:
        break;
    }
  }

  private post(message: ToWriteThread): void {
    this.worker?.post(message);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = null;
    if (this.worker && !this.retiring) this.post({ type: 'start' });
    // an ended worker's successor starts processing once it is ready
    else this.revive();
  }

  wake(): void {
    if (this.worker && !this.retiring) {
      this.armIdleEnd();
      this.post({ type: 'wake' });
    } else if (this.started) this.revive();
  }

  get isProcessing(): boolean {
    return this.current !== null;
  }

  processingIndexUids(): Set<string> {
    return new Set(this.current?.indexUids ?? []);
  }

  abortIfProcessing(uids: Iterable<number>): void {
    const list = [...uids];
    if (list.length > 0) this.post({ type: 'abort', uids: list });
  }

  /** Give the worker's dump, snapshot and upgrade processors their options; resolves once they are in place. */
  configureOperations(options: PortableOpsOptions): Promise<void> {
    this.operations = options;
    if (!this.worker) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.operationsAcks.push(resolve);
      this.post({ type: 'operations', options });
    });
  }

  private stopAcks: Array<() => void> = [];
  /** Task uid -> write sides that died while processing it (see crash-guard.ts); forgotten once it finishes. */
  private readonly crashes = new Map<number, number>();

  /** Stop processing after the current batch (or interrupt it with `abort`); `start` resumes. */
  stop(abort = false): Promise<void> {
    this.started = false;
    this.stopping ??= new Promise<void>((resolve) => {
      if (!this.worker) return resolve();
      this.stopAcks.push(resolve);
      this.post({ type: 'stop', abort });
    });
    return this.stopping;
  }

  /** Stop processing, then end the worker once its engine is closed. */
  close(abort = false): Promise<void> {
    this.closing ??= this.shutdown(abort);
    return this.closing;
  }

  private async shutdown(abort: boolean): Promise<void> {
    this.unfollowPolicy();
    this.unfollowLogFilters();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const worker = this.worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      worker.onMessage((message) => message.type === 'closed' && resolve());
      worker.onExit(() => resolve());
      worker.post({ type: 'close', abort });
    });
    for (const ack of this.stopAcks.splice(0)) ack();
    this.worker = null;
    this.current = null;
    for (const ack of this.operationsAcks.splice(0)) ack();
    await worker.terminate();
  }
}
