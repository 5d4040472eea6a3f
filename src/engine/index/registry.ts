/**
 * The index registry: index uid -> uuid mapping (kept in the task store's environment) and the
 * opened `Index` objects. Deleting or swapping an index is a mapping change; the environment
 * directories are named by uuid.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { environmentBytes, writeCompactedCopy, type CompactionOptions } from './compaction.js';
import { SearchError } from '../errors.js';
import type { FeatureStore } from '../experimental-features.js';
import type { TaskStore } from '../tasks/store.js';
import type { IndexExtension } from './extension.js';
import { Index, type DocumentPresenter, type DocumentSorter, type FilterResolver, type IndexHooks } from './index.js';

const UID_PATTERN = /^[A-Za-z0-9_-]+$/;

export function validateIndexUid(uid: unknown, code = 'invalid_index_uid'): string {
  if (typeof uid !== 'string' || uid.length === 0 || Buffer.byteLength(uid) > 400 || !UID_PATTERN.test(uid)) {
    throw new SearchError(
      code,
      `\`${typeof uid === 'string' ? uid : JSON.stringify(uid)}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 400 bytes.`,
    );
  }
  return uid;
}

export function indexNotFound(uid: string): SearchError {
  return new SearchError('index_not_found', `Index \`${uid}\` not found.`);
}

export interface RegistryHooks {
  extensions: () => IndexExtension[];
  filter?: FilterResolver;
  present?: DocumentPresenter;
  sort?: DocumentSorter;
  features?: FeatureStore;
}

export class IndexRegistry {
  private readonly opened = new Map<string, Index>();

  constructor(
    private readonly indexesDir: string,
    private readonly tasks: TaskStore,
    private readonly hooks: RegistryHooks,
  ) {}

  private indexHooks(): IndexHooks {
    return { filter: this.hooks.filter, present: this.hooks.present, sort: this.hooks.sort, features: this.hooks.features };
  }

  exists(uid: string): boolean {
    return this.tasks.indexUuid(uid) !== undefined;
  }

  uids(): string[] {
    return this.tasks.indexUids().sort();
  }

  get(uid: string): Index {
    const uuid = this.tasks.indexUuid(uid);
    if (!uuid) throw indexNotFound(uid);
    let index = this.opened.get(uuid);
    if (!index) {
      index = new Index(uid, uuid, join(this.indexesDir, uuid), this.hooks.extensions(), this.indexHooks());
      this.opened.set(uuid, index);
    }
    index.uid = uid;
    index.store.sync();
    return index;
  }

  /** Let the next reads of every opened index start from the last commit (another thread just wrote). */
  renewReads(): void {
    for (const index of this.opened.values()) index.store.env.resetReadTxn();
  }

  /** Close the indexes opened here that no uid maps to any more (deleted or swapped away by another thread). */
  async closeUnmapped(): Promise<void> {
    const live = new Set(this.tasks.indexUids().map((uid) => this.tasks.indexUuid(uid)));
    const gone = [...this.opened].filter(([uuid]) => !live.has(uuid));
    for (const [uuid] of gone) this.opened.delete(uuid);
    await Promise.all(gone.map(([, index]) => index.close()));
  }

  /** Create the environment and the mapping for a new index (inside no transaction). */
  create(uid: string, primaryKey: string | null, at: string): Index {
    if (this.exists(uid)) throw new SearchError('index_already_exists', `Index \`${uid}\` already exists.`);
    const uuid = randomUUID();
    const index = new Index(uid, uuid, join(this.indexesDir, uuid), this.hooks.extensions(), this.indexHooks());
    index.store.write(() => {
      index.store.touch(at, true);
      index.store.setPrimaryKey(primaryKey);
    });
    this.opened.set(uuid, index);
    this.tasks.write(() => this.tasks.indexMapping.putSync(uid, { uuid }));
    return index;
  }

  async delete(uid: string): Promise<void> {
    const uuid = this.tasks.indexUuid(uid);
    if (!uuid) throw indexNotFound(uid);
    this.tasks.write(() => this.tasks.indexMapping.removeSync(uid));
    const index = this.opened.get(uuid);
    this.opened.delete(uuid);
    if (index) await index.close();
    rmSync(join(this.indexesDir, uuid), { recursive: true, force: true });
  }

  /**
   * Compact an index's environment (write thread only): a compacted copy in a new directory,
   * then the uid points at it (one task-store write) and the old directory goes. Returns the
   * data file's bytes on disk before and after.
   */
  async compact(uid: string, options: CompactionOptions = {}): Promise<{ before: number; after: number }> {
    const uuid = this.tasks.indexUuid(uid);
    if (!uuid) throw indexNotFound(uid);
    const index = this.get(uid);
    const oldDir = join(this.indexesDir, uuid);
    const before = environmentBytes(oldDir);
    const newUuid = randomUUID();
    const newDir = join(this.indexesDir, newUuid);
    try {
      await writeCompactedCopy(index.store, newDir, options);
    } catch (error) {
      rmSync(newDir, { recursive: true, force: true });
      throw error;
    }
    const mapping = (this.tasks.indexMapping.get(uid) as Record<string, unknown> | undefined) ?? {};
    this.tasks.write(() => this.tasks.indexMapping.putSync(uid, { ...mapping, uuid: newUuid }));
    this.opened.delete(uuid);
    await index.close();
    rmSync(oldDir, { recursive: true, force: true });
    return { before, after: environmentBytes(newDir) };
  }

  /** Swap the environments behind two index uids (call inside a task-store write). */
  swapMappings(a: string, b: string): void {
    const uuidA = this.tasks.indexUuid(a);
    const uuidB = this.tasks.indexUuid(b);
    if (!uuidA) throw indexNotFound(a);
    if (!uuidB) throw indexNotFound(b);
    this.tasks.indexMapping.putSync(a, { uuid: uuidB });
    this.tasks.indexMapping.putSync(b, { uuid: uuidA });
    const indexA = this.opened.get(uuidA);
    const indexB = this.opened.get(uuidB);
    if (indexA) indexA.uid = b;
    if (indexB) indexB.uid = a;
  }

  /** Give an index a new uid (call inside a task-store write); `to` must not exist. */
  renameMapping(from: string, to: string): void {
    const uuid = this.tasks.indexUuid(from);
    if (!uuid) throw indexNotFound(from);
    this.tasks.indexMapping.removeSync(from);
    this.tasks.indexMapping.putSync(to, { uuid });
    const index = this.opened.get(uuid);
    if (index) index.uid = to;
  }

  /** Remove environment directories that no mapping points to (left by a crash mid-deletion). */
  removeOrphans(): void {
    if (!existsSync(this.indexesDir)) return;
    const live = new Set(this.tasks.indexUids().map((uid) => this.tasks.indexUuid(uid)));
    for (const entry of readdirSync(this.indexesDir)) {
      if (!live.has(entry)) rmSync(join(this.indexesDir, entry), { recursive: true, force: true });
    }
  }

  async closeAll(): Promise<void> {
    const all = [...this.opened.values()];
    this.opened.clear();
    await Promise.all(all.map((index) => index.close()));
  }
}
