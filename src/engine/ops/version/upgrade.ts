/**
 * Run and roll back a dumpless upgrade over open index environments.
 *
 * Each index is upgraded in its own write transaction, so searches keep reading committed data
 * throughout; every change is journaled first (see journal.ts). The new VERSION is written only
 * when every step succeeded, then the journal is dropped.
 */
import { join, relative } from 'node:path';
import type { Database } from 'lmdb';
import { SearchError } from '../../errors.js';
import { COMMIT_KEY, type IndexStore } from '../../index/store.js';
import { writeFileAtomic } from '../../store/database-dir.js';
import { upgradePath, type IndexUpgradeContext } from './history.js';
import { UpgradeJournal } from './journal.js';

export interface UpgradeIndexHandle {
  uid: string;
  store: IndexStore;
}

export interface UpgradeProgress {
  step: string;
  index: string;
  done: number;
  total: number;
}

export interface UpgradeRunOptions {
  dbPath: string;
  from: string;
  to: string;
  taskUid?: number | null;
  indexes: UpgradeIndexHandle[];
  signal?: AbortSignal;
  onProgress?: (progress: UpgradeProgress) => void;
  /** Test hook: fail after this many indexes were upgraded (fault injection). */
  failAfterIndexes?: number;
  /** Test hook: wait this long after each index, so a cancel or a kill can land midway. */
  delayPerIndexMs?: number;
}

export function upgradeCanceled(): SearchError {
  return new SearchError('invalid_state', 'The database upgrade was canceled.');
}

const rawViews = new WeakMap<IndexStore, Database<Buffer, string>>();

/** A raw (binary) view of an index's `main` database, to journal and restore exact bytes. */
function rawMain(store: IndexStore): Database<Buffer, string> {
  let view = rawViews.get(store);
  if (!view) {
    view = store.env.openDB({ name: 'main', encoding: 'binary' }) as unknown as Database<Buffer, string>;
    rawViews.set(store, view);
  }
  return view;
}

export async function runUpgrade(options: UpgradeRunOptions): Promise<void> {
  const path = upgradePath(options.from, options.to);
  if (!path) throw new SearchError('invalid_state', `No dumpless upgrade exists from ${options.from} to ${options.to}.`);
  const journal = UpgradeJournal.begin(options.dbPath, { from: options.from, to: options.to, taskUid: options.taskUid ?? null });
  const checkpoint = () => {
    if (options.signal?.aborted) throw upgradeCanceled();
  };
  const total = path.length * options.indexes.length;
  let done = 0;
  for (const step of path) {
    for (const { uid, store } of options.indexes) {
      checkpoint();
      const raw = rawMain(store);
      const env = relative(options.dbPath, store.path);
      const ctx: IndexUpgradeContext = {
        uid,
        store,
        checkpoint,
        putMain(key, value) {
          const previous = raw.getBinary(key);
          journal.record({ env, db: 'main', key, previous: previous ? Buffer.from(previous).toString('base64') : null });
          store.main.putSync(key, value);
        },
        fillsNewDatabase(name) {
          // The root database lists the named ones.
          const existed = [...store.env.getKeys()].includes(name);
          journal.record({ env, db: name, key: '', previous: null, newDatabase: true, existed });
        },
      };
      // the write counts itself (IndexStore.write): journal the count too, so that a rollback is exact
      const commit = raw.getBinary(COMMIT_KEY);
      journal.record({ env, db: 'main', key: COMMIT_KEY, previous: commit ? Buffer.from(commit).toString('base64') : null });
      store.write(() => step.upgradeIndex(ctx));
      done++;
      options.onProgress?.({ step: step.title, index: uid, done, total });
      if (options.failAfterIndexes !== undefined && done >= options.failAfterIndexes)
        throw new SearchError('internal', `Injected fault after ${done} upgraded index(es).`);
      if (options.delayPerIndexMs) await new Promise((r) => setTimeout(r, options.delayPerIndexMs));
      else await new Promise((r) => setImmediate(r)); // let searches and cancel requests in
    }
  }
  checkpoint();
  writeFileAtomic(join(options.dbPath, 'VERSION'), options.to + '\n');
  journal.remove();
  // Committed: what only the old format read can go (a crash before this leaves it unused).
  for (const step of path) {
    if (!step.finalizeIndex) continue;
    for (const { store } of options.indexes) store.write(() => step.finalizeIndex!(store));
  }
}

/**
 * Put back every journaled value and the original VERSION file, then drop the journal.
 * `storeAt` gives the open store of an environment path relative to the database root.
 * Returns the version restored, or null when there was nothing to roll back.
 */
export function rollbackUpgrade(dbPath: string, storeAt: (env: string) => IndexStore | undefined): string | null {
  const journal = UpgradeJournal.open(dbPath);
  if (!journal) return null;
  const state = journal.state();
  const entries = journal.entries();
  const byEnv = new Map<string, typeof entries>();
  for (const entry of entries) {
    const list = byEnv.get(entry.env) ?? [];
    list.push(entry);
    byEnv.set(entry.env, list);
  }
  for (const [env, list] of byEnv) {
    const store = storeAt(env);
    if (!store) throw new SearchError('invalid_state', `Cannot roll back the upgrade: the environment \`${env}\` is not available.`);
    const raw = rawMain(store);
    store.write(() => {
      // newest first, so that the oldest pre-image of a key is the one left in place
      for (const entry of [...list].reverse()) {
        if (entry.newDatabase) {
          const db = store.openDB(entry.db, { encoding: 'binary' });
          if (entry.existed) db.clearSync();
          else db.dropSync();
        }
        else if (entry.previous === null) raw.removeSync(entry.key);
        else raw.putSync(entry.key, Buffer.from(entry.previous, 'base64'));
      }
    });
    store.invalidateCaches();
  }
  writeFileAtomic(join(dbPath, 'VERSION'), Buffer.from(state.versionFile, 'base64'));
  journal.remove();
  return state.from;
}
