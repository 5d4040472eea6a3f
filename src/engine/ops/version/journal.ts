/**
 * The undo journal of a dumpless upgrade (`<db>/upgrade-journal/`).
 *
 * Before an upgrade step changes a value it appends the value's previous bytes (or its absence)
 * here and fsyncs, then writes the change in LMDB. So whatever happens next (failure, cancel,
 * kill -9) the journal can put back every byte the upgrade touched, and the original VERSION
 * file, which is what "rollback restores the exact pre-upgrade state" means. The journal is
 * removed only after the new VERSION is written.
 */
import { appendFileSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../store/database-dir.js';

export const JOURNAL_DIR = 'upgrade-journal';

export interface JournalState {
  from: string;
  to: string;
  startedAt: string;
  taskUid: number | null;
  /** The exact bytes of the VERSION file before the upgrade, base64. */
  versionFile: string;
}

export interface UndoEntry {
  /** The environment's directory, relative to the database root, e.g. `indexes/<uuid>`. */
  env: string;
  db: string;
  key: string;
  /** Previous raw value, base64; null when the key did not exist. */
  previous: string | null;
  /**
   * The whole database `db` held nothing before the upgrade (`key` is unused): rollback empties
   * it, or drops it when it did not exist (`existed` false).
   */
  newDatabase?: true;
  existed?: boolean;
}

export class UpgradeJournal {
  private constructor(readonly dir: string) {}

  static path(dbPath: string): string {
    return join(dbPath, JOURNAL_DIR);
  }

  static exists(dbPath: string): boolean {
    return existsSync(join(UpgradeJournal.path(dbPath), 'state.json'));
  }

  static begin(dbPath: string, state: Omit<JournalState, 'versionFile' | 'startedAt'>): UpgradeJournal {
    const dir = UpgradeJournal.path(dbPath);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const versionFile = readFileSync(join(dbPath, 'VERSION')).toString('base64');
    const full: JournalState = { ...state, startedAt: new Date().toISOString(), versionFile };
    writeFileAtomic(join(dir, 'undo.jsonl'), '');
    // state.json last: its presence means "the journal is complete enough to roll back from"
    writeFileAtomic(join(dir, 'state.json'), JSON.stringify(full));
    return new UpgradeJournal(dir);
  }

  static open(dbPath: string): UpgradeJournal | null {
    return UpgradeJournal.exists(dbPath) ? new UpgradeJournal(UpgradeJournal.path(dbPath)) : null;
  }

  state(): JournalState {
    return JSON.parse(readFileSync(join(this.dir, 'state.json'), 'utf8')) as JournalState;
  }

  record(entry: UndoEntry): void {
    const path = join(this.dir, 'undo.jsonl');
    appendFileSync(path, JSON.stringify(entry) + '\n');
    const fd = openSync(path, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Entries in the order they were recorded; a torn last line (kill mid-append) is ignored. */
  entries(): UndoEntry[] {
    const text = readFileSync(join(this.dir, 'undo.jsonl'), 'utf8');
    const out: UndoEntry[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        out.push(JSON.parse(line) as UndoEntry);
      } catch {
        break;
      }
    }
    return out;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
