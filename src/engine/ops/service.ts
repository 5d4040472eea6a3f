/**
 * The operations of a running engine: dump and snapshot tasks, the dumpless upgrade task, its
 * cancelation (rollback), and periodic snapshots.
 *
 * Plugged into the scheduler through `registerOperation` (one processor per task type) and a
 * gate, in the thread where the scheduler runs. With a write thread (the default), `install` on
 * the serving side hands the options to the write thread, which installs its own `Ops` (see
 * tasks/write-thread.worker.ts); enqueuing the tasks and periodic snapshots stay on this side.
 * The gate: while the database is not at this binary's version (an upgrade pending, failed, or
 * rolled back), only the upgrade and cancelations that target it are processed; every other task
 * stays enqueued. Searches are never held: they read committed data.
 */
import { preciseNow } from '../wire/timestamp.js';
import { join, relative, resolve } from 'node:path';
import { RoaringBitmap32 } from '../index/store.js';
import { AuthEnv } from '../auth/auth-env.js';
import type { Engine } from '../engine.js';
import { SearchError } from '../errors.js';
import { readVersion } from '../store/database-dir.js';
import { deserializeTaskFilter } from '../tasks/payload.js';
import { BatchAborted, type BatchContext } from '../tasks/processing.js';
import { processCancelations } from '../tasks/processors/task-admin.js';
import type { PlannedBatch } from '../tasks/autobatcher.js';
import type { TaskRecord } from '../tasks/store.js';
import type { SummarizedTask, Task, WriteOptions } from '../types.js';
import { dumpFileStem } from './dump/layout.js';
import { engineDumpSource } from './dump/engine-source.js';
import type { DumpSource } from './dump/layout.js';
import { writeDump } from './dump/writer.js';
import { createSnapshot, type SnapshotEnv } from './snapshot/snapshot.js';
import { CURRENT_DB_VERSION } from './version/history.js';
import { UpgradeJournal } from './version/journal.js';
import { rollbackUpgrade, runUpgrade, type UpgradeIndexHandle } from './version/upgrade.js';

export interface OpsOptions {
  /** Where dumps are written (default `dumps/`, as the reference). */
  dumpDir?: string;
  /** Where snapshots are written (default `snapshots/`). */
  snapshotDir?: string;
  /** The auth environment, when the caller has it open (keys and webhooks go into dumps and snapshots). */
  auth?: AuthEnv | null;
  /** `--schedule-snapshot`: seconds between snapshots; 0 or undefined disables. */
  scheduleSnapshotSeconds?: number;
  /** Fault injection for tests: fail the upgrade after this many indexes. */
  upgradeFailAfterIndexes?: number;
  /** Fault injection for tests: pause after each upgraded index (ms), so a cancel or kill lands midway. */
  upgradeDelayPerIndexMs?: number;
}

export class Ops {
  readonly dumpDir: string;
  readonly snapshotDir: string;
  private auth: AuthEnv | null;
  private ownsAuth = false;
  private timer: NodeJS.Timeout | null = null;
  private warnedHeld = false;
  /** Resolved once the processors that will run these tasks have this object's options. */
  private installed: Promise<void> = Promise.resolve();

  private constructor(readonly engine: Engine, private readonly options: OpsOptions) {
    this.dumpDir = resolve(options.dumpDir ?? 'dumps');
    this.snapshotDir = resolve(options.snapshotDir ?? 'snapshots');
    this.auth = options.auth ?? null;
  }

  /** Register the processors and the gate on `engine`'s scheduler (or hand the options to its write thread). */
  static install(engine: Engine, options: OpsOptions = {}): Ops {
    const ops = new Ops(engine, options);
    const scheduler = engine.inlineScheduler;
    if (scheduler) {
      engine.registerOperation('dumpCreation', (task, ctx) => ops.processDump(task, ctx));
      engine.registerOperation('snapshotCreation', (task, ctx) => ops.processSnapshot(task, ctx));
      engine.registerOperation('upgradeDatabase', (task, ctx) => ops.processUpgrade(task, ctx));
      // reached only through the gate below, for a cancelation that targets the upgrade
      engine.registerOperation('taskCancelation', (task, ctx) => ops.processUpgradeCancelation(task, ctx));
      scheduler.setGate((planned) => ops.gate(planned));
    } else {
      ops.installed = engine.configureOperations({
        dumpDir: ops.dumpDir,
        snapshotDir: ops.snapshotDir,
        upgradeFailAfterIndexes: options.upgradeFailAfterIndexes,
        upgradeDelayPerIndexMs: options.upgradeDelayPerIndexMs,
      });
    }
    if (options.scheduleSnapshotSeconds && options.scheduleSnapshotSeconds > 0) ops.scheduleSnapshots(options.scheduleSnapshotSeconds);
    return ops;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.ownsAuth && this.auth) await this.auth.close();
    this.auth = null;
  }

  private authEnv(): AuthEnv {
    if (!this.auth) {
      this.auth = AuthEnv.open(this.engine.dbPath);
      this.ownsAuth = true;
    }
    return this.auth;
  }

  // --- task registration ----------------------------------------------------------------------

  async createDump(options: WriteOptions = {}): Promise<SummarizedTask> {
    await this.installed;
    return this.engine.enqueue('dumpCreation', null, { kind: 'operation' }, { dumpUid: null }, options);
  }

  async createSnapshot(options: WriteOptions = {}): Promise<SummarizedTask> {
    await this.installed;
    return this.engine.enqueue('snapshotCreation', null, { kind: 'operation' }, null, options);
  }

  /** Enqueue the upgrade task unless one is already waiting or running. */
  async enqueueUpgrade(from: string, to: string = CURRENT_DB_VERSION): Promise<SummarizedTask | null> {
    await this.installed;
    const pending = this.engine.tasks.match({ types: ['upgradeDatabase'], statuses: ['enqueued', 'processing'] });
    if (!pending.isEmpty) return null;
    this.engine.log('info', `database version ${from} found: enqueuing the upgrade to ${to}`);
    return this.engine.enqueue('upgradeDatabase', null, { kind: 'operation', options: { from, to } }, { upgradeFrom: `v${from}`, upgradeTo: `v${to}` });
  }

  scheduleSnapshots(seconds: number): void {
    this.timer = setInterval(() => {
      const waiting = this.engine.tasks.match({ types: ['snapshotCreation'], statuses: ['enqueued'] });
      if (waiting.isEmpty) this.createSnapshot().catch((error) => this.engine.log('error', `scheduled snapshot: ${(error as Error).message}`));
    }, seconds * 1000);
    this.timer.unref();
  }

  // --- the gate -------------------------------------------------------------------------------

  /** True when the database is at this binary's version and no upgrade is half-done. */
  databaseCurrent(): boolean {
    return readVersion(this.engine.dbPath) === CURRENT_DB_VERSION && !UpgradeJournal.exists(this.engine.dbPath);
  }

  private gate(planned: PlannedBatch): PlannedBatch | null {
    if (this.databaseCurrent()) {
      this.warnedHeld = false;
      return planned;
    }
    const cancelation = this.upgradeCancelation();
    if (cancelation) return { kind: 'operation', tasks: [cancelation], reason: 'a cancelation of the database upgrade is processed first' };
    if (planned.kind === 'upgrade') return planned;
    if (!this.warnedHeld) {
      this.warnedHeld = true;
      this.engine.log(
        'warn',
        `tasks are held: the database is version ${readVersion(this.engine.dbPath)} and this binary ${CURRENT_DB_VERSION}; ` +
          'restart with `--experimental-dumpless-upgrade` to upgrade it, or with the binary of the database version',
      );
    }
    return null;
  }

  /** The oldest enqueued cancelation whose filter matches an enqueued or failed upgrade task. */
  private upgradeCancelation(): TaskRecord | null {
    const store = this.engine.tasks;
    const upgrades = store.match({ types: ['upgradeDatabase'], statuses: ['enqueued', 'failed'] });
    if (upgrades.isEmpty) return null;
    for (const uid of store.match({ types: ['taskCancelation'], statuses: ['enqueued'] })) {
      const task = store.get(uid);
      if (task?.payload.kind !== 'taskCancelation') continue;
      const matched = store.match(deserializeTaskFilter(task.payload.filter));
      if (matched.andCardinality(upgrades) > 0) return task;
    }
    return null;
  }

  // --- processors -----------------------------------------------------------------------------

  private async processDump(task: Task, ctx: BatchContext): Promise<Record<string, unknown>> {
    const stem = dumpFileStem(ctx.startedAt);
    const file = join(this.dumpDir, `${stem}.dump`);
    ctx.progress('writing the dump');
    const source = engineDumpSource(this.engine, { dbVersion: readVersion(this.engine.dbPath) ?? CURRENT_DB_VERSION, auth: this.authEnv(), excludeTaskUid: task.uid });
    const result = await writeDump(
      slowedDown(source, numberFrom(process.env.SEARCH_TEST_DUMP_DELAY_MS)),
      file,
      { date: ctx.startedAt, signal: ctx.signal, onProgress: (p) => p.indexUid && this.engine.log('debug', `dump ${stem}: index ${p.indexUid}, ${p.documents} documents`) },
    );
    this.engine.log('info', `dump written to ${result.path} (${result.indexes} indexes, ${result.documents} documents, ${result.bytes} bytes)`);
    return { dumpUid: stem };
  }

  private async processSnapshot(_task: Task, ctx: BatchContext): Promise<Record<string, unknown> | null> {
    ctx.progress('copying environments');
    await this.snapshotNow(this.snapshotDir, ctx.signal);
    return null;
  }

  /**
   * Take a snapshot at once, outside the task queue: used before an upgrade, when the queue is
   * held. Safe only while no batch runs (the scheduler is stopped or not started yet).
   */
  async snapshotNow(snapshotDir = this.snapshotDir, signal?: AbortSignal): Promise<{ path: string; bytes: number; environments: number }> {
    const envs: SnapshotEnv[] = [{ rel: 'tasks', env: this.engine.tasks.env }, { rel: 'auth', env: this.authEnv().env }];
    for (const uid of this.engine.indexes.uids()) {
      const index = this.engine.indexes.get(uid);
      envs.push({ rel: relative(this.engine.dbPath, index.store.path), env: index.store.env });
    }
    const result = await createSnapshot({ dbPath: this.engine.dbPath, snapshotDir, envs, signal });
    this.engine.log('info', `snapshot written to ${result.path} (${result.environments} environments, ${result.bytes} bytes)`);
    return result;
  }

  /** Write a dump at once, outside the task queue (the upgrade-by-dump path, with the queue held). */
  async dumpNow(file: string): Promise<{ path: string; bytes: number; documents: number }> {
    const source = engineDumpSource(this.engine, { dbVersion: readVersion(this.engine.dbPath) ?? CURRENT_DB_VERSION, auth: this.authEnv() });
    return writeDump(source, file);
  }

  /** Roll back a half-done upgrade directly (no task): `search rollback` on a stopped database. */
  rollbackNow(): string | null {
    return this.rollback();
  }

  private indexHandles(): UpgradeIndexHandle[] {
    return this.engine.indexes.uids().map((uid) => ({ uid, store: this.engine.indexes.get(uid).store }));
  }

  private rollback(): string | null {
    const byRel = new Map(this.indexHandles().map((h) => [relative(this.engine.dbPath, h.store.path), h.store]));
    return rollbackUpgrade(this.engine.dbPath, (rel) => byRel.get(rel));
  }

  private async processUpgrade(task: Task, ctx: BatchContext): Promise<Record<string, unknown>> {
    // A previous attempt (killed, or failed and retried) starts again from the exact pre-upgrade state.
    const restored = this.rollback();
    if (restored) this.engine.log('warn', `an interrupted upgrade was rolled back to version ${restored} before starting again`);
    const from = readVersion(this.engine.dbPath);
    if (!from) throw new SearchError('invalid_state', 'The database has no VERSION file.');
    const to = CURRENT_DB_VERSION;
    const details = { upgradeFrom: `v${from}`, upgradeTo: `v${to}` };
    if (from === to) return details;
    const env = process.env;
    try {
      await runUpgrade({
        dbPath: this.engine.dbPath,
        from,
        to,
        taskUid: task.uid,
        indexes: this.indexHandles(),
        signal: ctx.signal,
        failAfterIndexes: this.options.upgradeFailAfterIndexes ?? numberFrom(env.SEARCH_TEST_UPGRADE_FAIL_AFTER),
        delayPerIndexMs: this.options.upgradeDelayPerIndexMs ?? numberFrom(env.SEARCH_TEST_UPGRADE_DELAY_MS),
        onProgress: (p) => this.engine.log('info', `upgrade ${from} -> ${to}: ${p.step}: index \`${p.index}\` (${p.done}/${p.total})`),
      });
    } catch (error) {
      if (ctx.signal.aborted) {
        // canceled (or shutting down) while running: put everything back now
        this.rollback();
        this.engine.log('warn', `the upgrade was interrupted and rolled back to version ${from}`);
        throw new BatchAborted();
      }
      // failed: the journal stays, so that canceling the failed task can still roll back
      this.engine.log('error', `the upgrade from ${from} to ${to} failed: ${(error as Error).message}; cancel the task to roll back`);
      throw error;
    }
    this.engine.log('info', `database upgraded from ${from} to ${to}`);
    return details;
  }

  /** A cancelation that targets the upgrade: cancel as usual, then roll back a failed or interrupted upgrade. */
  private async processUpgradeCancelation(task: Task, ctx: BatchContext): Promise<Record<string, unknown> | null> {
    const outcomes = await processCancelations(ctx);
    const store = this.engine.tasks;
    const record = store.get(task.uid)!;
    let extra = 0;
    if (record.payload.kind === 'taskCancelation') {
      const matched = store.match(deserializeTaskFilter(record.payload.filter));
      const finishedAt = preciseNow();
      store.write(() => {
        for (const uid of RoaringBitmap32.and(matched, store.match({ types: ['upgradeDatabase'], statuses: ['failed'] }))) {
          const failed = store.get(uid)!;
          store.update({ ...failed, status: 'canceled', canceledBy: task.uid, finishedAt });
          extra++;
        }
      });
    }
    const restored = this.rollback();
    if (restored) this.engine.log('warn', `upgrade canceled: the database is back to version ${restored}, byte for byte`);
    const details = outcomes[0]?.details ?? {};
    return { ...details, canceledTasks: Number(details.canceledTasks ?? 0) + extra };
  }
}

function numberFrom(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** Fault injection for tests: a pause before each index, so that an interruption lands mid-dump. */
function slowedDown(source: DumpSource, delayMs: number | undefined): DumpSource {
  if (!delayMs) return source;
  return {
    ...source,
    async *indexes() {
      for await (const index of source.indexes()) {
        await new Promise((r) => setTimeout(r, delayMs));
        yield index;
      }
    },
  };
}
