/**
 * What a processor gets and returns. One processor per batch kind lives in `processors/`; each
 * returns one outcome per task. Throwing fails every task of the batch with that error.
 */
import type { SearchError } from '../errors.js';
import type { IndexRegistry } from '../index/registry.js';
import type { Task } from '../types.js';
import type { TaskRecord, TaskStore } from './store.js';

export interface TaskOutcome {
  uid: number;
  status: 'succeeded' | 'failed' | 'canceled';
  details: Record<string, unknown> | null;
  error?: SearchError;
}

export interface BatchContext {
  batchUid: number;
  tasks: TaskRecord[];
  registry: IndexRegistry;
  taskStore: TaskStore;
  updateFilePath: (name: string) => string;
  /** Aborted when a cancelation matches a task of this batch, or at shutdown. */
  signal: AbortSignal;
  startedAt: Date;
  /** Filled by the batch's processor for the batch object (`progress`, `stats` extras). */
  progress: (step: string) => void;
}

export type Processor = (ctx: BatchContext) => Promise<TaskOutcome[]>;

/** An operation such as a dump or snapshot, registered by the ops module. */
export type OperationProcessor = (task: Task, ctx: BatchContext) => Promise<Record<string, unknown> | null>;

export class BatchAborted extends Error {
  constructor() {
    super('The batch was aborted.');
    this.name = 'BatchAborted';
  }
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new BatchAborted();
}
