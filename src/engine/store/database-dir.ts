/**
 * The database directory: `VERSION`, `instance-uid`, `tasks/`, `auth/`, `indexes/<uuid>/`.
 * Small files are written atomically (temp file + rename) so a crash never leaves half a file.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { SearchError } from '../errors.js';

export const VERSION_FILE = 'VERSION';
export const INSTANCE_UID_FILE = 'instance-uid';

export function writeFileAtomic(path: string, contents: string | Buffer): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, typeof contents === 'string' ? Buffer.from(contents) : contents);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export interface DatabasePaths {
  root: string;
  tasks: string;
  auth: string;
  indexes: string;
  updateFiles: string;
  version: string;
  instanceUid: string;
}

export function databasePaths(root: string): DatabasePaths {
  return {
    root,
    tasks: join(root, 'tasks'),
    auth: join(root, 'auth'),
    indexes: join(root, 'indexes'),
    updateFiles: join(root, 'tasks', 'update_files'),
    version: join(root, VERSION_FILE),
    instanceUid: join(root, INSTANCE_UID_FILE),
  };
}

/** True when `root` already holds a database (it has a VERSION file). */
export function databaseExists(root: string): boolean {
  return existsSync(join(root, VERSION_FILE));
}

/** For the commands that read a database: a missing or empty directory is a mistake, never a new database. */
export function requireDatabase(root: string): void {
  if (!databaseExists(root))
    throw new SearchError(
      'database_not_found',
      `There is no database at \`${root}\` (${existsSync(root) ? 'the directory holds no VERSION file' : 'no such directory'}); check the path. Nothing was created.`,
    );
}

export function readVersion(root: string): string | null {
  const path = join(root, VERSION_FILE);
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : null;
}

export function writeVersion(root: string, version: string): void {
  writeFileAtomic(join(root, VERSION_FILE), version + '\n');
}

/** Read the instance uid, creating it on first start. */
export function ensureInstanceUid(root: string): string {
  const path = join(root, INSTANCE_UID_FILE);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const uid = randomUUID();
  writeFileAtomic(path, uid);
  return uid;
}

export function ensureDirectories(paths: DatabasePaths): void {
  for (const dir of [paths.root, paths.tasks, paths.auth, paths.indexes, paths.updateFiles]) mkdirSync(dir, { recursive: true });
}
