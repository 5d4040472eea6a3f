/**
 * The write side as the engine sees it: whatever processes the task queue. Either the
 * `Scheduler` itself (in the thread that calls it: the write thread uses this), or a
 * `WriteThread`, which runs a scheduler in a worker thread so that the thread serving reads
 * never waits for a batch (see write-thread.ts).
 *
 * Events: `batchStarted` (BatchStarted), `batchFinished` (BatchFinished), `batchAborted`
 * ({ batchUid }: its tasks went back to the queue).
 */
import { EventEmitter } from 'node:events';

export interface WriteSide extends EventEmitter {
  /** Begin processing the queue (idempotent). */
  start(): void;
  /** Stop after the current batch; `abort` also interrupts it (its tasks stay enqueued). `start` resumes. */
  stop(abort?: boolean): Promise<void>;
  /** Stop for good and release what the write side holds (the engine is closing). */
  close(abort?: boolean): Promise<void>;
  /** A task was registered: look at the queue now. */
  wake(): void;
  readonly isProcessing: boolean;
  /** The indexes of the batch being processed. */
  processingIndexUids(): Set<string>;
  /** Interrupt the running batch if it holds one of these tasks (a cancelation was registered). */
  abortIfProcessing(uids: Iterable<number>): void;
}

/** No write side at all: a read-only engine (a search thread's) registers no tasks and processes none. */
export class NoWriteSide extends EventEmitter implements WriteSide {
  readonly isProcessing = false;
  start(): void {}
  async stop(): Promise<void> {}
  async close(): Promise<void> {}
  wake(): void {}
  processingIndexUids(): Set<string> {
    return new Set();
  }
  abortIfProcessing(): void {}
}
