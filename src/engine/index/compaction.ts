/**
 * Compaction of one index's LMDB environment (`POST /indexes/:uid/compact`, an
 * `indexCompaction` task on the write thread).
 *
 * LMDB never gives freed pages back to the filesystem and, after many writes, keeps the live
 * ones scattered through the file. The compacted copy is a fresh environment written by our own
 * code: every named database, key by key in sorted order (appended, so each page is filled),
 * values copied as raw bytes, in bounded write transactions. lmdb 3.5.6's own compacting copy
 * (`env.backup(path, true)`) is not used: the environments it wrote failed an LMDB assertion
 * (`mdb_page_alloc: key.mv_size > 0`) on their first write once an index held large posting
 * lists (see the snapshot history).
 *
 * The copy goes into a new directory; the registry then points the index uid at it in one
 * task-store write and deletes the old directory. A crash before that write leaves the old
 * environment mapped and the copy an orphan (removed at the next start); after it, the reverse.
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, RootDatabase, Transaction } from 'lmdb';
import { SearchError } from '../errors.js';
import { holdInsideCompaction } from '../tasks/fault-injection.js';
import { openIndexEnvironment, type IndexStore } from './store.js';

export interface CompactionOptions {
  /** Entries per write transaction of the copy. */
  batchEntries?: number;
  /** Bytes of values per write transaction of the copy. */
  batchBytes?: number;
}

/** Writes the compacted copy of `store` into the new directory `target`. */
export async function writeCompactedCopy(store: IndexStore, target: string, options: CompactionOptions = {}): Promise<void> {
  const batchEntries = options.batchEntries ?? 10_000;
  const batchBytes = options.batchBytes ?? 16 * 1024 * 1024;
  mkdirSync(target, { recursive: false });
  const out = openIndexEnvironment(target);
  try {
    for (const name of databaseNames(store.env)) {
      const flags = store.databaseFlags(name);
      // every database of an index is opened by its store or an extension; one that is not
      // cannot be copied with the right key order, so the index is left as it is
      if (!flags) throw new SearchError('invalid_state', `The index cannot be compacted: its database \`${name}\` is unknown to this version.`);
      const raw = { name, keyEncoding: flags.keyEncoding === 'uint32' ? ('uint32' as const) : ('binary' as const), encoding: 'binary' as const, dupSort: flags.dupSort ?? false };
      const source = store.env.openDB(raw) as unknown as Database<Buffer, Buffer | number>;
      const copy = out.openDB(raw) as unknown as Database<Buffer, Buffer | number>;
      copyDatabase(source, copy, out, raw.dupSort, batchEntries, batchBytes);
      const expected = (source.getStats() as { entryCount: number }).entryCount;
      const written = (copy.getStats() as { entryCount: number }).entryCount;
      if (expected !== written) throw new SearchError('internal', `Compaction copied ${written} of the ${expected} entries of \`${name}\`; the index is left as it was.`);
      holdInsideCompaction();
    }
  } finally {
    await out.close();
  }
}

/** The named databases of an environment: the keys of its root database. */
export function databaseNames(env: RootDatabase): string[] {
  const names: string[] = [];
  for (const key of env.getKeys()) if (typeof key === 'string') names.push(key);
  return names;
}

/**
 * Copy one database key by key into `copy` (a database of `out`, empty). `transaction`: a read
 * transaction to copy from (a snapshot of a live environment); by default the thread's reads.
 */
export function copyDatabase(
  source: Database<Buffer, Buffer | number>,
  copy: Database<Buffer, Buffer | number>,
  out: RootDatabase,
  dupSort: boolean,
  batchEntries: number,
  batchBytes: number,
  transaction?: Transaction,
): void {
  let batch: Array<[Buffer | number, Buffer]> = [];
  let bytes = 0;
  let last: Buffer | number | undefined;
  const flush = () => {
    if (batch.length === 0) return;
    const entries = batch;
    batch = [];
    bytes = 0;
    out.transactionSync(() => {
      for (const [key, value] of entries) {
        const sameKey = last !== undefined && (typeof key === 'number' ? key === last : Buffer.isBuffer(last) && key.equals(last));
        // keys (and duplicates) come in the database's order: appending fills each page
        copy.putSync(key, value, dupSort && sameKey ? { appendDup: true } : { append: true });
        last = key;
      }
    });
  };
  for (const { key, value } of source.getRange(transaction ? { transaction } : {})) {
    const k = typeof key === 'number' ? key : Buffer.from(key);
    const v = Buffer.from(value);
    batch.push([k, v]);
    bytes += v.length;
    if (batch.length >= batchEntries || bytes >= batchBytes) flush();
  }
  flush();
}

/** Bytes the data file of an environment directory occupies on disk. */
export function environmentBytes(dir: string): number {
  try {
    const stat = statSync(join(dir, 'data.mdb'));
    return Math.min(stat.size, stat.blocks * 512);
  } catch {
    return 0;
  }
}
