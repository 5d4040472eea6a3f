/**
 * The persistent task queue (`tasks/` LMDB environment).
 *
 * Layout:
 *   tasks          u32 uid -> TaskRecord (the public task plus the payload needed to process it)
 *   batches        u32 uid -> Batch
 *   meta           string  -> nextTaskUid, nextBatchUid
 *   by-status      status  -> roaring bitmap of task uids
 *   by-type        type    -> bitmap
 *   by-index       index   -> bitmap
 *   index-mapping  index uid -> { uuid }
 *
 * The secondary bitmaps make task filters set operations instead of scans, so `GET /tasks` stays
 * fast with millions of tasks. A task is registered (and flushed to disk) before its 202 is sent.
 */
import { open, type Database, type RootDatabase } from 'lmdb';
import roaring from 'roaring';
import type { Batch, Task, TaskFilter, TaskStatus, TaskType } from '../types.js';
import type { TaskPayload } from './payload.js';

const MAX_INDEX_UID_BYTES = 512;

const { RoaringBitmap32 } = roaring;
type Bitmap = InstanceType<typeof RoaringBitmap32>;

export interface TaskRecord extends Task {
  payload: TaskPayload;
}

export interface IndexMapping {
  uuid: string;
}

export class TaskStore {
  readonly env: RootDatabase;
  private readonly tasks: Database<TaskRecord, number>;
  private readonly batches: Database<Batch, number>;
  private readonly meta: Database<any, string>;
  private readonly byStatus: Database<Buffer, string>;
  private readonly byType: Database<Buffer, string>;
  private readonly byIndex: Database<Buffer, string>;
  readonly indexMapping: Database<IndexMapping, string>;

  constructor(path: string) {
    this.env = open({ path, maxDbs: 16, compression: false });
    this.tasks = this.env.openDB({ name: 'tasks', keyEncoding: 'uint32', encoding: 'msgpack' });
    this.batches = this.env.openDB({ name: 'batches', keyEncoding: 'uint32', encoding: 'msgpack' });
    this.meta = this.env.openDB({ name: 'meta', encoding: 'msgpack' });
    this.byStatus = this.env.openDB({ name: 'by-status', encoding: 'binary' });
    this.byType = this.env.openDB({ name: 'by-type', encoding: 'binary' });
    this.byIndex = this.env.openDB({ name: 'by-index', encoding: 'binary' });
    this.indexMapping = this.env.openDB({ name: 'index-mapping', encoding: 'msgpack' });
  }

  async close(): Promise<void> {
    await this.env.close();
  }

  /** Wait until every committed write is on disk. */
  async flushed(): Promise<void> {
    await this.env.flushed;
  }

  write<T>(fn: () => T): T {
    return this.env.transactionSync(fn);
  }

  // --- uids -----------------------------------------------------------------------------------

  nextTaskUid(): number {
    return (this.meta.get('nextTaskUid') as number | undefined) ?? 0;
  }

  private takeUid(key: 'nextTaskUid' | 'nextBatchUid'): number {
    const uid = (this.meta.get(key) as number | undefined) ?? 0;
    this.meta.putSync(key, uid + 1);
    return uid;
  }

  // --- tasks ----------------------------------------------------------------------------------

  /** Register a new task (call inside `write`). */
  insert(record: Omit<TaskRecord, 'uid'>): TaskRecord {
    const full = { ...record, uid: this.takeUid('nextTaskUid') } as TaskRecord;
    this.tasks.putSync(full.uid, full);
    this.addTo(this.byStatus, full.status, full.uid);
    this.addTo(this.byType, full.type, full.uid);
    if (full.indexUid !== null) this.addTo(this.byIndex, full.indexUid, full.uid);
    return full;
  }

  get(uid: number): TaskRecord | undefined {
    return this.tasks.get(uid);
  }

  /** Replace a task record, keeping the secondary bitmaps right (call inside `write`). */
  update(record: TaskRecord): void {
    const previous = this.tasks.get(record.uid);
    if (previous && previous.status !== record.status) {
      this.removeFrom(this.byStatus, previous.status, record.uid);
      this.addTo(this.byStatus, record.status, record.uid);
    }
    this.tasks.putSync(record.uid, record);
  }

  delete(uid: number): void {
    const previous = this.tasks.get(uid);
    if (!previous) return;
    this.removeFrom(this.byStatus, previous.status, uid);
    this.removeFrom(this.byType, previous.type, uid);
    if (previous.indexUid !== null) this.removeFrom(this.byIndex, previous.indexUid, uid);
    this.tasks.removeSync(uid);
  }

  uidsWithStatus(status: TaskStatus): Bitmap {
    return this.bitmap(this.byStatus, status);
  }

  allUids(): Bitmap {
    const all = new RoaringBitmap32();
    for (const { value } of this.byStatus.getRange()) all.orInPlace(RoaringBitmap32.deserialize(value, true));
    return all;
  }

  /** Task uids matching a filter, as a bitmap (dates and canceledBy need the records). */
  match(filter: TaskFilter): Bitmap {
    let result: Bitmap = filter.statuses
      ? RoaringBitmap32.orMany(filter.statuses.map((s) => this.bitmap(this.byStatus, s)))
      : this.allUids();
    if (filter.types) result = RoaringBitmap32.and(result, RoaringBitmap32.orMany(filter.types.map((t) => this.bitmap(this.byType, t))));
    if (filter.indexUids) result = RoaringBitmap32.and(result, RoaringBitmap32.orMany(filter.indexUids.map((i) => this.bitmap(this.byIndex, i))));
    if (filter.uids) result = RoaringBitmap32.and(result, new RoaringBitmap32(filter.uids.filter((u) => u >= 0 && u <= 0xffffffff)));
    const needsRecords =
      filter.batchUids || filter.canceledBy || filter.beforeEnqueuedAt || filter.afterEnqueuedAt || filter.beforeStartedAt ||
      filter.afterStartedAt || filter.beforeFinishedAt || filter.afterFinishedAt;
    if (!needsRecords) return result;
    const kept = new RoaringBitmap32();
    for (const uid of result) {
      const task = this.tasks.get(uid);
      if (task && taskMatchesRecordFilters(task, filter)) kept.add(uid);
    }
    return kept;
  }

  // --- batches --------------------------------------------------------------------------------

  newBatchUid(): number {
    return this.takeUid('nextBatchUid');
  }

  putBatch(batch: Batch): void {
    this.batches.putSync(batch.uid, batch);
  }

  getBatch(uid: number): Batch | undefined {
    return this.batches.get(uid);
  }

  deleteBatch(uid: number): void {
    this.batches.removeSync(uid);
  }

  batchUids(): number[] {
    return [...this.batches.getKeys()] as number[];
  }

  // --- index mapping --------------------------------------------------------------------------

  indexUuid(indexUid: string): string | undefined {
    // No index uid is longer (see validateIndexUid), and a longer key is more than LMDB can look up.
    if (Buffer.byteLength(indexUid) > MAX_INDEX_UID_BYTES) return undefined;
    return this.indexMapping.get(indexUid)?.uuid;
  }

  indexUids(): string[] {
    return [...this.indexMapping.getKeys()] as string[];
  }

  // --- helpers --------------------------------------------------------------------------------

  private bitmap(db: Database<Buffer, string>, key: string): Bitmap {
    const raw = db.get(key);
    return raw ? RoaringBitmap32.deserialize(raw, true) : new RoaringBitmap32();
  }

  private addTo(db: Database<Buffer, string>, key: string, uid: number): void {
    const bitmap = this.bitmap(db, key);
    bitmap.add(uid);
    db.putSync(key, bitmap.serialize(true) as unknown as Buffer);
  }

  private removeFrom(db: Database<Buffer, string>, key: string, uid: number): void {
    const bitmap = this.bitmap(db, key);
    bitmap.remove(uid);
    if (bitmap.isEmpty) db.removeSync(key);
    else db.putSync(key, bitmap.serialize(true) as unknown as Buffer);
  }
}

function within(value: string | null, before?: Date, after?: Date): boolean {
  if (!before && !after) return true;
  if (value === null) return false;
  const time = Date.parse(value);
  if (before && !(time < before.getTime())) return false;
  if (after && !(time > after.getTime())) return false;
  return true;
}

function taskMatchesRecordFilters(task: Task, filter: TaskFilter): boolean {
  if (filter.batchUids && (task.batchUid === null || !filter.batchUids.includes(task.batchUid))) return false;
  if (filter.canceledBy && (task.canceledBy === null || !filter.canceledBy.includes(task.canceledBy))) return false;
  return (
    within(task.enqueuedAt, filter.beforeEnqueuedAt, filter.afterEnqueuedAt) &&
    within(task.startedAt, filter.beforeStartedAt, filter.afterStartedAt) &&
    within(task.finishedAt, filter.beforeFinishedAt, filter.afterFinishedAt)
  );
}

export type { TaskType };
