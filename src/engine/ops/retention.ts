/**
 * `--keep N`: which backup files may be deleted. Only files this tool wrote for the same
 * database, and only once the new file is proven a real backup of a database that holds data:
 *
 * - the new archive is read from end to end (a truncated or corrupt file fails here, not on the
 *   day it is needed), and must hold at least one index;
 * - each file this tool keeps is recorded in a ledger beside the files (`.search-backups.json`)
 *   with the instance uid found inside the archive; files not in the ledger (dumps made by
 *   `POST /dumps`, by Meilisearch, by another database) are never touched.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { list as tarList } from 'tar';
import { SearchError } from '../errors.js';
import { writeFileAtomic } from '../store/database-dir.js';

export type BackupKind = 'dump' | 'snapshot';

export const LEDGER_FILE = '.search-backups.json';

export interface BackupContents {
  instanceUid: string | null;
  indexes: number;
}

/** The file that names the database in each kind of archive, and the entry that marks one index. */
const LAYOUT: Record<BackupKind, { marker: string; instanceUid: string; index: RegExp }> = {
  dump: { marker: 'metadata.json', instanceUid: 'instance_uid.uuid', index: /^(?:\.\/)?indexes\/[^/]+\/metadata\.json$/ },
  snapshot: { marker: 'VERSION', instanceUid: 'instance-uid', index: /^(?:\.\/)?indexes\/[^/]+\/data\.mdb$/ },
};

/** Read the whole archive; throws when it is not a complete archive of `kind`. */
export async function inspectBackup(kind: BackupKind, file: string): Promise<BackupContents> {
  const layout = LAYOUT[kind];
  let instanceUid: string | null = null;
  let marker = false;
  let indexes = 0;
  try {
    await tarList({
      file,
      strict: true,
      onReadEntry: (entry) => {
        const path = entry.path.replace(/^\.\//, '');
        if (path === layout.marker) marker = true;
        if (layout.index.test(path)) indexes++;
        if (path === layout.instanceUid) {
          const chunks: Buffer[] = [];
          entry.on('data', (chunk: Buffer) => chunks.push(chunk));
          entry.on('end', () => (instanceUid = Buffer.concat(chunks).toString('utf8').trim() || null));
        }
      },
    });
  } catch (error) {
    throw new SearchError('invalid_backup', `\`${file}\` is not a complete ${kind} archive: ${(error as Error).message}`, { cause: error });
  }
  if (!marker) throw new SearchError('invalid_backup', `\`${file}\` holds no ${layout.marker}: it is not a ${kind}.`);
  return { instanceUid, indexes };
}

interface LedgerEntry {
  name: string;
  kind: BackupKind;
  instanceUid: string;
  createdAt: string;
}

function readLedger(dir: string): LedgerEntry[] {
  const path = join(dir, LEDGER_FILE);
  if (!existsSync(path)) return [];
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { files?: LedgerEntry[] };
    return Array.isArray(parsed.files) ? parsed.files : [];
  } catch {
    // an unreadable ledger only means no file is known: nothing gets deleted
    return [];
  }
}

export interface Retention {
  removed: string[];
  /** Why nothing was removed, when the new file does not allow it. */
  skipped: string | null;
}

/**
 * Record `file` (the new backup) and delete the older backups of the same database beyond the
 * `keep` newest. Throws `invalid_backup` (deleting nothing) when the new file is not a backup.
 */
export async function keepNewest(kind: BackupKind, file: string, keep: number): Promise<Retention> {
  const contents = await inspectBackup(kind, file);
  if (!contents.instanceUid) return { removed: [], skipped: `the new ${kind} names no database (no instance uid): nothing removed` };
  const dir = dirname(file);
  const name = basename(file);
  const ledger = readLedger(dir).filter((e) => e.name !== name && existsSync(join(dir, e.name)));
  ledger.push({ name, kind, instanceUid: contents.instanceUid, createdAt: new Date().toISOString() });
  const removed: string[] = [];
  let skipped: string | null = null;
  if (contents.indexes === 0) {
    skipped = `the new ${kind} holds no index: nothing removed`;
  } else {
    const same = ledger
      .filter((e) => e.kind === kind && e.instanceUid === contents.instanceUid)
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    for (const old of same.slice(Math.max(keep, 1))) {
      rmSync(join(dir, old.name), { force: true });
      removed.push(join(dir, old.name));
    }
  }
  const gone = new Set(removed.map((p) => basename(p)));
  writeFileAtomic(join(dir, LEDGER_FILE), JSON.stringify({ files: ledger.filter((e) => !gone.has(e.name)) }, null, 2) + '\n');
  return { removed, skipped };
}
