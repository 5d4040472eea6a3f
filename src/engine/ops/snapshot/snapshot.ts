/**
 * Snapshots: a consistent copy of every LMDB environment of a database directory,
 * packed as `<snapshot-dir>/<db-name>.snapshot` (tar.gz), and the way back (`--import-snapshot`).
 *
 * Each environment is copied with LMDB's own copy (`mdb_env_copy2`) inside one read transaction, so the copy is consistent while readers and writers go on. The snapshot task
 * runs in the scheduler, so no batch changes an index while it is copied; new tasks may still be
 * registered, which is why the task queue is copied before the update files it refers to.
 */
import { mkdir, mkdtemp, readdir, rename, rm, stat, copyFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { create as tarCreate, extract as tarExtract } from 'tar';
import { SearchError } from '../../errors.js';
import { BatchAborted, throwIfAborted } from '../../tasks/processing.js';
import { partialPath, removeStaleWork, workPrefix } from '../work-files.js';

/**
 * Copies the files of `from` that still exist once reached. Uploads land in the update files
 * while the snapshot runs (written under a temporary name, then renamed) and refused ones are
 * removed: a file gone by the time it is copied belongs to no task of the queue already copied.
 */
async function copyPresentFiles(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    try {
      if (entry.isDirectory()) await copyPresentFiles(source, join(to, entry.name));
      else if (entry.isFile()) await copyFile(source, join(to, entry.name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

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
}

/** Plain files and folders copied as they are (after the environments). */
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
    for (const { rel, env } of options.envs) {
      check();
      const target = join(work, rel);
      await mkdir(target, { recursive: true });
      // A plain copy (mdb_env_copy2 inside one read transaction), not compacted. lmdb 3.5.6's
      // compacting copy run on a live environment left its table of named databases inconsistent,
      // and run on the plain copy (in a child process) it wrote environments that failed an LMDB
      // assertion (mdb_page_alloc: key.mv_size > 0) on their first write once the index held large
      // posting lists (test/ops/snapshot.test.ts): free pages cost disk, a broken restore the data.
      await env.backup(target, false);
      options.onProgress?.(++done, options.envs.length, rel);
    }
    for (const name of PLAIN_FILES)
      if (existsSync(join(options.dbPath, name))) await copyFile(join(options.dbPath, name), join(work, name));
    for (const dir of PLAIN_DIRS)
      if (existsSync(join(options.dbPath, dir))) await copyPresentFiles(join(options.dbPath, dir), join(work, dir));
    check();
    await tarCreate({ gzip: true, file: partial, cwd: work, portable: true }, await readdir(work));
    check();
    await rename(partial, file);
    return { path: file, bytes: (await stat(file)).size, environments: options.envs.length };
  } catch (error) {
    await rm(partial, { force: true });
    throw error instanceof SearchError || error instanceof BatchAborted
      ? error
      : new SearchError('internal', `Failed to create the snapshot: ${(error as Error).message}`, { cause: error });
  } finally {
    await rm(work, { recursive: true, force: true });
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
