/**
 * How derived structures plug into the document pipeline.
 *
 * The index keeps the documents; everything searchable (keyword postings, facets, geo points,
 * vectors) is derived from them by an `IndexExtension`. The pipeline of a batch is:
 *
 *   1. `prepare` (async, outside any transaction): slow or remote work such as computing
 *      embeddings. It may throw a SearchError to fail the batch before anything is written.
 *   2. one LMDB write transaction on the index environment, in which the documents are written
 *      and every extension's `apply` runs synchronously with the same change list.
 *
 * So a batch commits whole or not at all, documents and derived data together.
 */
import type { IndexStore } from './store.js';
import type { Settings } from '../settings/types.js';
import type { Document } from '../types.js';

export interface DocumentChange {
  docid: number;
  /** The stored version before the batch, absent for a new document. */
  before?: Document;
  /** The version after the batch, absent for a deletion. */
  after?: Document;
}

export interface PrepareOptions {
  /** `apply` will run right after `clear` (a re-index): nothing stored needs reading back. */
  fromScratch?: boolean;
  /**
   * Dump import: never call an embedder. Documents keep the vectors they carry, with their
   * `regenerate` flags; those without are reported here and get vectors at their next update.
   */
  vectorsAsGiven?: { onMissing(embedder: string, documentIds: string[]): void };
}

export interface ApplyContext {
  store: IndexStore;
  settings: Settings;
  /** Whatever `prepare` returned for this batch. */
  prepared: unknown;
}

export interface IndexExtension {
  readonly name: string;
  /** Open the extension's databases in the index environment; called once per opened index. */
  open(store: IndexStore): void;
  /** Async preparation before the write transaction; the result reaches `apply` as `ctx.prepared`. */
  prepare?(changes: readonly DocumentChange[], settings: Settings, store: IndexStore, options?: PrepareOptions): Promise<unknown>;
  /** Runs inside the batch's write transaction. Must be synchronous. */
  apply(changes: readonly DocumentChange[], ctx: ApplyContext): void;
  /** Drop every derived entry (inside the write transaction), e.g. before re-extracting everything. */
  clear(store: IndexStore): void;
  /** True when moving from `before` to `after` settings requires re-extracting every document. */
  needsReindex(before: Settings, after: Settings): boolean;
  /**
   * Load into memory what the first search would otherwise load (in the background after the
   * engine opens), and return search bodies that run the extension's search code once, so that
   * the first request finds that code compiled (the engine runs them and drops their answers).
   */
  warm?(store: IndexStore): unknown[];
}
