/**
 * Where an ops command acts: a local database directory (the engine embedded in the command) or
 * a running server (ours or Meilisearch) reached with `--url` and `--api-key`. The commands are
 * written once against this interface.
 */
import { resolve } from 'node:path';
import { SearchClient } from '../../client/client.js';
import type { Engine } from '../engine.js';
import { SearchError } from '../errors.js';
import { readVersion, requireDatabase } from '../store/database-dir.js';
import type { SummarizedTask, Task, TaskFilter } from '../types.js';
import type { Ops } from './service.js';
import { openWithOps } from './startup.js';

export interface WaitOptions {
  timeoutMs?: number;
  /** Called on each poll with the task as it is now. */
  onPoll?: (task: Task) => void;
  /** Stop waiting (the wait throws) once it aborts. */
  signal?: AbortSignal;
}

export interface OpsTarget {
  readonly label: string;
  readonly local: boolean;
  createDump(): Promise<SummarizedTask>;
  createSnapshot(): Promise<SummarizedTask>;
  getTask(uid: number): Promise<Task>;
  tasks(filter: TaskFilter): Promise<Task[]>;
  cancelTasks(filter: TaskFilter): Promise<SummarizedTask>;
  waitForTask(uid: number, options?: WaitOptions): Promise<Task>;
  /** The server's version (remote) or the database's format version (local). */
  version(): Promise<string | null>;
  close(): Promise<void>;
}

/** The wait for a task ran out of time; the task itself goes on. */
export class WaitTimedOut extends SearchError {
  constructor(
    readonly task: Task,
    message = `Timed out waiting for task ${task.uid} (status: ${task.status}).`,
  ) {
    super('task_timeout', message);
    this.name = 'WaitTimedOut';
  }
}

const FINISHED = new Set(['succeeded', 'failed', 'canceled']);

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

async function poll(get: () => Promise<Task>, options: WaitOptions): Promise<Task> {
  const deadline = Date.now() + (options.timeoutMs ?? 60 * 60 * 1000);
  let interval = 50;
  for (;;) {
    options.signal?.throwIfAborted();
    const task = await get();
    options.onPoll?.(task);
    if (FINISHED.has(task.status)) return task;
    if (Date.now() > deadline) throw new WaitTimedOut(task);
    await sleep(interval, options.signal);
    options.signal?.throwIfAborted();
    interval = Math.min(1000, interval * 2);
  }
}

export class LocalTarget implements OpsTarget {
  readonly local = true;
  private constructor(
    readonly engine: Engine,
    readonly ops: Ops,
    readonly label: string,
  ) {}

  static async open(options: { dbPath: string; dumpDir?: string; snapshotDir?: string; dumplessUpgrade?: boolean; skipUpgradeTask?: boolean; autoProcess?: boolean }): Promise<LocalTarget> {
    // the commands that act on a local database read one: a mistyped path must not become a new database
    requireDatabase(options.dbPath);
    // no warm-up: these commands run tasks and read records, they answer no searches
    const { engine, ops } = await openWithOps(
      { dbPath: options.dbPath, logLevel: 'off', autoProcess: false, create: false, warm: false },
      { dumpDir: options.dumpDir, snapshotDir: options.snapshotDir, dumplessUpgrade: options.dumplessUpgrade, skipUpgradeTask: options.skipUpgradeTask },
    );
    const target = new LocalTarget(engine, ops, `database ${resolve(options.dbPath)}`);
    try {
      await target.cancelLeftoverBackups();
    } catch (error) {
      await target.close();
      throw error;
    }
    if (options.autoProcess !== false) engine.scheduler.start();
    return target;
  }

  /**
   * A dump or snapshot still enqueued or processing when a command opens the database was left by
   * a run that was killed: a command makes the one backup it is asked for, so that one is canceled
   * before the scheduler starts rather than run again.
   */
  private async cancelLeftoverBackups(): Promise<void> {
    // while an upgrade is pending the gate holds every other task, cancelations included
    if (!this.ops.databaseCurrent()) return;
    const filter: TaskFilter = { types: ['dumpCreation', 'snapshotCreation'], statuses: ['enqueued', 'processing'] };
    if ((await this.tasks(filter)).length === 0) return;
    const cancel = await this.cancelTasks(filter);
    this.engine.scheduler.start();
    await this.waitForTask(cancel.taskUid, { timeoutMs: 60_000 });
    await this.engine.scheduler.stop();
  }

  createDump(): Promise<SummarizedTask> {
    return this.ops.createDump();
  }
  createSnapshot(): Promise<SummarizedTask> {
    return this.ops.createSnapshot();
  }
  async getTask(uid: number): Promise<Task> {
    return this.engine.getTask(uid);
  }
  async tasks(filter: TaskFilter): Promise<Task[]> {
    return this.engine.getTasks({ ...filter, limit: 1000 }).results;
  }
  cancelTasks(filter: TaskFilter): Promise<SummarizedTask> {
    return this.engine.cancelTasks(filter);
  }
  waitForTask(uid: number, options: WaitOptions = {}): Promise<Task> {
    return poll(async () => this.engine.getTask(uid), options);
  }
  async version(): Promise<string | null> {
    return readVersion(this.engine.dbPath);
  }
  async close(): Promise<void> {
    await this.ops.close();
    await this.engine.close();
  }
}

export class RemoteTarget implements OpsTarget {
  readonly local = false;
  readonly client: SearchClient;
  readonly label: string;

  constructor(url: string, apiKey?: string) {
    this.client = new SearchClient({ url, apiKey });
    this.label = `server ${this.client.baseUrl}`;
  }

  createDump(): Promise<SummarizedTask> {
    return this.client.request('POST', '/dumps');
  }
  createSnapshot(): Promise<SummarizedTask> {
    return this.client.request('POST', '/snapshots');
  }
  getTask(uid: number): Promise<Task> {
    return this.client.getTask(uid);
  }
  async tasks(filter: TaskFilter): Promise<Task[]> {
    const page = await this.client.request<{ results: Task[] }>('GET', '/tasks', { query: { ...filterQuery(filter), limit: 1000 } });
    return page.results;
  }
  cancelTasks(filter: TaskFilter): Promise<SummarizedTask> {
    return this.client.request('POST', '/tasks/cancel', { query: filterQuery(filter) });
  }
  waitForTask(uid: number, options: WaitOptions = {}): Promise<Task> {
    return poll(() => this.client.getTask(uid), options);
  }
  async version(): Promise<string | null> {
    // Our server reports its own version beside the Meilisearch version it is compatible with.
    const v = await this.client.request<{ pkgVersion?: string; searchVersion?: string }>('GET', '/version');
    return v?.searchVersion ?? v?.pkgVersion ?? null;
  }
  async close(): Promise<void> {}
}

function filterQuery(filter: TaskFilter): Record<string, string | undefined> {
  const join_ = (v: unknown[] | undefined) => (v && v.length > 0 ? v.map(String).join(',') : undefined);
  return {
    uids: join_(filter.uids),
    types: join_(filter.types),
    statuses: join_(filter.statuses),
    indexUids: join_(filter.indexUids),
  };
}
