/**
 * Where the write side runs: a worker thread of this process, or a child process of its own.
 *
 * Both run the same script (write-thread.worker.ts) and speak the same messages; WriteThread
 * drives either through this interface.
 *
 * Why a process at all: a build leaves glibc's heaps at their peak. Inside a 512 MiB container,
 * 2 s after a 200k build the process still held 276-289 MiB of anonymous memory, of which glibc
 * reported 6 MB in use (the rest free but not given back: it only returns the top of a heap, and
 * nothing in JavaScript can ask it to trim). That memory is missing from the page cache that
 * searches read the index from, and queries after the build were 2.3-3.7x slower than without a
 * limit (bench/README.md, "Memory in a container"). A worker thread that ends returns its V8 heap
 * but not glibc's arenas; a process that exits returns everything. So under a memory limit below
 * AMPLE_MEMORY the write side is a child process, and it ends when the queue is idle. It starts
 * with glibc's allocator settings for a limit (allocator-settings.ts) when this process did not.
 *
 * A child must never outlive its parent: a new server on the same directory would then run a
 * second writer. Two guards: the child inherits the parent's descriptor of the directory lock
 * (store/database-lock.ts), so the lock is held while either lives and a new server refuses to
 * start instead of writing beside an orphan; and the child watches its parent from a thread of
 * its own (a batch's synchronous write transaction may hold the main thread for seconds) and
 * kills itself when the parent is gone. An uncommitted transaction dies with it, which LMDB
 * handles as any crash: the batch's tasks go back to `enqueued` at the next start.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { constants } from 'node:os';
import { SHARE_ENV, type Worker } from 'node:worker_threads';
import { MALLOC_TUNABLES, wantsAllocatorSettings } from '../allocator-settings.js';
import { AMPLE_MEMORY, workerHeapLimits } from '../thread-heaps.js';
import { childExecArgv, startWorker } from '../worker-script.js';
import { availableMemory } from './batch-budget.js';
import type { FromWriteThread, ToWriteThread, WriteThreadData } from './write-thread.js';

export type WriteHostKind = 'thread' | 'process';

export interface WriteHost {
  readonly kind: WriteHostKind;
  post(message: ToWriteThread): void;
  onMessage(listener: (message: FromWriteThread) => void): void;
  /** The host failed (an exception in the thread, or the process could not start). */
  onError(listener: (error: Error) => void): void;
  /** The host is gone; `code` is its exit code, 128 + the signal's number when killed by one. */
  onExit(listener: (code: number) => void): void;
  /** End the host (after its engine closed, or to give up on it); resolves once it is gone. */
  terminate(): Promise<void>;
}

/** `SEARCH_WRITE_PROCESS`: `on` (always a child process), `off` (always a thread), `auto` (the default). */
export const WRITE_PROCESS_ENV = 'SEARCH_WRITE_PROCESS';

/** The host the write side gets: a child process under a memory limit below AMPLE_MEMORY (see above), else a thread. */
export function writeHostKind(setting = process.env[WRITE_PROCESS_ENV], memory = availableMemory()): WriteHostKind {
  const value = setting?.trim().toLowerCase();
  if (value === 'on' || value === 'true' || value === '1') return 'process';
  if (value === 'off' || value === 'false' || value === '0') return 'thread';
  return memory < AMPLE_MEMORY ? 'process' : 'thread';
}

export interface WriteHostOptions {
  script: URL;
  data: WriteThreadData;
  /** A descriptor the child keeps open while it lives (the directory lock's); ignored by threads. */
  inheritFd?: number;
}

export function startWriteHost(kind: WriteHostKind, options: WriteHostOptions): WriteHost {
  return kind === 'process' ? new ProcessHost(options) : new ThreadHost(options);
}

class ThreadHost implements WriteHost {
  readonly kind = 'thread';
  private readonly worker: Worker;

  constructor(options: WriteHostOptions) {
    // one process, one environment: variables set later (tests, embedder keys) reach the worker too
    this.worker = startWorker(options.script, {
      workerData: options.data,
      env: SHARE_ENV,
      resourceLimits: workerHeapLimits('write'),
    });
  }

  post(message: ToWriteThread): void {
    this.worker.postMessage(message);
  }

  onMessage(listener: (message: FromWriteThread) => void): void {
    this.worker.on('message', listener);
  }

  onError(listener: (error: Error) => void): void {
    this.worker.on('error', listener);
  }

  onExit(listener: (code: number) => void): void {
    this.worker.on('exit', listener);
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}

/** How long a child that was asked to end may take before it is killed. */
const PROCESS_END_GRACE_MS = 5000;

/** The argument that tells the script it runs as the write side's process; the next one is its data (JSON). */
export const WRITE_PROCESS_ARG = '--search-write-process';

class ProcessHost implements WriteHost {
  readonly kind = 'process';
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(options: WriteHostOptions) {
    const limits = workerHeapLimits('write');
    const heapFlags = limits
      ? [`--max-old-space-size=${limits.maxOldGenerationSizeMb}`, `--max-semi-space-size=${Math.max(1, Math.round(limits.maxYoungGenerationSizeMb! / 3))}`]
      : [];
    const stdio: Array<'inherit' | 'ipc' | number> = ['inherit', 'inherit', 'inherit', 'ipc'];
    if (options.inheritFd !== undefined) stdio.push(options.inheritFd);
    this.child = fork(fileURLToPath(options.script), [WRITE_PROCESS_ARG, JSON.stringify(options.data)], {
      execArgv: [...childExecArgv(), ...heapFlags],
      // the structured clone, as between threads: batch events carry values JSON would not keep
      serialization: 'advanced',
      stdio,
      // the allocator settings, where this process did not start with them (an `Engine` API program)
      env: wantsAllocatorSettings() ? { ...process.env, GLIBC_TUNABLES: MALLOC_TUNABLES } : process.env,
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  post(message: ToWriteThread): void {
    // a child that is gone or going takes no message (the callback keeps a failed send from
    // being an 'error' event); its exit is reported on its own
    if (this.child.connected) this.child.send(message, undefined, {}, () => {});
  }

  onMessage(listener: (message: FromWriteThread) => void): void {
    // null: the child's last word (parent-channel.ts), sent only to know that the others were written
    this.child.on('message', (message) => message !== null && listener(message as FromWriteThread));
  }

  onError(listener: (error: Error) => void): void {
    this.child.on('error', listener);
  }

  onExit(listener: (code: number) => void): void {
    this.child.on('exit', (code, signal) => listener(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)));
  }

  async terminate(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    // it ends by itself once told to close; a child that does not is killed
    const timer = setTimeout(() => this.child.kill('SIGKILL'), PROCESS_END_GRACE_MS);
    if (this.child.connected) this.child.disconnect();
    await this.exited;
    clearTimeout(timer);
  }
}
