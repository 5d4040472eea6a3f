/**
 * The procedures behind `search dump|snapshot|upgrade|rollback`, written against `OpsTarget`
 * so that each works on a local database and on a running server alike. No CLI code here: the
 * commands parse flags and render what these return.
 */
import { existsSync, readdirSync, renameSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { SearchError } from '../errors.js';
import type { Task } from '../types.js';
import { dumpFileStem } from './dump/layout.js';
import { snapshotFileName } from './snapshot/snapshot.js';
import { keepNewest, type BackupKind } from './retention.js';
import { LocalTarget, WaitTimedOut, type OpsTarget, type WaitOptions } from './target.js';
import { CURRENT_DB_VERSION, upgradePath } from './version/history.js';
import { checkDatabaseVersion } from './version/check.js';
import { UpgradeJournal } from './version/journal.js';
import { readVersion, requireDatabase } from '../store/database-dir.js';
import { lockDatabase } from '../store/database-lock.js';

/** A followed task ended without succeeding; its own error code is the error's. */
export class TaskFailed extends SearchError {
  constructor(readonly task: Task) {
    super(task.error?.code ?? `task_${task.status}`, `task ${task.uid} (${task.type}) ${task.status}${task.error ? `: ${task.error.message}` : ''}`);
    this.name = 'TaskFailed';
  }
}

export interface BackupOptions extends WaitOptions {
  /** The directory the file lands in, when known (local target, or a server on this machine). */
  dir?: string;
  /** Database directory name, which names the snapshot file; unknown for a server: the new `.snapshot` file in `dir` is found instead. */
  dbName?: string;
  /** Keep only the N newest backups of this database in `dir` (see retention.ts). */
  keep?: number;
}

export interface BackupResult {
  task: Task;
  /** Where the file is, when `dir` is known. */
  path: string | null;
  bytes: number | null;
  removed: string[];
  /** Why `--keep` removed nothing, when it could not. */
  keepSkipped: string | null;
}

/** The command was interrupted (SIGINT, SIGTERM) while it waited for its task. */
export class Interrupted extends SearchError {
  constructor(
    readonly task: Task | { uid: number },
    message: string,
  ) {
    super('interrupted', message);
    this.name = 'Interrupted';
  }
}

export async function createBackup(kind: BackupKind, target: OpsTarget, options: BackupOptions = {}): Promise<BackupResult> {
  const summary = kind === 'dump' ? await target.createDump() : await target.createSnapshot();
  const task = await followOrCancel(target, summary.taskUid, kind, options);
  if (task.status !== 'succeeded') throw new TaskFailed(task);
  if (!options.dir) return { task, path: null, bytes: null, removed: [], keepSkipped: null };
  const dir = resolve(options.dir);
  let path = kind === 'dump' ? join(dir, `${String(task.details?.dumpUid)}.dump`) : findSnapshot(dir, options.dbName, task);
  if (!existsSync(path))
    throw new SearchError('invalid_state', `The ${kind} task ${task.uid} succeeded but \`${path}\` is not there: is \`${dir}\` the directory where ${target.label} writes its ${kind}s?`);
  if (kind === 'snapshot' && options.keep !== undefined) {
    // a history: each kept snapshot gets its date in the name (the server overwrites <db>.snapshot)
    const stamped = join(dir, `${basename(path, '.snapshot')}.${dumpFileStem(new Date(task.finishedAt ?? Date.now()))}.snapshot`);
    renameSync(path, stamped);
    path = stamped;
  }
  const bytes = statSync(path).size;
  const retention = options.keep !== undefined ? await keepNewest(kind, path, options.keep) : { removed: [], skipped: null };
  return { task, path, bytes, removed: retention.removed, keepSkipped: retention.skipped };
}

/**
 * Wait for the task; when the wait is interrupted or times out, cancel a local task (its work
 * files go with it, it does not hold the command open, and it does not run again on the next
 * open) or leave a server's task running.
 */
async function followOrCancel(target: OpsTarget, uid: number, what: string, options: WaitOptions): Promise<Task> {
  try {
    return await target.waitForTask(uid, options);
  } catch (error) {
    const interrupted = Boolean(options.signal?.aborted);
    if (!interrupted && !(error instanceof WaitTimedOut)) throw error;
    if (!target.local) {
      if (!interrupted) throw error;
      throw new Interrupted({ uid }, `Interrupted: stopped following the ${what} task ${uid}, which goes on on ${target.label}.`);
    }
    const cancel = await target.cancelTasks({ uids: [uid] });
    await target.waitForTask(cancel.taskUid, { timeoutMs: 60_000 });
    const task = await target.getTask(uid);
    if (!interrupted) throw new WaitTimedOut(task, `Timed out waiting for the ${what} task ${uid}: it was canceled and its work files removed.`);
    throw new Interrupted(task, `Interrupted: the ${what} task ${uid} was canceled and its work files removed.`);
  }
}

const DATED_SNAPSHOT = /\.\d{8}-\d{9}\.snapshot$/;

/** The snapshot the task wrote: `<dbName>.snapshot`, or the `.snapshot` file of `dir` the task wrote when the name is unknown. */
function findSnapshot(dir: string, dbName: string | undefined, task: Task): string {
  if (dbName) return join(dir, snapshotFileName(dbName));
  const since = Date.parse(task.startedAt ?? task.enqueuedAt) - 2_000;
  const fresh = (existsSync(dir) ? readdirSync(dir) : [])
    .filter((name) => name.endsWith('.snapshot') && !DATED_SNAPSHOT.test(name))
    .map((name) => ({ name, time: statSync(join(dir, name)).mtimeMs }))
    .filter((f) => f.time >= since)
    .sort((a, b) => b.time - a.time);
  if (!fresh[0])
    throw new SearchError('invalid_state', `The snapshot task ${task.uid} succeeded but no new .snapshot file is in \`${dir}\`: is it the server's snapshot directory?`);
  return join(dir, fresh[0].name);
}

// --- upgrade --------------------------------------------------------------------------------------

export interface UpgradePlan {
  dbPath: string;
  from: string | null;
  to: string;
  status: 'current' | 'upgrade' | 'no-path' | 'newer' | 'interrupted';
  steps: string[];
  snapshot: string;
}

export function planUpgrade(dbPath: string, snapshotDir: string, viaDump = false): UpgradePlan {
  requireDatabase(dbPath);
  const from = readVersion(dbPath);
  const to = CURRENT_DB_VERSION;
  const snapshot = join(resolve(snapshotDir), `${basename(resolve(dbPath))}.pre-upgrade-${from ?? 'unknown'}.snapshot`);
  const interrupted = UpgradeJournal.exists(dbPath);
  const path = from ? upgradePath(from, to) : null;
  const status: UpgradePlan['status'] = interrupted
    ? 'interrupted'
    : from === to
      ? 'current'
      : from && path
        ? 'upgrade'
        : from && compare(from, to) > 0
          ? 'newer'
          : 'no-path';
  const steps: string[] = [];
  if (status === 'upgrade' || status === 'interrupted') {
    steps.push(`check the database version: ${from} -> ${to}`);
    steps.push(`take a snapshot of the database and wait for it: ${snapshot}`);
    if (viaDump) {
      steps.push(`write a dump of the database (read with this binary) and import it into a new directory`);
      steps.push(`swap directories: keep the old one as ${resolve(dbPath)}.pre-upgrade-${from}`);
    } else {
      steps.push(`enqueue the dumpless upgrade task (upgradeDatabase ${from} -> ${to}): ${path?.map((s) => s.title).join('; ') ?? 'resume'}`);
      steps.push('follow the task until it succeeds');
      steps.push('on failure or timeout: cancel the task, wait for the rollback, verify the version and the journal are back');
    }
  }
  return { dbPath: resolve(dbPath), from, to, status, steps, snapshot };
}

function compare(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

export interface UpgradeReport {
  outcome: 'already-current' | 'upgraded' | 'rolled-back';
  from: string | null;
  to: string;
  snapshot: string | null;
  task: Task | null;
  error?: string;
  verified?: { version: string | null; journal: boolean };
}

export interface UpgradeRunOptions extends WaitOptions {
  dbPath: string;
  snapshotDir: string;
  onStep?: (step: string) => void;
  /** The database stops being usable as it was: the upgrade itself starts (see upgrade-status.ts). */
  onUpdating?: () => void;
}

/** The dumpless upgrade procedure on a local database (the server must be stopped). */
export async function upgradeLocal(options: UpgradeRunOptions): Promise<UpgradeReport> {
  const plan = planUpgrade(options.dbPath, options.snapshotDir);
  const step = options.onStep ?? (() => {});
  if (plan.status === 'current') return { outcome: 'already-current', from: plan.from, to: plan.to, snapshot: null, task: null };
  if (plan.status === 'newer' || plan.status === 'no-path') checkDatabaseVersion(options.dbPath, { dumplessUpgrade: true }); // throws the explanation
  step(`database ${plan.dbPath} is in storage format ${plan.from}; this binary uses storage format ${plan.to}`);
  const target = await LocalTarget.open({ dbPath: options.dbPath, snapshotDir: options.snapshotDir, dumplessUpgrade: true, autoProcess: false });
  try {
    step('taking a snapshot before upgrading');
    const snap = await target.ops.snapshotNow();
    renameSync(snap.path, plan.snapshot);
    step(`snapshot written: ${plan.snapshot}`);
    const [upgrade] = await target.tasks({ types: ['upgradeDatabase'], statuses: ['enqueued', 'processing'] });
    if (!upgrade) throw new SearchError('internal', 'No upgrade task was enqueued.');
    options.onUpdating?.();
    target.engine.scheduler.start();
    step(`following the upgrade task ${upgrade.uid}`);
    let task: Task;
    let failure: string | undefined;
    try {
      task = await target.waitForTask(upgrade.uid, options);
      if (task.status === 'succeeded') return { outcome: 'upgraded', from: plan.from, to: plan.to, snapshot: plan.snapshot, task };
      failure = task.error?.message ?? task.status;
    } catch (error) {
      failure = (error as Error).message; // timeout
    }
    step(`the upgrade did not succeed (${failure}): rolling back`);
    const cancel = await target.cancelTasks({ uids: [upgrade.uid] });
    await target.waitForTask(cancel.taskUid, { timeoutMs: 10 * 60_000 });
    task = await target.getTask(upgrade.uid);
    const verified = { version: readVersion(options.dbPath), journal: UpgradeJournal.exists(options.dbPath) };
    if (verified.version !== plan.from || verified.journal)
      throw new SearchError('internal', `Rollback could not be verified (version ${verified.version}, journal ${verified.journal}); restore ${plan.snapshot}.`);
    step(`rolled back: the database is in storage format ${verified.version} again`);
    return { outcome: 'rolled-back', from: plan.from, to: plan.to, snapshot: plan.snapshot, task, error: failure, verified };
  } finally {
    await target.close();
  }
}

/** Follow (or trigger nothing but a snapshot for) the upgrade of a running server. */
export async function upgradeRemote(target: OpsTarget, options: WaitOptions & { onStep?: (s: string) => void; onUpdating?: () => void }): Promise<UpgradeReport> {
  const step = options.onStep ?? (() => {});
  const version = await target.version();
  const [upgrade] = await target.tasks({ types: ['upgradeDatabase'], statuses: ['enqueued', 'processing'] });
  if (!upgrade) {
    step(`${target.label} runs version ${version}; no upgrade task is pending`);
    return { outcome: 'already-current', from: version, to: version ?? CURRENT_DB_VERSION, snapshot: null, task: null };
  }
  options.onUpdating?.();
  step(`following the upgrade task ${upgrade.uid} on ${target.label}`);
  let failure: string;
  try {
    const task = await target.waitForTask(upgrade.uid, options);
    if (task.status === 'succeeded')
      return { outcome: 'upgraded', from: String(task.details?.upgradeFrom ?? ''), to: String(task.details?.upgradeTo ?? ''), snapshot: null, task };
    failure = task.error?.message ?? task.status;
  } catch (error) {
    failure = (error as Error).message;
  }
  step(`the upgrade did not succeed (${failure}): canceling it to roll back`);
  const task = (await rollbackRemote(target, upgrade.uid))!;
  return { outcome: 'rolled-back', from: String(task.details?.upgradeFrom ?? ''), to: String(task.details?.upgradeTo ?? ''), snapshot: null, task, error: failure };
}

/** Cancel the server's upgrade task (which rolls it back); null when there is none to cancel. */
export async function rollbackRemote(target: OpsTarget, upgradeUid?: number): Promise<Task | null> {
  const uid = upgradeUid ?? (await target.tasks({ types: ['upgradeDatabase'], statuses: ['enqueued', 'processing', 'failed'] }))[0]?.uid;
  if (uid === undefined) return null;
  const cancel = await target.cancelTasks({ uids: [uid] });
  await target.waitForTask(cancel.taskUid, { timeoutMs: 10 * 60_000 });
  const task = await target.getTask(uid);
  if (task.status !== 'canceled') throw new SearchError('internal', `The upgrade task ${uid} is ${task.status}, not canceled: nothing was rolled back.`);
  return task;
}

export interface RollbackReport {
  outcome: 'rolled-back' | 'nothing-to-roll-back';
  version: string | null;
  task: Task | null;
}

/** Roll back a failed or interrupted upgrade of a local database (server stopped). */
export async function rollbackLocal(dbPath: string): Promise<RollbackReport> {
  requireDatabase(dbPath);
  if (!UpgradeJournal.exists(dbPath)) return { outcome: 'nothing-to-roll-back', version: readVersion(dbPath), task: null };
  const target = await LocalTarget.open({ dbPath, dumplessUpgrade: true, skipUpgradeTask: true, autoProcess: false });
  try {
    const [upgrade] = await target.tasks({ types: ['upgradeDatabase'], statuses: ['enqueued', 'processing', 'failed'] });
    let task: Task | null = null;
    if (upgrade) {
      // the cancelation is registered before the scheduler starts, so the upgrade never runs again
      const cancel = await target.cancelTasks({ uids: [upgrade.uid] });
      target.engine.scheduler.start();
      await target.waitForTask(cancel.taskUid, { timeoutMs: 10 * 60_000 });
      task = await target.getTask(upgrade.uid);
    } else {
      target.ops.rollbackNow();
    }
    const version = readVersion(dbPath);
    if (UpgradeJournal.exists(dbPath)) throw new SearchError('internal', 'The rollback did not complete: the upgrade journal is still there.');
    return { outcome: 'rolled-back', version, task };
  } finally {
    await target.close();
  }
}

/**
 * The dump-based path: snapshot, dump the old database with this binary, import the dump into a
 * fresh directory (re-indexing everything in the current format), then swap the directories,
 * keeping the old one beside it. Nothing is changed in place until the import has succeeded.
 */
export async function upgradeViaDump(options: UpgradeRunOptions & { dumpDir: string }): Promise<UpgradeReport & { previous: string | null; dump: string | null }> {
  const plan = planUpgrade(options.dbPath, options.snapshotDir, true);
  const step = options.onStep ?? (() => {});
  if (plan.status === 'current') return { outcome: 'already-current', from: plan.from, to: plan.to, snapshot: null, task: null, previous: null, dump: null };
  if (plan.status === 'interrupted') throw new SearchError('invalid_state', 'A dumpless upgrade was interrupted: run `search rollback` first.');
  const dbPath = resolve(options.dbPath);
  // held across the swap, so that no server opens the directory between the dump and the rename
  const lock = lockDatabase(dbPath);
  try {
    return await upgradeByDump(dbPath, plan, options, step);
  } finally {
    lock.release();
  }
}

async function upgradeByDump(
  dbPath: string,
  plan: UpgradePlan,
  options: UpgradeRunOptions & { dumpDir: string },
  step: (s: string) => void,
): Promise<UpgradeReport & { previous: string | null; dump: string | null }> {
  const dump = join(resolve(options.dumpDir), `${dumpFileStem(new Date())}.dump`);
  const target = await LocalTarget.open({ dbPath, snapshotDir: options.snapshotDir, dumplessUpgrade: true, skipUpgradeTask: true, autoProcess: false });
  try {
    step('taking a snapshot before upgrading');
    const snap = await target.ops.snapshotNow();
    renameSync(snap.path, plan.snapshot);
    step(`snapshot written: ${plan.snapshot}`);
    options.onUpdating?.();
    step('writing a dump of the database');
    const written = await target.ops.dumpNow(dump);
    step(`dump written: ${written.path} (${written.documents} documents)`);
  } finally {
    await target.close();
  }
  const staging = `${dbPath}.upgrading`;
  const previous = `${dbPath}.pre-upgrade-${plan.from}`;
  if (existsSync(staging) || existsSync(previous)) throw new SearchError('invalid_state', `\`${staging}\` or \`${previous}\` already exists; remove it first.`);
  step(`importing the dump into ${staging}`);
  const { importDump } = await import('./dump/import.js');
  await importDump(dump, staging, { log: step });
  renameSync(dbPath, previous);
  renameSync(staging, dbPath);
  step(`upgraded: ${dbPath} is in storage format ${readVersion(dbPath)}; the previous database is kept at ${previous}`);
  return { outcome: 'upgraded', from: plan.from, to: plan.to, snapshot: plan.snapshot, task: null, previous, dump };
}
