/**
 * An opened index: its store plus the extensions that derive searchable structures from the
 * documents. Read operations live here; writes go through the scheduler's processors.
 */
import { SearchError } from '../errors.js';
import type { Settings } from '../settings/types.js';
import type { Document, DocumentsQuery, IndexInfo, IndexStats, Page } from '../types.js';
import { normalizeDocumentId, selectFields, visibleFields } from './documents.js';
import type { FeatureStore } from '../experimental-features.js';
import type { IndexExtension } from './extension.js';
import { IndexStore, RoaringBitmap32, type Bitmap } from './store.js';

/** Resolves a filter expression to the matching docids (provided by the search module). */
export type FilterResolver = (index: Index, filter: unknown, errorCode: string) => Bitmap;

/** The docids of one page of `candidates` in `sort` order, or null when `sort` is empty (provided by the search module). */
export type DocumentSorter = (index: Index, candidates: Bitmap, sort: unknown, page: { offset: number; limit: number }) => number[] | null;

/** Adjusts a stored document for output (e.g. `_vectors` handling by the vectors module). */
export type DocumentPresenter = (index: Index, docid: number, doc: Document, options: { retrieveVectors: boolean }) => Document;

export interface IndexHooks {
  filter?: FilterResolver;
  present?: DocumentPresenter;
  sort?: DocumentSorter;
  features?: FeatureStore;
}

export class Index {
  readonly store: IndexStore;

  constructor(
    public uid: string,
    readonly uuid: string,
    path: string,
    readonly extensions: readonly IndexExtension[],
    private readonly hooks: IndexHooks,
  ) {
    this.store = new IndexStore(path);
    for (const extension of extensions) extension.open(this.store);
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  /** Load what the first search would otherwise load; returns warm-up search bodies (see IndexExtension.warm). */
  warm(): unknown[] {
    return this.extensions.flatMap((extension) => extension.warm?.(this.store) ?? []);
  }

  /** The instance's experimental features; absent for an index opened outside an engine (every feature allowed). */
  get features(): FeatureStore | undefined {
    return this.hooks.features;
  }

  get settings(): Settings {
    return this.store.settings;
  }

  info(): IndexInfo {
    const meta = this.store.meta();
    return { uid: this.uid, primaryKey: meta.primaryKey, createdAt: meta.createdAt, updatedAt: meta.updatedAt };
  }

  stats(isIndexing: boolean, options: { internalDatabaseSizes?: boolean } = {}): IndexStats {
    const numberOfDocuments = this.store.documentCount;
    const sizes = this.store.databaseSizes();
    const rawDocumentDbSize = sizes.documents ?? 0;
    const embeddings = (this.store.main.get('embeddingStats') as { numberOfEmbeddings: number; numberOfEmbeddedDocuments: number } | undefined) ?? {
      numberOfEmbeddings: 0,
      numberOfEmbeddedDocuments: 0,
    };
    return {
      numberOfDocuments,
      rawDocumentDbSize,
      avgDocumentSize: numberOfDocuments === 0 ? 0 : Math.round(rawDocumentDbSize / numberOfDocuments),
      isIndexing,
      numberOfEmbeddings: embeddings.numberOfEmbeddings,
      numberOfEmbeddedDocuments: embeddings.numberOfEmbeddedDocuments,
      fieldDistribution: this.store.fieldDistribution,
      ...(options.internalDatabaseSizes ? { internalDatabaseSizes: sizes } : {}),
    };
  }

  /** Resolve a filter to docids, or all documents when there is none. */
  filterDocids(filter: unknown, errorCode = 'invalid_search_filter'): Bitmap {
    if (filter === undefined || filter === null || filter === '' || (Array.isArray(filter) && filter.length === 0)) {
      return this.store.docids();
    }
    if (!this.hooks.filter) {
      throw new SearchError(errorCode, 'Filters are not available in this build.');
    }
    return this.hooks.filter(this, filter, errorCode);
  }

  /**
   * A stored document whole (every field, whatever `displayedAttributes` says) with its vectors as
   * `_vectors` reads them back: what dumps and exports carry to another instance.
   */
  withVectors(docid: number, stored: Document): Document {
    // the presenter knows how vectors are stored; everything else comes from the stored document
    const shown = this.present(docid, stored, null, true);
    const { _vectors, ...fields } = stored;
    void _vectors;
    return shown._vectors !== undefined ? { ...fields, _vectors: shown._vectors } : fields;
  }

  /** A stored document shaped for output: displayed attributes, requested fields, vectors. */
  present(docid: number, doc: Document, fields: readonly string[] | null | undefined, retrieveVectors = false): Document {
    const shown = this.hooks.present ? this.hooks.present(this, docid, doc, { retrieveVectors }) : withoutVectors(doc, retrieveVectors);
    const selected = visibleFields(this.settings.displayedAttributes, fields ?? null);
    const out = selectFields(shown, selected);
    if (retrieveVectors && shown._vectors !== undefined && !('_vectors' in out)) out._vectors = shown._vectors;
    return out;
  }

  getDocument(id: string, options: { fields?: string[] | null; retrieveVectors?: boolean } = {}): Document {
    let externalId: string;
    try {
      externalId = normalizeDocumentId(/^-?\d+$/.test(id) ? Number(id) : id);
    } catch {
      externalId = id;
    }
    const docid = this.store.docidOf(externalId) ?? this.store.docidOf(id);
    const doc = docid === undefined ? undefined : this.store.getDocument(docid);
    if (docid === undefined || !doc) throw new SearchError('document_not_found', `Document \`${id}\` not found.`);
    return this.present(docid, doc, options.fields, options.retrieveVectors ?? false);
  }

  private sortedPage(docids: Bitmap, sort: unknown, offset: number, limit: number): number[] | null {
    if (!this.hooks.sort) throw unsortable();
    return this.hooks.sort(this, docids, sort, { offset, limit });
  }

  getDocuments(query: DocumentsQuery): Page<Document> {
    const offset = query.offset ?? 0;
    const limit = query.limit ?? 20;
    let docids: Bitmap = this.filterDocids(query.filter, 'invalid_document_filter');
    if (query.ids) {
      const wanted = new RoaringBitmap32();
      for (const id of query.ids) {
        const docid = this.store.docidOf(String(id));
        if (docid !== undefined) wanted.add(docid);
      }
      docids = RoaringBitmap32.and(docids, wanted);
    }
    const results: Document[] = [];
    const sorted = query.sort !== undefined && limit > 0 ? this.sortedPage(docids, query.sort, offset, limit) : null;
    const page = sorted ?? (limit > 0 ? docids.rangeUint32Array(new Uint32Array(limit), offset, limit) : new Uint32Array());
    for (const docid of page) {
      const doc = this.store.getDocument(docid);
      if (doc) results.push(this.present(docid, doc, query.fields, query.retrieveVectors ?? false));
    }
    return { results, offset, limit, total: docids.size };
  }
}

function unsortable(): SearchError {
  return new SearchError('invalid_document_sort', 'Sorting documents is not available in this build.');
}

function withoutVectors(doc: Document, retrieveVectors: boolean): Document {
  if (retrieveVectors || !('_vectors' in doc)) return doc;
  const { _vectors, ...rest } = doc;
  void _vectors;
  return rest;
}
