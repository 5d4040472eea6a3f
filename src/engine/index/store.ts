/**
 * One index's LMDB environment (`indexes/<uuid>/`) and its core databases.
 *
 * Layout:
 *   main          string -> any      primaryKey, settings, createdAt, updatedAt, nextDocid,
 *                                    docids (roaring, portable), fieldDistribution, lastTaskUid,
 *                                    commitSeq (write transactions so far, see `sync`)
 *   documents     docid -> doc       msgpack with shared structures, so field names are not
 *                                    repeated per document (iterate with `documentEntries`)
 *   external-ids  string -> u32      external (primary key) id -> internal docid
 *
 * Extensions (keyword, facets, geo, vectors) open their own named databases in the same
 * environment through `openDB`, so that one write transaction covers all of them.
 *
 * The environment writes its pages with `pwrite`, not through a writable memory map
 * (MDB_WRITEMAP), except in a write side that is a process of its own (writable-map.ts). With the
 * writable map, a data file sized to the map is sparse, and the first write into a hole of it on a
 * full filesystem raises SIGBUS: in the serving process that would take the server down in the
 * middle of a batch. With pwrite a full disk fails the commit with an error, the transaction
 * aborts whole, and the task fails with `no_space_left_on_device` (see store/disk-space.ts). The
 * cost: a batch's dirty pages are private copies until it commits (migrating 200k vectors in
 * 30k-document batches, the writable map saved 150-250 MB of them); batches are bounded by
 * `--max-indexing-memory`. Indexing the 36,273 movies in 10,000-document payloads, pwrite ran at
 * 0.93-0.94x the docs/s of the writable map with the same peak anonymous memory (476-482 vs
 * 461-488 MiB; same run, load 17 on 2 cores). Under a memory limit the private copies cost far
 * more (writable-map.ts), which is why the write process uses the map, with the space it writes
 * into allocated on disk before each transaction.
 *
 * The map starts at INITIAL_MAP_BYTES rather than lmdb's 128 KiB: lmdb grows a full map by
 * mapping the file again and keeps every earlier mapping (buffers handed out may point into
 * them), so the pages touched before each growth stayed resident a second time. Indexing 200k
 * documents grew the map about a dozen times and counted 929 MB of data file pages in RSS for a
 * 621 MB file.
 */
import { join } from 'node:path';
import { open, type Database, type RootDatabase, type RootDatabaseOptionsWithPath } from 'lmdb';
import { readAhead } from './read-ahead.js';
import { SpaceReservation, writableMap } from './writable-map.js';
import roaring from 'roaring';
import type { Settings } from '../settings/types.js';
import { defaultSettings } from '../settings/types.js';
import type { Document } from '../types.js';
import { MAX_ID_BYTES } from './documents.js';

const { RoaringBitmap32 } = roaring;
export type Bitmap = InstanceType<typeof RoaringBitmap32>;
export { RoaringBitmap32 };

/** Initial size of the memory map (and, with the writable map, of the sparse data file); it grows past it when needed. */
export const INITIAL_MAP_BYTES = 2 ** 30;

/** The key of `main` that counts this environment's write transactions. */
export const COMMIT_KEY = 'commitSeq';

/**
 * Bumped when this thread learns that another thread committed a batch (see Engine): a store
 * whose caches predate the last bump checks its commit count before using them. Reads through
 * the registry check it anyway (`sync`); this covers `Index` objects held across batches.
 */
let foreignCommits = 0;

export function noteForeignCommit(): void {
  foreignCommits++;
}

const APPEND = { append: true } as const;

/**
 * Puts a key expected to sort after every key of the database (inside a write transaction): LMDB
 * appends it to the last page without searching the tree, and splits full pages at their end, so
 * a fresh database's pages come out full (a bulk load's puts were a tenth of its indexing time).
 * A key that does not sort last after all (LMDB compares bytes, the batch sorted UTF-16 strings)
 * is refused by LMDB and put the ordinary way.
 */
export function appendPut<K extends string | number>(db: Database<any, K>, key: K, value: unknown): void {
  // lmdb's typings say void; inside a transaction it returns whether the put was done
  if (!(db.putSync(key, value, APPEND) as unknown as boolean)) db.putSync(key, value);
}

interface LmdbStat {
  pageSize?: number;
  treeBranchPageCount?: number;
  treeLeafPageCount?: number;
  overflowPages?: number;
}

function pageBytes(s: LmdbStat): number {
  return ((s.treeBranchPageCount ?? 0) + (s.treeLeafPageCount ?? 0) + (s.overflowPages ?? 0)) * (s.pageSize ?? 4096);
}

export interface IndexMeta {
  primaryKey: string | null;
  createdAt: string;
  updatedAt: string;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * lmdb-js opens an environment's root database inside a write transaction. Once, on a loaded
 * machine, a serving process opening an index that its write process (tasks/write-host.ts) was
 * writing got "No transaction to renew" from it (not reproduced in 12 quiet runs; the cause is
 * inside lmdb-js). Opening again a moment later is harmless, so that error is retried.
 */
const OPEN_ATTEMPTS = 3;
const OPEN_RETRY_MS = 20;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * How every index environment is opened (the compacted copy of one too, see compaction.ts);
 * `useWritemap` only where the space written into is reserved first (see IndexStore.write).
 */
export function openIndexEnvironment(path: string, useWritemap = false): RootDatabase {
  // lmdb-js reads `noReadAhead` (MDB_NORDAHEAD) but its typings omit it
  const options: RootDatabaseOptionsWithPath & { noReadAhead: boolean } = { path, maxDbs: 64, compression: false, useWritemap, mapSize: INITIAL_MAP_BYTES, noReadAhead: !readAhead() };
  for (let attempt = 1; ; attempt++) {
    try {
      return open(options);
    } catch (error) {
      if (attempt >= OPEN_ATTEMPTS || !/No transaction to renew/.test((error as Error).message)) throw error;
      Atomics.wait(PAUSE, 0, 0, OPEN_RETRY_MS);
    }
  }
}

/** The options of a named database that LMDB stores with it (its key order and duplicates). */
export interface DatabaseFlags {
  keyEncoding?: 'uint32' | 'binary' | 'ordered-binary';
  dupSort?: boolean;
}

export class IndexStore {
  readonly env: RootDatabase;
  readonly main: Database<any, string>;
  readonly documents: Database<Document, number>;
  readonly externalIds: Database<number, string>;
  private docidsCache: Bitmap | null = null;

  constructor(readonly path: string) {
    const mapped = writableMap();
    this.env = openIndexEnvironment(path, mapped);
    this.main = this.env.openDB({ name: 'main', encoding: 'msgpack' });
    this.documents = this.env.openDB({
      name: 'documents',
      encoding: 'msgpack',
      sharedStructuresKey: Symbol.for('structures'),
    });
    this.externalIds = this.env.openDB({ name: 'external-ids', encoding: 'msgpack' });
    this.databases.set('main', this.main).set('documents', this.documents).set('external-ids', this.externalIds);
    this.dataFile = join(path, 'data.mdb');
    this.reservation = mapped ? new SpaceReservation(this.dataFile) : null;
  }

  /** With the writable map: the disk space reserved past the data for the next transactions. */
  private readonly reservation: SpaceReservation | null;

  /** The LMDB data file of this index (its size on disk, for the stats). */
  readonly dataFile: string;

  openDB<V = any, K extends string | number | Buffer = string>(
    name: string,
    options: { keyEncoding?: 'uint32' | 'binary' | 'ordered-binary'; encoding?: 'msgpack' | 'json' | 'string' | 'binary' | 'ordered-binary'; dupSort?: boolean } = {},
  ): Database<V, K> {
    const db = this.env.openDB({ name, ...options }) as unknown as Database<V, K>;
    if (!this.databases.has(name)) {
      this.databases.set(name, db as unknown as Database);
      this.flags.set(name, { keyEncoding: options.keyEncoding, dupSort: options.dupSort });
    }
    return db;
  }

  private readonly flags = new Map<string, DatabaseFlags>([['main', {}], ['documents', {}], ['external-ids', {}]]);

  /** The flags a named database was opened with here; undefined for one this store never opened. */
  databaseFlags(name: string): DatabaseFlags | undefined {
    return this.flags.get(name);
  }

  /** Every named database this store opened, by name (for their sizes). */
  private readonly databases = new Map<string, Database>();

  /**
   * Bytes of pages each named database of the environment occupies (branch, leaf and overflow
   * pages, from LMDB's own counts): `internalDatabaseSizes` of the index stats.
   */
  databaseSizes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, db] of [...this.databases].sort(([a], [b]) => a.localeCompare(b))) out[name] = pageBytes(db.getStats() as LmdbStat);
    return out;
  }

  /**
   * Bytes of the data file holding live pages: every named database, the root and free-list
   * trees and the two meta pages. The rest of the file is pages LMDB freed and will reuse
   * (`usedDatabaseSize` leaves them out; a compaction gives them back to the filesystem).
   */
  usedBytes(): number {
    const env = this.env.getStats() as LmdbStat & { root?: LmdbStat; free?: LmdbStat };
    const pageSize = env.pageSize ?? 4096;
    let total = 2 * pageSize + pageBytes(env.root ?? env) + (env.free ? pageBytes(env.free) : 0);
    for (const bytes of Object.values(this.databaseSizes())) total += bytes;
    return total;
  }

  /**
   * Run `fn` in one synchronous write transaction; everything commits together or not at all.
   * Every transaction also counts itself in `main` (COMMIT_KEY), so that readers on other
   * threads know when the caches they built are older than the data (see `sync`).
   */
  write<T>(fn: () => T): T {
    let commit = this.seenCommit;
    if (this.reservation) {
      const stats = this.env.getStats() as { lastPageNumber?: number; pageSize?: number };
      this.reservation.ensure(((stats.lastPageNumber ?? 0) + 1) * (stats.pageSize ?? 4096));
    }
    try {
      const result = this.env.transactionSync(() => {
        commit = ((this.main.get(COMMIT_KEY) as number | undefined) ?? 0) + 1;
        this.main.putSync(COMMIT_KEY, commit);
        return fn();
      });
      // The caches this thread kept up to date inside the transaction are those of the commit.
      this.seenCommit = commit;
      return result;
    } catch (error) {
      this.docidsCache = null;
      throw error;
    } finally {
      // Read inside the transaction, the cache may hold what an aborted transaction wrote.
      this.settingsCache = null;
    }
  }

  /** The commit this thread's caches were built from (-1 before the first `sync`). */
  private seenCommit = -1;

  /**
   * Drop this thread's caches if another thread committed since they were built. Called at the
   * start of every read through the registry: the reads of one synchronous turn share one LMDB
   * snapshot, so the commit read here is the one the caches are then rebuilt from.
   */
  sync(): void {
    this.checkedAt = foreignCommits;
    const commit = (this.main.get(COMMIT_KEY) as number | undefined) ?? 0;
    if (commit === this.seenCommit) return;
    this.seenCommit = commit;
    this.settingsCache = null;
    this.docidsCache = null;
  }

  /** The commit this thread's caches were built from: search-side caches key themselves on it. */
  get commit(): number {
    this.fresh();
    return this.seenCommit;
  }

  private checkedAt = -1;

  /** `sync` unless nothing was committed elsewhere since the last one (an integer comparison). */
  private fresh(): void {
    if (this.checkedAt !== foreignCommits) this.sync();
  }

  async close(): Promise<void> {
    await this.env.close();
  }

  // --- metadata -------------------------------------------------------------------------------

  get primaryKey(): string | null {
    return (this.main.get('primaryKey') as string | undefined) ?? null;
  }

  setPrimaryKey(primaryKey: string | null): void {
    this.main.putSync('primaryKey', primaryKey);
  }

  /**
   * The decoded settings, shared by every reader until they change: every search reads them, and
   * decoding them each time took 5-7% of a typical search at 200k documents. Frozen, since shared.
   */
  private settingsCache: Settings | null = null;

  get settings(): Settings {
    this.fresh();
    return (this.settingsCache ??= deepFreeze({ ...defaultSettings(), ...((this.main.get('settings') as Partial<Settings> | undefined) ?? {}) }));
  }

  setSettings(settings: Settings): void {
    this.main.putSync('settings', settings);
    this.settingsCache = null;
  }

  get createdAt(): string {
    return this.main.get('createdAt') as string;
  }

  get updatedAt(): string {
    return this.main.get('updatedAt') as string;
  }

  touch(at: string, created = false): void {
    if (created) this.main.putSync('createdAt', at);
    this.main.putSync('updatedAt', at);
  }

  meta(): IndexMeta {
    return { primaryKey: this.primaryKey, createdAt: this.createdAt, updatedAt: this.updatedAt };
  }

  /** Highest task uid whose effects are in this environment: makes replay after a crash idempotent. */
  get lastTaskUid(): number {
    return (this.main.get('lastTaskUid') as number | undefined) ?? -1;
  }

  setLastTaskUid(uid: number): void {
    this.main.putSync('lastTaskUid', uid);
  }

  // --- documents ------------------------------------------------------------------------------

  /** All live docids. The returned bitmap is shared: clone before mutating. */
  docids(): Bitmap {
    this.fresh();
    if (!this.docidsCache) {
      const raw = this.main.get('docids') as Buffer | undefined;
      this.docidsCache = raw ? RoaringBitmap32.deserialize(raw, true) : new RoaringBitmap32();
    }
    return this.docidsCache;
  }

  setDocids(bitmap: Bitmap): void {
    this.main.putSync('docids', bitmap.serialize(true));
    this.docidsCache = bitmap;
  }

  /** Forget cached reads, e.g. after a transaction was aborted. */
  invalidateCaches(): void {
    this.docidsCache = null;
  }

  get documentCount(): number {
    return this.docids().size;
  }

  getDocument(docid: number): Document | undefined {
    return this.documents.get(docid);
  }

  /** Every stored document in docid order (the range skips the shared-structures entry). */
  documentEntries(): Iterable<{ key: number; value: Document }> {
    return this.documents.getRange({ start: 0, end: 2 ** 32 }) as Iterable<{ key: number; value: Document }>;
  }

  docidOf(externalId: string): number | undefined {
    // No stored id is longer, and a longer key is more than LMDB can even look up.
    if (Buffer.byteLength(externalId) > MAX_ID_BYTES) return undefined;
    return this.externalIds.get(externalId);
  }

  allocateDocid(): number {
    const next = (this.main.get('nextDocid') as number | undefined) ?? 0;
    this.main.putSync('nextDocid', next + 1);
    return next;
  }

  get fieldDistribution(): Record<string, number> {
    return (this.main.get('fieldDistribution') as Record<string, number> | undefined) ?? {};
  }

  setFieldDistribution(distribution: Record<string, number>): void {
    this.main.putSync('fieldDistribution', distribution);
  }
}
