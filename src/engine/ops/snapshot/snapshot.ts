/**
 * Snapshots: a consistent, compacted copy of every LMDB environment of a database directory,
 * packed as `<snapshot-dir>/<db-name>.snapshot` (tar.gz), and the way back (`--import-snapshot`).
 *
 * Each environment is copied with LMDB's own copy (`mdb_env_copy2`) inside one read transaction, so the copy is consistent while readers and writers go on. The snapshot task
 * runs in the scheduler, so no batch changes an index while it is copied; new tasks may still be
 * registered, which is why the task queue is copied before the update files it refers to.
 */
import { cp, mkdir, mkdtemp, readdir, rename, rm, stat, copyFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { RootDatabase } from 'lmdb';
import { create as tarCreate, extract as tarExtract } from 'tar';
import { SearchError } from '../../errors.js';
import { BatchAborted, throwIfAborted } from '../../tasks/processing.js';
import { partialPath, removeStaleWork, workPrefix } from '../work-files.js';

export interface SnapshotEnv {
  /** Directory of the environment relative to the database root, e.g. `tasks` or `indexes/<uuid>`. */
  rel: string;
  env: RootDatabase;
}

export interface SnapshotOptions {
  dbPath: string;
  snapshotDir: string;
  /** Every open environment, the task queue first. */
  envs: SnapshotEnv[];
  onProgress?: (done: number, total: number, rel: string) => void;
  /** Stop between environments once it aborts: the work files go, no snapshot is left. */
  signal?: AbortSignal;
}

export interface SnapshotResult {
  path: string;
  bytes: number;
  environments: number;
  /** How many environments were compacted (the others are plain copies). */
  compacted: number;
}

/** Plain files and folders copied as they are (after the environments). */
const execFileAsync = promisify(execFile);

const PLAIN_FILES = ['VERSION', 'instance-uid'];
const PLAIN_DIRS = ['tasks/update_files'];

export function snapshotFileName(dbPath: string): string {
  return `${basename(resolve(dbPath))}.snapshot`;
}

export async function createSnapshot(options: SnapshotOptions): Promise<SnapshotResult> {
  await mkdir(options.snapshotDir, { recursive: true });
  const file = join(options.snapshotDir, snapshotFileName(options.dbPath));
  removeStaleWork(options.snapshotDir);
  const partial = partialPath(file);
  const work = await mkdtemp(workPrefix(options.snapshotDir, 'snapshot'));
  const check = () => options.signal && throwIfAborted(options.signal);
  try {
    let done = 0;
    let compacted = 0;
    for (const { rel, env } of options.envs) {
      check();
      const target = join(work, rel);
      await mkdir(target, { recursive: true });
      // A plain copy of the live environment, compacted afterwards in a child process: with lmdb
      // 3.5.6 the compacting copy run on an environment being written left its table of named
      // databases inconsistent ("dbi out of range" on the next read of a database opened later).
      await env.backup(target, false);
      if (await compactInChildProcess(target)) compacted++;
      options.onProgress?.(++done, options.envs.length, rel);
    }
    for (const name of PLAIN_FILES)
      if (existsSync(join(options.dbPath, name))) await copyFile(join(options.dbPath, name), join(work, name));
    for (const dir of PLAIN_DIRS)
      if (existsSync(join(options.dbPath, dir))) await cp(join(options.dbPath, dir), join(work, dir), { recursive: true });
    check();
    await tarCreate({ gzip: true, file: partial, cwd: work, portable: true }, await readdir(work));
    check();
    await rename(partial, file);
    return { path: file, bytes: (await stat(file)).size, environments: options.envs.length, compacted };
  } catch (error) {
    await rm(partial, { force: true });
    throw error instanceof SearchError || error instanceof BatchAborted
      ? error
      : new SearchError('internal', `Failed to create the snapshot: ${(error as Error).message}`, { cause: error });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const COMPACT_SCRIPT = `
const [lmdbUrl, src, dst] = process.argv.slice(1);
const { open } = await import(lmdbUrl);
const env = open({ path: src, readOnly: true, maxDbs: 1024 });
await env.backup(dst, true);
await env.close();
`;

/**
 * Compact the private copy in `dir` (LMDB's compacting copy, MDB_CP_COMPACT), in a child process:
 * the live environment is never involved, and a failure there only costs the compaction; the
 * plain copy stays in place.
 */
async function compactInChildProcess(dir: string): Promise<boolean> {
  const out = `${dir}.compact`;
  await mkdir(out, { recursive: true });
  try {
    await execFileAsync(process.execPath, ['--input-type=module', '-e', COMPACT_SCRIPT, import.meta.resolve('lmdb'), dir, out], { timeout: 3_600_000 });
    await rename(join(out, 'data.mdb'), join(dir, 'data.mdb'));
    return true;
  } catch {
    return false;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

export interface ImportOptions {
  /** Do not fail when the snapshot file does not exist. */
  ignoreMissing?: boolean;
  /** Do not fail (and do nothing) when a database already exists at the target. */
  ignoreIfDbExists?: boolean;
  /** The caller's flags for the two options above, named in the errors (default: those of `search serve`). */
  flagNames?: ImportFlagNames;
}

/** The flags an import error suggests: `search serve` and the import commands spell them differently. */
export interface ImportFlagNames {
  ignoreMissing: string;
  ignoreIfDbExists: string;
}

export type ImportOutcome = 'imported' | 'skipped-missing' | 'skipped-db-exists';

/**
 * Unpack `file` into `dbPath`. The archive is extracted beside the target and renamed into
 * place only once complete, so a corrupt snapshot never leaves a half database behind.
 */
export async function importSnapshot(file: string, dbPath: string, options: ImportOptions = {}): Promise<ImportOutcome> {
  if (!existsSync(file)) {
    if (options.ignoreMissing) return 'skipped-missing';
    throw new SearchError('invalid_state', `The snapshot \`${file}\` does not exist (use \`${options.flagNames?.ignoreMissing ?? '--ignore-missing-snapshot'}\` to go on without it).`);
  }
  if (databaseDirInUse(dbPath)) {
    if (options.ignoreIfDbExists) return 'skipped-db-exists';
    throw new SearchError(
      'invalid_state',
      `A database already exists at \`${dbPath}\`; refusing to overwrite it with the snapshot (use \`${options.flagNames?.ignoreIfDbExists ?? '--ignore-snapshot-if-db-exists'}\` to keep it).`,
    );
  }
  await mkdir(dirname(resolve(dbPath)), { recursive: true });
  const staging = await mkdtemp(join(dirname(resolve(dbPath)), `.${basename(resolve(dbPath))}.import-`));
  try {
    try {
      await tarExtract({ file, cwd: staging, strict: true });
    } catch (error) {
      throw new SearchError('invalid_state', `The snapshot \`${file}\` is corrupt or truncated: ${(error as Error).message}.`, { cause: error });
    }
    if (!existsSync(join(staging, 'VERSION')))
      throw new SearchError('invalid_state', `The snapshot \`${file}\` holds no VERSION file; is it a snapshot?`);
    await rm(dbPath, { recursive: true, force: true });
    await rename(staging, dbPath);
    return 'imported';
  } catch (error) {
    await removeLater(staging);
    throw error;
  }
}

/** A directory holds a database when it has a VERSION file or any LMDB data. */
export function databaseDirInUse(dbPath: string): boolean {
  return existsSync(join(dbPath, 'VERSION')) || existsSync(join(dbPath, 'tasks', 'data.mdb'));
}

async function removeLater(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 20 && existsSync(dir); attempt++) {
    await rm(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 }).catch(() => {});
    if (existsSync(dir)) await new Promise((r) => setTimeout(r, 25));
  }
}
