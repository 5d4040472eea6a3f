/**
 * Start-up of a database with the operations options of `search serve`: import a dump or a
 * snapshot first (only into an empty place, unless told to skip), check the storage version,
 * open the engine, install the ops processors before the scheduler starts (so a task recovered
 * from a crash finds its processor), and enqueue the dumpless upgrade when asked for.
 */
import { Engine, type EngineOptions } from '../engine.js';
import { importDump } from './dump/import.js';
import { Ops, type OpsOptions } from './service.js';
import { importSnapshot } from './snapshot/snapshot.js';
import { checkDatabaseVersion } from './version/check.js';
import { log as logEvent } from '../logs/logger.js';

export interface StartupOptions extends OpsOptions {
  importDump?: string;
  ignoreMissingDump?: boolean;
  ignoreDumpIfDbExists?: boolean;
  importSnapshot?: string;
  ignoreMissingSnapshot?: boolean;
  ignoreSnapshotIfDbExists?: boolean;
  /** `--experimental-dumpless-upgrade` / `--upgrade-db`. */
  dumplessUpgrade?: boolean;
  /** Open an old database without enqueuing the upgrade (`search rollback`). */
  skipUpgradeTask?: boolean;
}

export interface Started {
  engine: Engine;
  ops: Ops;
  /** What happened at start, for the banner and the log. */
  notes: string[];
}

export async function openWithOps(engineOptions: EngineOptions, options: StartupOptions = {}): Promise<Started> {
  const notes: string[] = [];
  const log = (message: string) => {
    notes.push(message);
    if (engineOptions.logLevel !== 'off') logEvent('search::ops', 'info', message);
  };
  if (options.importDump && options.importSnapshot) throw new Error('`--import-dump` and `--import-snapshot` cannot be used together.');
  if (options.importSnapshot) {
    const outcome = await importSnapshot(options.importSnapshot, engineOptions.dbPath, {
      ignoreMissing: options.ignoreMissingSnapshot,
      ignoreIfDbExists: options.ignoreSnapshotIfDbExists,
    });
    log(
      outcome === 'imported'
        ? `snapshot ${options.importSnapshot} imported into ${engineOptions.dbPath}`
        : outcome === 'skipped-missing'
          ? `snapshot ${options.importSnapshot} not found: ignored (--ignore-missing-snapshot)`
          : `a database exists at ${engineOptions.dbPath}: snapshot ignored (--ignore-snapshot-if-db-exists)`,
    );
  }
  if (options.importDump) {
    const result = await importDump(options.importDump, engineOptions.dbPath, {
      ignoreMissing: options.ignoreMissingDump,
      ignoreIfDbExists: options.ignoreDumpIfDbExists,
      log,
    });
    if (result.outcome === 'skipped-missing') log(`dump ${options.importDump} not found: ignored (--ignore-missing-dump)`);
    if (result.outcome === 'skipped-db-exists') log(`a database exists at ${engineOptions.dbPath}: dump ignored (--ignore-dump-if-db-exists)`);
  }
  const status = checkDatabaseVersion(engineOptions.dbPath, { dumplessUpgrade: options.dumplessUpgrade });
  const engine = await Engine.open({ ...engineOptions, autoProcess: false, skipVersionCheck: status.kind === 'upgrade' });
  const ops = Ops.install(engine, options);
  if (status.kind === 'upgrade' && !options.skipUpgradeTask) {
    const task = await ops.enqueueUpgrade(status.from, status.to);
    log(
      task
        ? `dumpless upgrade from ${status.from} to ${status.to} enqueued as task ${task.taskUid}; searches keep working, other tasks wait`
        : `resuming the interrupted upgrade from ${status.from} to ${status.to}`,
    );
  }
  if (engineOptions.autoProcess !== false) engine.scheduler.start();
  return { engine, ops, notes };
}

/** `--schedule-snapshot` takes an optional number of seconds; alone (or `true`) it means daily. */
export function parseScheduleSnapshot(value: string | boolean | undefined): number | undefined {
  if (value === undefined || value === false || value === 'false' || value === '0') return undefined;
  if (value === true || value === 'true' || value === '') return 86_400;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds <= 0) throw new Error(`Invalid value \`${value}\` for \`schedule-snapshot\`: expected a number of seconds.`);
  return seconds;
}

/** The ops options of `search serve`, from its resolved option table (see src/cli/serve-options.ts). */
export function startupOptionsFrom(options: Record<string, unknown>): StartupOptions {
  const str = (name: string) => (typeof options[name] === 'string' ? (options[name] as string) : undefined);
  const bool = (name: string) => options[name] === true;
  return {
    importDump: str('import-dump'),
    ignoreMissingDump: bool('ignore-missing-dump'),
    ignoreDumpIfDbExists: bool('ignore-dump-if-db-exists'),
    dumpDir: str('dump-dir'),
    importSnapshot: str('import-snapshot'),
    ignoreMissingSnapshot: bool('ignore-missing-snapshot'),
    ignoreSnapshotIfDbExists: bool('ignore-snapshot-if-db-exists'),
    snapshotDir: str('snapshot-dir'),
    scheduleSnapshotSeconds: parseScheduleSnapshot(options['schedule-snapshot'] as string | boolean | undefined),
    dumplessUpgrade: bool('experimental-dumpless-upgrade'),
  };
}
