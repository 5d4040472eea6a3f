/**
 * The vectors IndexExtension: keeps one vector store per embedder in sync with the documents.
 *
 * `prepare` (outside the transaction) decides, per document and embedder, whether vectors come
 * from the document (`_vectors`), must be generated (rendered template changed, or never
 * embedded), or stay as they are; it then calls the providers, batched. Any provider failure
 * fails the batch with `vector_embedding_error` naming the documents: nothing is written, so the
 * index never holds a silent partial set of vectors. `apply` (inside the transaction) writes the
 * vector stores and the per-document state.
 *
 * Per-document state (`vectors-docs`, key `<embedder>\0<docid>`): a hash of what was embedded
 * (the rendered text and the embedder's configuration), whether the user owns the vectors
 * (`regenerate: false`), and how many vectors the document has (for stats).
 */
import { createHash } from 'node:crypto';
import type { Database } from 'lmdb';
import { SearchError } from '../errors.js';
import type { DocumentChange, IndexExtension, ApplyContext, PrepareOptions } from '../index/extension.js';
import type { Bitmap, IndexStore } from '../index/store.js';
import type { EmbedderSettings, Settings } from '../settings/types.js';
import type { Document } from '../types.js';
import { embedderFor } from '../embedders/index.js';
import { parseDocumentVectors } from '../embedders/documentVectors.js';
import { renderDocument } from '../embedders/template.js';
import type { Embedder } from '../embedders/types.js';
import { VectorStore } from './store.js';

export type Distance = 'cosine' | 'euclidean' | 'dot' | 'hamming';

export interface VectorHit {
  docid: number;
  distance: number;
  /** In [0, 1], higher is closer: this is the semantic ranking score. */
  similarity: number;
}

/** The vector store contract (see src/engine/vector): one per embedder, inside the index environment. */
export interface VectorStoreLike {
  upsert(docid: number, vectors: Float32Array[]): void;
  delete(docid: number): void;
  /** Run a series of `upsert`/`delete` calls as one update (optional: stores may index each call at once). */
  batch?(fn: () => void): void;
  get(docid: number): Float32Array[] | undefined;
  search(query: Float32Array, k: number, filter?: Bitmap): VectorHit[] | Promise<VectorHit[]>;
  clear(): void;
  count(): number;
  /** Load what the first search would otherwise load; returns a stored vector to search with, if any. */
  warm?(): Float32Array | undefined;
}

export type VectorStoreFactory = (
  store: IndexStore,
  embedder: string,
  options: { dimensions: number; distance: Distance; binaryQuantized?: boolean },
) => VectorStoreLike;

interface EmbedderMeta {
  dimensions: number;
  binaryQuantized: boolean;
  /** The metric the store is built with (absent: cosine, as before the setting existed). */
  distance?: Distance;
  /** `fingerprint` of the configuration the stored vectors were made with. */
  fingerprint?: string;
  /** Documents with at least one vector, and vectors in total: for index stats. */
  documents: number;
  vectors: number;
}

interface DocState {
  hash: string | null;
  regenerate: boolean;
  count: number;
}

type Plan =
  | { kind: 'set'; vectors: Float32Array[]; state: DocState }
  | { kind: 'remove'; state: DocState }
  | { kind: 'keep' };

interface Prepared {
  plans: Map<string, Map<number, Plan>>;
  dimensions: Map<string, number>;
}

interface OpenedState {
  meta: Database<EmbedderMeta, string>;
  docs: Database<DocState, string>;
  stores: Map<string, { key: string; store: VectorStoreLike }>;
}

const stateKey = (embedder: string, docid: number) => `${embedder}\0${docid}`;

export class VectorsExtension implements IndexExtension {
  readonly name = 'vectors';
  private readonly opened = new WeakMap<IndexStore, OpenedState>();

  constructor(private readonly factory: VectorStoreFactory) {}

  open(store: IndexStore): void {
    this.state(store);
  }

  /** Load every embedder's vector store (codes and graph) into memory; one vector search per embedder to run once. */
  warm(store: IndexStore): unknown[] {
    const bodies: unknown[] = [];
    for (const key of this.state(store).meta.getKeys()) {
      const name = key as string;
      const vectors = this.vectorStore(store, name);
      const sample = vectors?.warm?.();
      if (sample) bodies.push({ vector: Array.from(sample), hybrid: { embedder: name, semanticRatio: 1 }, limit: 1 });
    }
    return bodies;
  }

  private state(store: IndexStore): OpenedState {
    let state = this.opened.get(store);
    if (!state) {
      state = {
        meta: store.openDB<EmbedderMeta, string>('vectors-meta', { encoding: 'msgpack' }),
        docs: store.openDB<DocState, string>('vectors-docs', { encoding: 'msgpack' }),
        stores: new Map(),
      };
      this.opened.set(store, state);
    }
    return state;
  }

  /** Dimensions of an embedder: configured or learnt from the first vectors stored. */
  dimensions(store: IndexStore, name: string, settings: EmbedderSettings): number | undefined {
    return (settings.dimensions as number | undefined) ?? embedderFor(settings).dimensions() ?? this.state(store).meta.get(name)?.dimensions;
  }

  /** The vector store of one embedder, or undefined while it holds no vectors yet. */
  vectorStore(store: IndexStore, name: string): VectorStoreLike | undefined {
    const meta = this.state(store).meta.get(name);
    return meta ? this.storeFor(store, name, meta) : undefined;
  }

  /** Whether the user owns the vectors of `docid` for `embedder` (`regenerate: false`). */
  docState(store: IndexStore, name: string, docid: number): { regenerate: boolean } | undefined {
    return this.state(store).docs.get(stateKey(name, docid));
  }

  private storeFor(store: IndexStore, name: string, meta: { dimensions: number; binaryQuantized: boolean; distance?: Distance }): VectorStoreLike {
    const stores = this.state(store).stores;
    const distance = meta.distance ?? 'cosine';
    const key = `${meta.dimensions}/${meta.binaryQuantized}/${distance}`;
    const cached = stores.get(name);
    if (cached && cached.key === key) return cached.store;
    // a store opened with another distance than its vectors were linked with re-links them at its next write
    const created = this.factory(store, name, { dimensions: meta.dimensions, distance, binaryQuantized: meta.binaryQuantized });
    stores.set(name, { key, store: created });
    return created;
  }

  // --- prepare: decide and embed, outside the transaction ---------------------------------------

  async prepare(changes: readonly DocumentChange[], settings: Settings, store: IndexStore, options?: PrepareOptions): Promise<Prepared> {
    const prepared: Prepared = { plans: new Map(), dimensions: new Map() };
    const names = Object.keys(settings.embedders);
    if (names.length === 0) return prepared;
    const asGiven = options?.vectorsAsGiven;
    if (asGiven) return this.prepareAsGiven(changes, settings, store, asGiven);
    const state = this.state(store);
    for (const name of names) {
      try {
        embedderFor(settings.embedders[name]!);
      } catch (error) {
        const ids = changes.filter((c) => c.after).map((c) => externalId(c, store.primaryKey));
        throw embeddingError(name, ids, error);
      }
    }
    const dims = new Map(names.map((n) => [n, this.dimensions(store, n, settings.embedders[n]!)]));
    const primaryKey = store.primaryKey;
    const pending = new Map<string, Array<{ docid: number; id: string; text: string; hash: string }>>();
    for (const name of names) {
      prepared.plans.set(name, new Map());
      pending.set(name, []);
    }
    const quantizing = new Map(names.map((n) => [n, this.quantizationSource(store, n, settings.embedders[n]!)]));
    // per embedder, not per document: the configuration's fingerprint and provider
    const fingerprints = new Map(names.map((n) => [n, fingerprint(settings.embedders[n]!)]));
    const embedders = new Map(names.map((n) => [n, embedderFor(settings.embedders[n]!)]));

    for (const change of changes) {
      const doc = change.after;
      if (!doc) continue;
      const id = externalId(change, primaryKey);
      const provided = parseDocumentVectors(doc._vectors, id, (n) => dims.get(n), names);
      for (const name of names) {
        const config = settings.embedders[name]!;
        const embedder = embedders.get(name)!;
        const fp = fingerprints.get(name)!;
        const given = provided.get(name);
        const plans = prepared.plans.get(name)!;
        const previous = state.docs.get(stateKey(name, change.docid));
        if (given && !given.regenerate) {
          const vectors = given.embeddings ?? [];
          const hash = vectorsHash(vectors, fp);
          // the same user vectors again (e.g. a re-index): no graph churn
          if (previous && !previous.regenerate && previous.hash === hash) plans.set(change.docid, { kind: 'keep' });
          else plans.set(change.docid, { kind: 'set', vectors, state: { hash, regenerate: false, count: vectors.length } });
          continue;
        }
        if (!embedder.embed) {
          // userProvided: nothing given means no vectors for this document
          const vectors = given?.embeddings ?? [];
          plans.set(change.docid, vectors.length ? { kind: 'set', vectors, state: { hash: null, regenerate: true, count: vectors.length } } : { kind: 'remove', state: { hash: null, regenerate: true, count: 0 } });
          continue;
        }
        let text: string;
        try {
          text = renderFor(doc, config, settings);
        } catch (error) {
          throw embeddingError(name, [id], new Error(`could not render the document template: ${(error as Error).message}`));
        }
        const hash = contentHash(text, fp);
        if (given?.embeddings && freshlyProvided(change, name, store)) {
          plans.set(change.docid, { kind: 'set', vectors: given.embeddings, state: { hash, regenerate: true, count: given.embeddings.length } });
          continue;
        }
        if (previous && previous.regenerate && previous.hash === hash) {
          plans.set(change.docid, { kind: 'keep' });
          continue;
        }
        // turning binary quantization on: the float vectors already stored are quantized, not re-embedded
        const source = quantizing.get(name);
        const stored = source && previous?.regenerate && previous.hash === contentHash(text, fingerprint(source.before)) ? source.store.get(change.docid) : undefined;
        if (stored && stored.length) {
          plans.set(change.docid, { kind: 'set', vectors: stored, state: { hash, regenerate: true, count: stored.length } });
          continue;
        }
        pending.get(name)!.push({ docid: change.docid, id, text, hash });
      }
    }

    for (const name of names) {
      const todo = pending.get(name)!;
      if (todo.length) await this.embedAll(name, embedderFor(settings.embedders[name]!), todo, prepared.plans.get(name)!, dims.get(name));
      const known = dims.get(name) ?? embedderFor(settings.embedders[name]!).dimensions() ?? firstLength(prepared.plans.get(name)!);
      if (known !== undefined) prepared.dimensions.set(name, known);
    }
    return prepared;
  }

  /**
   * `prepare` for a dump import: the vectors the documents carry, and no others. The embedder is
   * not even built (its model may not be on this machine), so the dimensions come from the
   * configuration or the vectors themselves.
   */
  private prepareAsGiven(
    changes: readonly DocumentChange[],
    settings: Settings,
    store: IndexStore,
    report: NonNullable<PrepareOptions['vectorsAsGiven']>,
  ): Prepared {
    const prepared: Prepared = { plans: new Map(), dimensions: new Map() };
    const state = this.state(store);
    const names = Object.keys(settings.embedders);
    const dims = new Map(names.map((n) => [n, (settings.embedders[n]!.dimensions as number | undefined) ?? state.meta.get(n)?.dimensions]));
    const missing = new Map(names.map((n) => [n, [] as string[]]));
    for (const name of names) prepared.plans.set(name, new Map());
    for (const change of changes) {
      const doc = change.after;
      if (!doc) continue;
      const id = externalId(change, store.primaryKey);
      const provided = parseDocumentVectors(doc._vectors, id, (n) => dims.get(n) ?? prepared.dimensions.get(n), names);
      for (const name of names) {
        const config = settings.embedders[name]!;
        const given = provided.get(name);
        const plans = prepared.plans.get(name)!;
        const vectors = given?.embeddings ?? [];
        if (vectors.length === 0) {
          if (config.source !== 'userProvided' && !(given && !given.regenerate)) missing.get(name)!.push(id);
          plans.set(change.docid, { kind: 'remove', state: { hash: null, regenerate: given?.regenerate ?? config.source !== 'userProvided', count: 0 } });
          continue;
        }
        if (!prepared.dimensions.has(name)) prepared.dimensions.set(name, dims.get(name) ?? vectors[0]!.length);
        const fp = fingerprint(config);
        // generated vectors remember the text they were made from, so an unchanged document keeps them
        const hash = !given!.regenerate ? vectorsHash(vectors, fp) : config.source === 'userProvided' ? null : renderedHash(doc, config, settings, fp);
        plans.set(change.docid, { kind: 'set', vectors, state: { hash, regenerate: given!.regenerate, count: vectors.length } });
      }
    }
    for (const [name, ids] of missing) if (ids.length) report.onMissing(name, ids);
    return prepared;
  }

  /**
   * When the only change to an embedder is `binaryQuantized: true`, its current (float) store
   * and previous configuration, so that `prepare` can reuse the vectors.
   */
  private quantizationSource(store: IndexStore, name: string, config: EmbedderSettings): { store: VectorStoreLike; before: EmbedderSettings } | undefined {
    const meta = this.state(store).meta.get(name);
    if (!meta || meta.binaryQuantized || config.binaryQuantized !== true) return undefined;
    const before = { ...config, binaryQuantized: false };
    const { binaryQuantized: _b, ...unset } = config;
    const previous = [before, unset as EmbedderSettings].find((c) => fingerprint(c) === meta.fingerprint);
    return previous ? { store: this.storeFor(store, name, meta), before: previous } : undefined;
  }

  private async embedAll(
    name: string,
    embedder: Embedder,
    todo: Array<{ docid: number; id: string; text: string; hash: string }>,
    plans: Map<number, Plan>,
    expected: number | undefined,
  ): Promise<void> {
    // identical texts (duplicates, empty renders) are embedded once
    const unique = [...new Set(todo.map((t) => t.text))];
    let vectors: Float32Array[];
    try {
      vectors = await embedder.embed!(unique, 'indexing');
    } catch (error) {
      throw embeddingError(name, todo.map((t) => t.id), error);
    }
    // the stored vectors fix the dimensions: a provider that changed model must not mix spaces
    const odd = expected === undefined ? undefined : vectors.find((v) => v.length !== expected);
    if (odd)
      throw embeddingError(name, todo.map((t) => t.id), new Error(`the embedder returned ${odd.length} dimensions, but the index holds vectors of ${expected}`));
    const byText = new Map(unique.map((text, i) => [text, vectors[i]!]));
    for (const item of todo)
      plans.set(item.docid, { kind: 'set', vectors: [byText.get(item.text)!], state: { hash: item.hash, regenerate: true, count: 1 } });
  }

  // --- apply: write, inside the transaction ----------------------------------------------------

  apply(changes: readonly DocumentChange[], ctx: ApplyContext): void {
    const { store, settings } = ctx;
    const prepared = (ctx.prepared as Prepared | undefined) ?? { plans: new Map(), dimensions: new Map() };
    const state = this.state(store);
    this.dropRemovedEmbedders(store, settings);

    for (const [name, config] of Object.entries(settings.embedders)) {
      let meta = state.meta.get(name);
      const dimensions = prepared.dimensions.get(name) ?? meta?.dimensions;
      const binaryQuantized = config.binaryQuantized === true;
      if (dimensions === undefined) continue; // no vector seen yet and none configured: nothing to write
      if (!meta || meta.dimensions !== dimensions || meta.binaryQuantized !== binaryQuantized) {
        if (meta) this.clearEmbedder(store, name);
        meta = { dimensions, binaryQuantized, documents: 0, vectors: 0 };
      }
      meta.distance = distanceOf(config);
      meta.fingerprint = fingerprint(config);
      const vectorStore = this.storeFor(store, name, meta);
      const plans = prepared.plans.get(name);
      const writeAll = () => {
        for (const change of changes) {
          const key = stateKey(name, change.docid);
          const previous = state.docs.get(key);
          const plan: Plan | undefined = change.after ? plans?.get(change.docid) : { kind: 'remove', state: { hash: null, regenerate: true, count: 0 } };
          if (!plan || plan.kind === 'keep') continue;
          if (previous) {
            meta.vectors -= previous.count;
            if (previous.count > 0) meta.documents -= 1;
          }
          if (plan.kind === 'set' && plan.vectors.length > 0) vectorStore.upsert(change.docid, plan.vectors);
          else if (previous && previous.count > 0) vectorStore.delete(change.docid);
          if (change.after) state.docs.putSync(key, plan.state);
          else if (previous) state.docs.removeSync(key);
          meta.vectors += plan.state.count;
          if (plan.state.count > 0) meta.documents += 1;
        }
      };
      if (vectorStore.batch) vectorStore.batch(writeAll);
      else writeAll();
      state.meta.putSync(name, meta);
    }
    this.writeStats(store);
  }

  /**
   * Before a full re-extraction: drop the vectors of embedders that are gone or whose
   * configuration changed (read from the settings already written in this transaction). The
   * vectors of unchanged embedders stay: `prepare` has compared every document's rendered text
   * with what they were made from, and `apply` only rewrites the documents whose text changed,
   * so re-indexing for one embedder never calls the providers of the others.
   */
  clear(store: IndexStore): void {
    const state = this.state(store);
    const embedders = store.settings.embedders;
    for (const { key, value } of state.meta.getRange()) {
      const config = embedders[key];
      if (!config || value.fingerprint === undefined || value.fingerprint !== fingerprint(config)) this.clearEmbedder(store, key);
    }
    this.writeStats(store);
  }

  needsReindex(before: Settings, after: Settings): boolean {
    for (const name of Object.keys(before.embedders)) if (!(name in after.embedders)) return true;
    for (const [name, config] of Object.entries(after.embedders)) {
      const previous = before.embedders[name];
      if (!previous || fingerprint(previous) !== fingerprint(config) || distanceOf(previous) !== distanceOf(config)) return true;
      // the default template shows searchable fields only: their list decides the text
      if (usesSearchable(config) && JSON.stringify(before.searchableAttributes) !== JSON.stringify(after.searchableAttributes)) return true;
    }
    return false;
  }

  private clearEmbedder(store: IndexStore, name: string): void {
    const state = this.state(store);
    const meta = state.meta.get(name);
    if (meta) this.storeFor(store, name, meta).clear();
    for (const { key } of state.docs.getRange({ start: `${name}\0`, end: `${name}\x01` })) state.docs.removeSync(key);
    state.meta.removeSync(name);
    state.stores.delete(name);
  }

  /** An embedder removed from the settings takes its vectors with it. */
  private dropRemovedEmbedders(store: IndexStore, settings: Settings): void {
    const state = this.state(store);
    for (const { key } of state.meta.getRange()) if (!(key in settings.embedders)) this.clearEmbedder(store, key);
  }

  private writeStats(store: IndexStore): void {
    let numberOfEmbeddings = 0;
    let numberOfEmbeddedDocuments = 0;
    for (const { value } of this.state(store).meta.getRange()) {
      numberOfEmbeddings += value.vectors;
      numberOfEmbeddedDocuments += value.documents;
    }
    store.main.putSync('embeddingStats', { numberOfEmbeddings, numberOfEmbeddedDocuments });
  }
}

/**
 * Whether `{embeddings, regenerate: true}` for `embedder` was sent with this change (a new
 * document, or a new value), rather than carried along in the stored document or replayed by a
 * re-index: such embeddings are a one-time hint, later changes of the text regenerate them.
 */
function freshlyProvided(change: DocumentChange, embedder: string, store: IndexStore): boolean {
  const entry = (doc: Document | undefined) => JSON.stringify((doc?._vectors as Record<string, unknown> | undefined)?.[embedder]);
  if (change.before) return entry(change.before) !== entry(change.after);
  return store.getDocument(change.docid) === undefined;
}

function renderedHash(doc: Document, config: EmbedderSettings, settings: Settings, fp: string): string | null {
  try {
    return contentHash(renderFor(doc, config, settings), fp);
  } catch {
    return null; // re-rendered and embedded at the document's next update
  }
}

function externalId(change: DocumentChange, primaryKey: string | null): string {
  const doc = change.after ?? change.before;
  return primaryKey && doc && doc[primaryKey] !== undefined ? String(doc[primaryKey]) : String(change.docid);
}

function renderFor(doc: Document, config: EmbedderSettings, settings: Settings): string {
  const template = config.source === 'composite' ? (config.indexingEmbedder as EmbedderSettings | undefined) ?? config : config;
  return renderDocument(doc, {
    template: template.documentTemplate as string | undefined,
    maxBytes: template.documentTemplateMaxBytes as number | undefined,
    searchableAttributes: settings.searchableAttributes,
  });
}

/**
 * What decides whether stored vectors are still right: everything that changes the vectors a
 * provider returns (not the API key, not `distribution`, which only shifts scores).
 */
function fingerprint(config: EmbedderSettings): string {
  const strip = (c: Record<string, unknown>): Record<string, unknown> => {
    // a composite's search side only embeds queries: documents' vectors come from the indexing side;
    // the distance changes how vectors are linked, not the vectors (the store re-links them)
    const { apiKey: _k, distribution: _d, headers: _h, searchEmbedder: _s, distance: _m, ...rest } = c;
    if (rest.indexingEmbedder && typeof rest.indexingEmbedder === 'object') rest.indexingEmbedder = strip(rest.indexingEmbedder as Record<string, unknown>);
    return rest;
  };
  return stableJson(strip(config));
}

/** The embedder's `distance` setting (our extension), cosine by default. */
function distanceOf(config: EmbedderSettings): Distance {
  return (config.distance as Distance | undefined) ?? 'cosine';
}

function usesSearchable(config: EmbedderSettings): boolean {
  const template = (config.documentTemplate ?? (config.indexingEmbedder as Record<string, unknown> | undefined)?.documentTemplate) as string | undefined;
  return template !== undefined && template.includes('is_searchable');
}

/** `fp`: the embedder configuration's `fingerprint`. */
function vectorsHash(vectors: Float32Array[], fp: string): string {
  const hash = createHash('sha1').update(fp).update('\0');
  for (const v of vectors) hash.update(Buffer.from(v.buffer, v.byteOffset, v.byteLength)).update('\0');
  return hash.digest('base64');
}

/** JSON with object keys sorted at every level, so equal configurations hash equally. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** `fp`: the embedder configuration's `fingerprint`. */
function contentHash(text: string, fp: string): string {
  return createHash('sha1').update(fp).update('\0').update(text).digest('base64');
}

function firstLength(plans: Map<number, Plan>): number | undefined {
  for (const plan of plans.values()) if (plan.kind === 'set' && plan.vectors.length) return plan.vectors[0]!.length;
  return undefined;
}

export function embeddingError(embedder: string, documentIds: string[], error: unknown): SearchError {
  const shown = documentIds.slice(0, 10).map((id) => `\`${id}\``).join(', ');
  const more = documentIds.length > 10 ? ` and ${documentIds.length - 10} more` : '';
  const reason = error instanceof Error ? error.message : String(error);
  return new SearchError(
    'vector_embedding_error',
    `Error while generating embeddings with embedder \`${embedder}\` for document${documentIds.length > 1 ? 's' : ''} ${shown}${more}: ${reason}`,
    { cause: error },
  );
}

/**
 * `_vectors` of a document for output. Without `retrieveVectors` it is hidden; with it, every
 * configured embedder appears as `{embeddings: [[...]], regenerate}` (user-provided vectors are
 * returned as the user sent them, generated ones from the store), and entries for embedders that
 * are not configured are returned as stored.
 */
export function presentVectors(
  extension: VectorsExtension,
  index: { store: IndexStore; settings: Settings },
  docid: number,
  doc: Document,
  options: { retrieveVectors: boolean },
): Document {
  const { _vectors: raw, ...rest } = doc;
  if (!options.retrieveVectors) return rest;
  const stored = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(stored)) if (!(name in index.settings.embedders)) out[name] = value;
  for (const [name, config] of Object.entries(index.settings.embedders)) {
    const state = extension.docState(index.store, name, docid);
    const regenerate = state?.regenerate ?? config.source !== 'userProvided';
    const vectors = extension.vectorStore(index.store, name)?.get(docid) ?? [];
    out[name] = { embeddings: userEmbeddings(stored[name], regenerate) ?? vectors.map((v) => Array.from(v)), regenerate };
  }
  return { ...rest, _vectors: out };
}

/** The embeddings exactly as the user sent them, when they own them: no float32 rounding noise. */
function userEmbeddings(entry: unknown, regenerate: boolean): number[][] | undefined {
  if (regenerate) return undefined;
  const embeddings = Array.isArray(entry) ? entry : (entry as { embeddings?: unknown } | undefined)?.embeddings;
  if (!Array.isArray(embeddings)) return undefined;
  if (embeddings.length === 0) return [];
  return typeof embeddings[0] === 'number' ? [embeddings as number[]] : (embeddings as number[][]);
}

/** The extension registered on every index, backed by the disk HNSW store. */
export const vectorsExtension = new VectorsExtension((store, embedder, options) => new VectorStore(store, embedder, options));

/** The engine's document presenter (`registerEngineModules({present})`): `_vectors` for output. */
export function presentDocument(index: { store: IndexStore; settings: Settings }, docid: number, doc: Document, options: { retrieveVectors: boolean }): Document {
  return presentVectors(vectorsExtension, index, docid, doc, options);
}
