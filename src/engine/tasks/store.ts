/**
 * The persistent task queue (`tasks/` LMDB environment).
 *
 * Layout:
 *   tasks          u32 uid -> TaskRecord (the public task plus the payload needed to process it)
 *   batches        u32 uid -> Batch
 *   meta           string  -> nextTaskUid, nextBatchUid, indexLayout, indexStamp
 *   by-status      status  -> roaring bitmap of task uids
 *   by-type        type    -> bitmap
 *   by-index       index   -> bitmap
 *   by-canceled-by u32 task uid of a cancelation -> bitmap of the tasks it canceled
 *   enqueued-at, started-at, finished-at
 *                  [epoch ms, task uid] -> batch uid of the task (or null): ordered, so a date
 *                  filter is one range read, for tasks (keys) and for batches (values)
 *   batch-tasks    u32 batch uid -> bitmap of its task uids
 *   batch-index    `all`, `status:<s>`, `type:<t>`, `index:<uid>` -> bitmap of batch uids (from
 *                  each batch's stats, as the reference filters batches)
 *   index-mapping  index uid -> { uuid }
 *
 * Every filter of `GET /tasks` and `GET /batches` is a set operation over these, and a page is
 * read by rank from the resulting bitmap, so listing costs the page, not the history. The indexes
 * change in the same write transaction as the records they describe: a crash leaves both or
 * neither. Within one `write`, each bitmap is decoded once and encoded once at commit, so a batch
 * of a thousand tasks does not re-encode the history's bitmaps a thousand times.
 *
 * A database written before these indexes (or since by a binary that did not keep them) is
 * indexed again at open by the writing side: `meta.indexStamp` records the uid counters the
 * indexes were kept through, and any other writer moves the counters without it.
 */
import { open, type Database, type RootDatabase } from 'lmdb';
import roaring from 'roaring';
import type { Batch, Task, TaskFilter, TaskStatus, TaskType } from '../types.js';
import type { CursorQuery } from './paging.js';
import type { TaskPayload } from './payload.js';

const MAX_INDEX_UID_BYTES = 512;

const { RoaringBitmap32 } = roaring;
export type Bitmap = InstanceType<typeof RoaringBitmap32>;

export interface TaskRecord extends Task {
  payload: TaskPayload;
}

export interface IndexMapping {
  uuid: string;
}

/** Which tasks a request may see (an API key or tenant token restricted to some indexes). */
export interface TaskScope {
  canAccessIndex(indexUid: string): boolean;
  /** For tasks on no index (an index swap names its indexes in its details). */
  canSeeTask(task: Task): boolean;
}

/** Version of the secondary index layout; a database without it (or stale) is indexed at open. */
const INDEX_LAYOUT = 2;

type DateField = 'enqueuedAt' | 'startedAt' | 'finishedAt';
const DATE_FIELDS: readonly DateField[] = ['enqueuedAt', 'startedAt', 'finishedAt'];
type DateKey = [number, number];
type BitmapKey = string | number;
type BitmapDb = Database<Buffer, BitmapKey>;

const FILTER_DATES: ReadonlyArray<[DateField, keyof TaskFilter, keyof TaskFilter]> = [
  ['enqueuedAt', 'beforeEnqueuedAt', 'afterEnqueuedAt'],
  ['startedAt', 'beforeStartedAt', 'afterStartedAt'],
  ['finishedAt', 'beforeFinishedAt', 'afterFinishedAt'],
];

const MAX_UID = 0xffffffff;

/** Index uids whose uuid a read-only store keeps (see `cacheIndexMapping`). */
const MAX_CACHED_UUIDS = 1024;

export class TaskStore {
  readonly env: RootDatabase;
  private readonly tasks: Database<TaskRecord, number>;
  private readonly batches: Database<Batch, number>;
  private readonly meta: Database<any, string>;
  private readonly byStatus: BitmapDb;
  private readonly byType: BitmapDb;
  private readonly byIndex: BitmapDb;
  private readonly byCanceledBy: BitmapDb;
  private readonly byDate: Record<DateField, Database<number | null, DateKey>>;
  private readonly batchTasks: BitmapDb;
  private readonly batchIndex: BitmapDb;
  readonly indexMapping: Database<IndexMapping, string>;
  /** Bitmaps changed by the write transaction in progress, encoded once at its end. */
  private pending: Map<BitmapDb, Map<BitmapKey, Bitmap>> | null = null;

  constructor(path: string) {
    this.env = open({ path, maxDbs: 24, compression: false });
    this.tasks = this.env.openDB({ name: 'tasks', keyEncoding: 'uint32', encoding: 'msgpack' });
    this.batches = this.env.openDB({ name: 'batches', keyEncoding: 'uint32', encoding: 'msgpack' });
    this.meta = this.env.openDB({ name: 'meta', encoding: 'msgpack' });
    this.byStatus = this.env.openDB({ name: 'by-status', encoding: 'binary' });
    this.byType = this.env.openDB({ name: 'by-type', encoding: 'binary' });
    this.byIndex = this.env.openDB({ name: 'by-index', encoding: 'binary' });
    this.byCanceledBy = this.env.openDB({ name: 'by-canceled-by', keyEncoding: 'uint32', encoding: 'binary' });
    this.byDate = {
      enqueuedAt: this.env.openDB({ name: 'enqueued-at', encoding: 'msgpack' }),
      startedAt: this.env.openDB({ name: 'started-at', encoding: 'msgpack' }),
      finishedAt: this.env.openDB({ name: 'finished-at', encoding: 'msgpack' }),
    };
    this.batchTasks = this.env.openDB({ name: 'batch-tasks', keyEncoding: 'uint32', encoding: 'binary' });
    this.batchIndex = this.env.openDB({ name: 'batch-index', encoding: 'binary' });
    this.indexMapping = this.env.openDB({ name: 'index-mapping', encoding: 'msgpack' });
  }

  async close(): Promise<void> {
    await this.env.close();
  }

  /** Wait until every committed write is on disk. */
  async flushed(): Promise<void> {
    await this.env.flushed;
  }

  /** Read what other threads committed since this thread's last read (a wake-up announces a new task). */
  renewReads(): void {
    this.env.resetReadTxn();
    this.uuids?.clear();
  }

  /**
   * Index uid -> uuid as of the last `renewReads`, for a store this thread never writes (a search
   * thread's): every search looks its index up, and decoding the mapping record took 8% of a
   * `star wars` search. Null (no cache) where this thread writes the mapping.
   */
  private uuids: Map<string, string | undefined> | null = null;

  /** Keep index uuids between `renewReads` calls: only for a store this thread never writes. */
  cacheIndexMapping(): void {
    this.uuids ??= new Map();
  }

  /** One write transaction; nested calls join the outer one. */
  write<T>(fn: () => T): T {
    if (this.pending) return fn();
    return this.env.transactionSync(() => {
      this.pending = new Map();
      try {
        const result = fn();
        this.flushBitmaps();
        return result;
      } finally {
        this.pending = null;
      }
    });
  }

  // --- the secondary indexes at open ------------------------------------------------------------

  /**
   * Index every task and batch again when the indexes are missing or were not kept by the last
   * writer (call from the side that writes, before it serves). Returns whether it did.
   */
  ensureIndexes(): boolean {
    if (this.meta.get('indexLayout') === INDEX_LAYOUT && this.meta.get('indexStamp') === this.counters()) return false;
    this.write(() => {
      for (const db of this.indexDatabases()) db.clearSync();
      for (const { value } of this.tasks.getRange()) this.reindex(undefined, value);
      for (const { value } of this.batches.getRange()) this.reindexBatch(undefined, value);
      this.meta.putSync('indexLayout', INDEX_LAYOUT);
      this.meta.putSync('indexStamp', this.counters());
    });
    return true;
  }

  private indexDatabases(): Array<Database<any, any>> {
    return [this.byStatus, this.byType, this.byIndex, this.byCanceledBy, ...Object.values(this.byDate), this.batchTasks, this.batchIndex];
  }

  private counters(): string {
    return `${this.nextTaskUid()}:${(this.meta.get('nextBatchUid') as number | undefined) ?? 0}`;
  }

  // --- uids -----------------------------------------------------------------------------------

  nextTaskUid(): number {
    return (this.meta.get('nextTaskUid') as number | undefined) ?? 0;
  }

  private takeUid(key: 'nextTaskUid' | 'nextBatchUid'): number {
    const uid = (this.meta.get(key) as number | undefined) ?? 0;
    this.meta.putSync(key, uid + 1);
    this.meta.putSync('indexStamp', this.counters());
    return uid;
  }

  // --- tasks ----------------------------------------------------------------------------------

  /** Register a new task. */
  insert(record: Omit<TaskRecord, 'uid'>): TaskRecord {
    return this.write(() => {
      const full = { ...record, uid: this.takeUid('nextTaskUid') } as TaskRecord;
      this.tasks.putSync(full.uid, full);
      this.reindex(undefined, full);
      return full;
    });
  }

  get(uid: number): TaskRecord | undefined {
    return this.tasks.get(uid);
  }

  /** Replace a task record, keeping the indexes right. */
  update(record: TaskRecord): void {
    this.write(() => {
      const previous = this.tasks.get(record.uid);
      this.tasks.putSync(record.uid, record);
      this.reindex(previous, record);
    });
  }

  /** Delete a task; its batch goes too when this was the last of its tasks, as in the reference. */
  delete(uid: number): void {
    this.write(() => {
      const previous = this.tasks.get(uid);
      if (!previous) return;
      this.reindex(previous, undefined);
      this.tasks.removeSync(uid);
      if (previous.batchUid !== null && this.mutable(this.batchTasks, previous.batchUid).isEmpty) this.deleteBatch(previous.batchUid);
    });
  }

  uidsWithStatus(status: TaskStatus): Bitmap {
    return this.bitmap(this.byStatus, status);
  }

  /** Enqueued tasks of these types, in uid order. */
  enqueuedOfType(types: readonly TaskType[]): Bitmap {
    return RoaringBitmap32.and(this.uidsWithStatus('enqueued'), this.union(this.byType, types));
  }

  /** Enqueued tasks of one index, in uid order. */
  enqueuedOnIndex(indexUid: string): Bitmap {
    return RoaringBitmap32.and(this.uidsWithStatus('enqueued'), this.bitmap(this.byIndex, indexUid));
  }

  allUids(): Bitmap {
    const all = new RoaringBitmap32();
    for (const key of this.byStatus.getKeys()) all.orInPlace(this.bitmap(this.byStatus, key));
    return all;
  }

  /** Task uids matching a filter, as a bitmap: every filter is an index lookup. */
  match(filter: TaskFilter): Bitmap {
    const parts: Bitmap[] = [];
    if (filter.statuses) parts.push(this.union(this.byStatus, filter.statuses));
    if (filter.types) parts.push(this.union(this.byType, filter.types));
    if (filter.indexUids) parts.push(this.union(this.byIndex, filter.indexUids));
    if (filter.uids) parts.push(existingUids(this.tasks, filter.uids));
    if (filter.canceledBy) parts.push(this.union(this.byCanceledBy, validUids(filter.canceledBy)));
    if (filter.batchUids) parts.push(this.union(this.batchTasks, validUids(filter.batchUids)));
    for (const [field, before, after] of FILTER_DATES) {
      if (filter[before] || filter[after]) parts.push(this.dated(field, filter[before] as Date | undefined, filter[after] as Date | undefined, 'tasks'));
    }
    return intersection(parts) ?? this.allUids();
  }

  /** A page of every task (no filter), read from the record keys without building a set. */
  pageAllTasks(query: CursorQuery): KeyPage {
    return pageOfKeys(this.tasks, query);
  }

  /** The tasks a scoped request may see: those of its indexes, and index swaps it may see whole. */
  visibleTasks(scope: TaskScope): Bitmap {
    const onIndexes: Bitmap[] = [];
    for (const key of this.byIndex.getKeys()) if (scope.canAccessIndex(key as string)) onIndexes.push(this.bitmap(this.byIndex, key));
    const visible = RoaringBitmap32.orMany(onIndexes);
    for (const uid of this.bitmap(this.byType, 'indexSwap')) {
      const task = this.tasks.get(uid);
      if (task && task.indexUid === null && scope.canSeeTask(task)) visible.add(uid);
    }
    return visible;
  }

  /**
   * The tasks registered before `beforeUid` follow their index to its new uid, as the reference
   * does on a swap or a rename (call inside `write`). Swaps list both directions.
   */
  moveIndexTasks(beforeUid: number, moves: ReadonlyArray<readonly [from: string, to: string]>): void {
    // every move planned before any is made: a swap's two directions read the indexes as they were
    const planned = moves.map(([from, to]) => ({ to, uids: this.bitmap(this.byIndex, from).toArray().filter((uid) => uid < beforeUid) }));
    for (const { to, uids } of planned)
      for (const uid of uids) {
        const record = this.tasks.get(uid);
        if (!record) continue;
        const next = { ...record, indexUid: to };
        this.reindex(record, next);
        this.tasks.putSync(uid, next);
      }
  }

  // --- batches --------------------------------------------------------------------------------

  newBatchUid(): number {
    return this.takeUid('nextBatchUid');
  }

  putBatch(batch: Batch): void {
    this.write(() => {
      const previous = this.batches.get(batch.uid);
      this.batches.putSync(batch.uid, batch);
      this.reindexBatch(previous, batch);
    });
  }

  getBatch(uid: number): Batch | undefined {
    return this.batches.get(uid);
  }

  deleteBatch(uid: number): void {
    this.write(() => {
      const previous = this.batches.get(uid);
      if (!previous) return;
      this.reindexBatch(previous, undefined);
      this.batches.removeSync(uid);
    });
  }

  batchUids(): number[] {
    return [...this.batches.getKeys()] as number[];
  }

  /** A page of every batch (no filter), read from the record keys. */
  pageAllBatches(query: CursorQuery): KeyPage {
    return pageOfKeys(this.batches, query);
  }

  /**
   * Batch uids matching a filter, as the reference reads it: each filter selects batches on its
   * own (statuses, types and indexes from the batch's stats; task uids, cancelations and dates
   * through the tasks they name), and a batch must be selected by all of them.
   */
  matchBatches(filter: TaskFilter): Bitmap {
    const parts: Bitmap[] = [];
    const prefixed = (prefix: string, keys: readonly string[]) => this.union(this.batchIndex, keys.map((k) => `${prefix}:${k}`));
    if (filter.statuses) parts.push(prefixed('status', filter.statuses));
    if (filter.types) parts.push(prefixed('type', filter.types));
    if (filter.indexUids) parts.push(prefixed('index', filter.indexUids));
    if (filter.batchUids) parts.push(existingUids(this.batches, filter.batchUids));
    if (filter.uids) parts.push(this.batchesOf(existingUids(this.tasks, filter.uids)));
    if (filter.canceledBy) parts.push(this.batchesOf(this.union(this.byCanceledBy, validUids(filter.canceledBy))));
    for (const [field, before, after] of FILTER_DATES) {
      if (filter[before] || filter[after]) parts.push(this.dated(field, filter[before] as Date | undefined, filter[after] as Date | undefined, 'batches'));
    }
    return intersection(parts) ?? this.bitmap(this.batchIndex, 'all');
  }

  /** The batches a scoped request may see: those whose every index it may access (none on no index). */
  visibleBatches(scope: TaskScope): Bitmap {
    const allowed: Bitmap[] = [];
    const denied: Bitmap[] = [];
    for (const key of this.batchIndex.getKeys({ start: 'index:', end: 'index;' })) {
      const uid = (key as string).slice('index:'.length);
      (scope.canAccessIndex(uid) ? allowed : denied).push(this.bitmap(this.batchIndex, key));
    }
    return RoaringBitmap32.andNot(RoaringBitmap32.orMany(allowed), RoaringBitmap32.orMany(denied));
  }

  private batchesOf(taskUids: Bitmap): Bitmap {
    const out = new RoaringBitmap32();
    for (const uid of taskUids) {
      const batchUid = this.tasks.get(uid)?.batchUid;
      if (batchUid !== null && batchUid !== undefined) out.add(batchUid);
    }
    return out;
  }

  // --- index mapping --------------------------------------------------------------------------

  indexUuid(indexUid: string): string | undefined {
    // No index uid is longer (see validateIndexUid), and a longer key is more than LMDB can look up.
    if (Buffer.byteLength(indexUid) > MAX_INDEX_UID_BYTES) return undefined;
    const cache = this.uuids;
    if (cache === null) return this.indexMapping.get(indexUid)?.uuid;
    if (cache.has(indexUid)) return cache.get(indexUid);
    const uuid = this.indexMapping.get(indexUid)?.uuid;
    // a few uids in practice; a client trying many unknown ones must not grow it without end
    if (cache.size >= MAX_CACHED_UUIDS) cache.clear();
    cache.set(indexUid, uuid);
    return uuid;
  }

  indexUids(): string[] {
    return [...this.indexMapping.getKeys()] as string[];
  }

  // --- index maintenance ----------------------------------------------------------------------

  /** Move one task in every index from what `previous` says to what `next` says. */
  private reindex(previous: Task | undefined, next: Task | undefined): void {
    const uid = (next ?? previous)!.uid;
    this.move(this.byStatus, previous?.status, next?.status, uid);
    this.move(this.byType, previous?.type, next?.type, uid);
    this.move(this.byIndex, previous?.indexUid ?? undefined, next?.indexUid ?? undefined, uid);
    this.move(this.byCanceledBy, previous?.canceledBy ?? undefined, next?.canceledBy ?? undefined, uid);
    this.move(this.batchTasks, previous?.batchUid ?? undefined, next?.batchUid ?? undefined, uid);
    const batchMoved = (previous?.batchUid ?? null) !== (next?.batchUid ?? null);
    for (const field of DATE_FIELDS) {
      const before = previous ? epochMs(previous[field]) : undefined;
      const after = next ? epochMs(next[field]) : undefined;
      if (before === after && !batchMoved) continue;
      if (before !== undefined) this.byDate[field].removeSync([before, uid]);
      if (after !== undefined) this.byDate[field].putSync([after, uid], next!.batchUid);
    }
  }

  private reindexBatch(previous: Batch | undefined, next: Batch | undefined): void {
    const uid = (next ?? previous)!.uid;
    const before = new Set(previous ? batchKeys(previous) : []);
    const after = new Set(next ? batchKeys(next) : []);
    for (const key of before) if (!after.has(key)) this.mutable(this.batchIndex, key).remove(uid);
    for (const key of after) if (!before.has(key)) this.mutable(this.batchIndex, key).add(uid);
  }

  private move(db: BitmapDb, from: BitmapKey | undefined, to: BitmapKey | undefined, uid: number): void {
    if (from === to) return;
    if (from !== undefined) this.mutable(db, from).remove(uid);
    if (to !== undefined) this.mutable(db, to).add(uid);
  }

  /** Task uids (or their batch uids) whose date lies strictly between the bounds. */
  private dated(field: DateField, before: Date | undefined, after: Date | undefined, what: 'tasks' | 'batches'): Bitmap {
    const out = new RoaringBitmap32();
    const range = {
      ...(after ? { start: [after.getTime() + 1] as unknown as DateKey } : {}),
      ...(before ? { end: [before.getTime()] as unknown as DateKey } : {}),
    };
    if (what === 'tasks') {
      for (const key of this.byDate[field].getKeys(range)) out.add((key as DateKey)[1]);
    } else {
      for (const { value } of this.byDate[field].getRange(range)) if (value !== null) out.add(value);
    }
    return out;
  }

  // --- bitmaps --------------------------------------------------------------------------------

  /** A bitmap to read (a copy: callers may change it). */
  private bitmap(db: BitmapDb, key: BitmapKey): Bitmap {
    const changed = this.pending?.get(db)?.get(key);
    if (changed) return new RoaringBitmap32(changed);
    const raw = db.get(key);
    return raw ? RoaringBitmap32.deserialize(raw, true) : new RoaringBitmap32();
  }

  private union(db: BitmapDb, keys: readonly BitmapKey[]): Bitmap {
    return RoaringBitmap32.orMany(keys.map((key) => this.bitmap(db, key)));
  }

  /** The bitmap of the write in progress, changed in place and stored when the write ends. */
  private mutable(db: BitmapDb, key: BitmapKey): Bitmap {
    if (!this.pending) throw new Error('task index changed outside a write transaction');
    let changed = this.pending.get(db);
    if (!changed) this.pending.set(db, (changed = new Map()));
    let bitmap = changed.get(key);
    if (!bitmap) {
      const raw = db.get(key);
      bitmap = raw ? RoaringBitmap32.deserialize(raw, true) : new RoaringBitmap32();
      changed.set(key, bitmap);
    }
    return bitmap;
  }

  private flushBitmaps(): void {
    for (const [db, changed] of this.pending!) {
      for (const [key, bitmap] of changed) {
        if (bitmap.isEmpty) db.removeSync(key);
        else {
          bitmap.runOptimize();
          db.putSync(key, bitmap.serialize(true) as unknown as Buffer);
        }
      }
    }
  }
}

export interface KeyPage {
  uids: number[];
  next: number | null;
  total: number;
}

/** Newest first from `from` (or oldest first with `reverse`), one more key read for `next`. */
function pageOfKeys(db: Database<unknown, number>, query: CursorQuery): KeyPage {
  const limit = query.limit ?? 20;
  const from = query.from === undefined ? undefined : Math.min(query.from, MAX_UID);
  const keys = query.reverse
    ? db.getKeys({ start: from ?? 0, limit: limit + 1 })
    : db.getKeys({ start: from ?? MAX_UID, reverse: true, limit: limit + 1 });
  const uids = [...keys] as number[];
  // lmdb's reverse iteration over uint32 keys stops before key 0: add it when the page reaches it
  if (!query.reverse && uids.length <= limit && uids.at(-1) !== 0 && db.doesExist(0)) uids.push(0);
  const total = (db.getStats() as { entryCount: number }).entryCount;
  return { uids: uids.slice(0, limit), next: uids[limit] ?? null, total };
}

function batchKeys(batch: Batch): string[] {
  return [
    'all',
    ...Object.keys(batch.stats.status).map((s) => `status:${s}`),
    ...Object.keys(batch.stats.types).map((t) => `type:${t}`),
    ...Object.keys(batch.stats.indexUids).map((i) => `index:${i}`),
  ];
}

function epochMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function validUids(uids: readonly number[]): number[] {
  return uids.filter((u) => Number.isInteger(u) && u >= 0 && u <= MAX_UID);
}

/** The uids of a filter that name a stored record: a uid never given (or deleted) matches nothing. */
function existingUids(db: Database<unknown, number>, uids: readonly number[]): Bitmap {
  return new RoaringBitmap32(validUids(uids).filter((uid) => db.doesExist(uid)));
}

/** The intersection of the parts, smallest first; undefined when there is none (no filter). */
function intersection(parts: Bitmap[]): Bitmap | undefined {
  if (parts.length === 0) return undefined;
  parts.sort((a, b) => a.size - b.size);
  let result = parts[0]!;
  for (const part of parts.slice(1)) {
    if (result.isEmpty) break;
    result = RoaringBitmap32.and(result, part);
  }
  return result;
}

export type { TaskType };
