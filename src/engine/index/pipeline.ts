/**
 * The document pipeline of one batch.
 *
 * `ChangeSet` replays the batch's operations in task order against an in-memory view layered
 * over the store (so a document added then updated in the same batch merges correctly), and
 * collects one `DocumentChange` per touched docid with the version stored before the batch.
 * `commitChanges` then writes documents, ids, counters and every extension's derived data in
 * the caller's single write transaction.
 */
import { SearchError } from '../errors.js';
import type { Settings } from '../settings/types.js';
import type { Document } from '../types.js';
import { documentId, inferPrimaryKey, mergeDocuments } from './documents.js';
import type { PrepareOptions, DocumentChange, IndexExtension } from './extension.js';
import { appendPut, RoaringBitmap32, type Bitmap, type IndexStore } from './store.js';

export class ChangeSet {
  private readonly changes = new Map<number, DocumentChange>();
  /** External ids touched in this batch: docid, or null once deleted. */
  private readonly ids = new Map<string, number | null>();
  private nextDocid: number;
  /** Docids from this one on are given in this batch: never used before. */
  private readonly firstNewDocid: number;
  primaryKey: string | null;
  primaryKeyChanged = false;

  constructor(private readonly store: IndexStore) {
    this.nextDocid = (store.main.get('nextDocid') as number | undefined) ?? 0;
    this.firstNewDocid = this.nextDocid;
    this.primaryKey = store.primaryKey;
  }

  get size(): number {
    return this.changes.size;
  }

  list(): DocumentChange[] {
    return [...this.changes.values()];
  }

  private docidOf(externalId: string): number | undefined {
    if (this.ids.has(externalId)) return this.ids.get(externalId) ?? undefined;
    return this.store.docidOf(externalId);
  }

  private current(docid: number): Document | undefined {
    const change = this.changes.get(docid);
    return change ? change.after : this.store.getDocument(docid);
  }

  private record(docid: number, after: Document | undefined): void {
    const existing = this.changes.get(docid);
    if (existing) {
      existing.after = after;
      if (!existing.before && !after) this.changes.delete(docid);
      return;
    }
    this.changes.set(docid, { docid, before: this.store.getDocument(docid), after });
  }

  /**
   * Settle the primary key for a document task: the index's, else the task's parameter, else
   * inferred from the first document. Throws the reference errors on conflicts.
   */
  resolvePrimaryKey(requested: string | null, firstDocument: Document | undefined): string {
    if (this.primaryKey) {
      if (requested && requested !== this.primaryKey) {
        throw new SearchError('index_primary_key_already_exists', `Index already has a primary key: \`${this.primaryKey}\`.`);
      }
      return this.primaryKey;
    }
    const chosen = requested ?? (firstDocument ? inferPrimaryKey(firstDocument) : null);
    if (!chosen) {
      throw new SearchError(
        'index_primary_key_no_candidate_found',
        'The primary key inference failed as the engine did not find any field ending with `id` in its name. Please specify the primary key manually using the `primaryKey` query parameter.',
      );
    }
    return chosen;
  }

  /**
   * Add or update documents of one task. All ids are validated first, so a task with one bad
   * document changes nothing. Returns the number of documents indexed. With `skipCreation`,
   * documents whose id is not in the index are ignored (only existing ones are written).
   */
  addDocuments(
    documents: readonly Document[],
    method: 'replace' | 'update',
    requestedPrimaryKey: string | null,
    options: { skipCreation?: boolean } = {},
  ): number {
    const primaryKey = this.resolvePrimaryKey(requestedPrimaryKey, documents[0]);
    const ids = documents.map((doc) => documentId(doc, primaryKey));
    if (!this.primaryKey) {
      this.primaryKey = primaryKey;
      this.primaryKeyChanged = true;
    }
    let indexed = 0;
    documents.forEach((doc, i) => {
      const externalId = ids[i]!;
      // Keep the primary key as received when it is valid: integers stay integers.
      let docid = this.docidOf(externalId);
      if (options.skipCreation && (docid === undefined || !this.current(docid))) return;
      indexed++;
      if (docid === undefined) {
        docid = this.nextDocid++;
        this.ids.set(externalId, docid);
        this.record(docid, doc);
        return;
      }
      const before = this.current(docid);
      this.record(docid, method === 'update' && before ? mergeDocuments(before, doc) : doc);
    });
    return indexed;
  }

  /** The document as it stands in this batch (stored, or as changed by an earlier task). */
  document(docid: number): Document | undefined {
    return this.current(docid);
  }

  /** Replace a live document in place (same id), or delete it with `undefined` (edition by function). */
  replaceDocument(docid: number, after: Document | undefined): void {
    const before = this.current(docid);
    if (!before) return;
    if (!after && this.primaryKey) this.ids.set(documentId(before, this.primaryKey), null);
    this.record(docid, after);
  }

  deleteExternalIds(externalIds: readonly string[]): number {
    let deleted = 0;
    for (const externalId of externalIds) {
      const docid = this.docidOf(externalId);
      if (docid === undefined || !this.current(docid)) continue;
      this.ids.set(externalId, null);
      this.record(docid, undefined);
      deleted++;
    }
    return deleted;
  }

  /** Delete by internal docids (filters, clear). */
  deleteDocids(docids: Iterable<number>): number {
    let deleted = 0;
    for (const docid of docids) {
      const doc = this.current(docid);
      if (!doc) continue;
      if (this.primaryKey) this.ids.set(documentId(doc, this.primaryKey), null);
      this.record(docid, undefined);
      deleted++;
    }
    return deleted;
  }

  /** Live docids as they will be after the batch (store's bitmap adjusted by the changes). */
  liveDocids(): Bitmap {
    const docids = this.store.docids().clone();
    for (const change of this.changes.values()) {
      if (change.after) docids.add(change.docid);
      else docids.remove(change.docid);
    }
    return docids;
  }

  /** Write everything inside the current write transaction. */
  commit(extensions: readonly IndexExtension[], settings: Settings, prepared: Map<string, unknown>): void {
    const store = this.store;
    const changes = this.list();
    const distribution = { ...store.fieldDistribution };
    for (const change of changes) {
      if (change.before) for (const field of Object.keys(change.before)) distribution[field] = (distribution[field] ?? 0) - 1;
      if (change.after) for (const field of Object.keys(change.after)) distribution[field] = (distribution[field] ?? 0) + 1;
      // A docid never used before sorts after every stored document (see appendPut).
      if (change.after) change.docid >= this.firstNewDocid ? appendPut(store.documents, change.docid, change.after) : store.documents.putSync(change.docid, change.after);
      else store.documents.removeSync(change.docid);
    }
    for (const [externalId, docid] of this.ids) {
      if (docid === null) store.externalIds.removeSync(externalId);
      else store.externalIds.putSync(externalId, docid);
    }
    for (const [field, count] of Object.entries(distribution)) if (count <= 0) delete distribution[field];
    store.setFieldDistribution(distribution);
    store.setDocids(this.liveDocids());
    store.main.putSync('nextDocid', this.nextDocid);
    if (this.primaryKeyChanged) store.setPrimaryKey(this.primaryKey);
    for (const extension of extensions) {
      extension.apply(changes, { store, settings, prepared: prepared.get(extension.name) });
    }
  }
}

/** Every stored document as a change from nothing, for re-extraction after a settings change. */
export function fullReindexChanges(store: IndexStore): DocumentChange[] {
  const changes: DocumentChange[] = [];
  for (const { key, value } of store.documentEntries()) changes.push({ docid: key, after: value });
  return changes;
}

export async function prepareExtensions(
  extensions: readonly IndexExtension[],
  changes: readonly DocumentChange[],
  settings: Settings,
  store: IndexStore,
  options?: PrepareOptions,
): Promise<Map<string, unknown>> {
  const prepared = new Map<string, unknown>();
  for (const extension of extensions) {
    if (extension.prepare) prepared.set(extension.name, await extension.prepare(changes, settings, store, options));
  }
  return prepared;
}

export { RoaringBitmap32 };
