/**
 * The webhook outbox: notifications of finished batches kept in the task environment until every
 * webhook has them, so that none is lost to a receiver outage or a restart.
 *
 * The write thread records a batch's notification in the same write transaction as the batch's
 * task results (`record`), so a batch that finished always has one. The serving thread's
 * notifier delivers them in batch order, per webhook, and moves that webhook's cursor after each
 * delivery (at least once: a crash between the answer and the cursor means one more delivery).
 * A notification goes once every webhook's cursor is past it, or when it exceeds the outbox's
 * age or count limit (see WebhookNotifier).
 *
 * Layout (tasks environment):
 *   webhook-outbox   u32 batch uid -> { at: epoch ms, tasks: Task[] }
 *   webhook-cursors  webhook uuid -> last batch uid delivered to it;
 *                    `#active` -> whether any webhook is configured (the write thread records
 *                    only then); `#dropped` -> notifications dropped so far
 */
import type { Database, RootDatabase } from 'lmdb';
import type { Task } from '../types.js';

export interface Notification {
  batchUid: number;
  at: number;
  tasks: Task[];
}

const ACTIVE = '#active';
const DROPPED = '#dropped';

export class WebhookOutbox {
  private readonly entries: Database<{ at: number; tasks: Task[] }, number>;
  private readonly cursors: Database<number | boolean, string>;

  constructor(private readonly env: RootDatabase) {
    this.entries = env.openDB({ name: 'webhook-outbox', keyEncoding: 'uint32', encoding: 'msgpack' });
    this.cursors = env.openDB({ name: 'webhook-cursors', encoding: 'msgpack' });
  }

  /** Keep the notification of a finished batch (call inside the batch's task write transaction). */
  record(batchUid: number, tasks: Task[], at = Date.now()): void {
    if (tasks.length === 0 || this.cursors.get(ACTIVE) !== true) return;
    this.entries.putSync(batchUid, { at, tasks });
  }

  /** Whether batches are recorded: on while some webhook is configured. Off drops what is kept. */
  setActive(active: boolean): void {
    if (this.cursors.get(ACTIVE) === active) return;
    this.env.transactionSync(() => {
      this.cursors.putSync(ACTIVE, active);
      if (!active) this.entries.clearSync();
    });
  }

  /** The oldest notification after `batchUid` (after none: the oldest of all). */
  next(after: number | null): Notification | undefined {
    for (const { key, value } of this.entries.getRange({ start: after === null ? 0 : after + 1, limit: 1 })) {
      return { batchUid: key as number, at: value.at, tasks: value.tasks };
    }
    return undefined;
  }

  /** The newest batch uid kept, or null. */
  last(): number | null {
    for (const key of this.entries.getKeys({ reverse: true, limit: 1 })) return key as number;
    // lmdb's reverse iteration over uint32 keys never yields key 0
    return this.entries.doesExist(0) ? 0 : null;
  }

  get size(): number {
    return (this.entries.getStats() as { entryCount: number }).entryCount;
  }

  /** The oldest notifications, up to `limit`. */
  oldest(limit: number): Notification[] {
    const out: Notification[] = [];
    for (const { key, value } of this.entries.getRange({ limit })) out.push({ batchUid: key as number, at: value.at, tasks: value.tasks });
    return out;
  }

  cursor(uuid: string): number | null {
    const value = this.cursors.get(uuid);
    return typeof value === 'number' ? value : null;
  }

  /** Cursors of the webhooks known to the outbox (uuid -> last batch delivered). */
  knownCursors(): Map<string, number> {
    const out = new Map<string, number>();
    for (const { key, value } of this.cursors.getRange()) if (!key.startsWith('#') && typeof value === 'number') out.set(key, value);
    return out;
  }

  setCursor(uuid: string, batchUid: number): void {
    this.cursors.putSync(uuid, batchUid);
  }

  forget(uuid: string): void {
    this.cursors.removeSync(uuid);
  }

  /** Remove every notification up to `batchUid` included (all webhooks have them). */
  removeThrough(batchUid: number): void {
    this.env.transactionSync(() => {
      for (const key of this.entries.getKeys({ end: batchUid + 1 })) this.entries.removeSync(key);
    });
  }

  has(batchUid: number): boolean {
    return this.entries.doesExist(batchUid);
  }

  /** Drop one notification undelivered, counting it. */
  drop(batchUid: number): void {
    this.env.transactionSync(() => {
      if (this.entries.removeSync(batchUid)) this.countDropped(1);
    });
  }

  /** Count notifications dropped for one webhook (its receiver refused them). */
  countDropped(n: number): void {
    this.cursors.putSync(DROPPED, this.dropped + n);
  }

  /** Notifications dropped undelivered since the database was created. */
  get dropped(): number {
    const value = this.cursors.get(DROPPED);
    return typeof value === 'number' ? value : 0;
  }
}
