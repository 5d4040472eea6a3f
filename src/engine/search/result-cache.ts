/**
 * The answers of recent searches, reused while their index has not changed.
 *
 * Search traffic repeats itself: the popular queries of a site, the first letters everyone types,
 * the same query asked again for its second page or by a refreshed page. A serving engine (a search
 * thread, see search-threads.ts) keeps the serialized answers of the searches it computed, keyed by
 * the index and the request body as the engine received it (tenant-token and key restrictions are
 * merged into it by then), and stamped with the index's commit: an entry answers only while the
 * index is at that commit, so nothing written since, documents or settings, is ever missed. The
 * engine also leaves out what depends on more than the index and the body (see `Engine.answerHere`):
 * dynamic search rules (other stores, and the clock), documents joined from other indexes, vector
 * and hybrid queries (an embedder's answer), personalization, performance details and metadata
 * (per request), and answers that took long enough to have been cut short (`searchCutoffMs`).
 *
 * A replayed answer is byte for byte the computed one but for `processingTimeMs`, which is the
 * time the replay took. The cache holds at most MAX_BYTES of answers (least recently used first
 * out); `SEARCH_RESULT_CACHE=off` turns it off.
 */
import type { SearchRequest } from './search-threads.js';

export const RESULT_CACHE_ENV = 'SEARCH_RESULT_CACHE';

const MIB = 1024 * 1024;
/** All the answers one engine keeps. */
export const MAX_BYTES = 16 * MIB;
/** An answer larger than this is not kept (a page of a thousand hits would crowd out the rest). */
export const MAX_ANSWER_BYTES = 512 * 1024;

/** Body parameters whose answer depends on more than the index and the body. */
const UNCACHEABLE_PARAMS = ['vector', 'hybrid', 'media', 'personalize', 'showPerformanceDetails'];

/**
 * Answers given from a cache in this thread, plus those search threads reported to it (for
 * `/metrics`, as embedders/call-counts.ts does for embedder calls); `unreported` is what this
 * thread has not yet posted to the serving thread.
 */
let totalHits = 0;
let unreportedHits = 0;

/** In a search thread: the answers given from its cache since the last call, to post with its answers. */
export function takeUnreportedCacheHits(): number {
  const taken = unreportedHits;
  unreportedHits = 0;
  return taken;
}

/** On the serving thread: hits a search thread reported. */
export function addCacheHits(count: number): void {
  totalHits += count;
}

/** Every answer given from a cache in this thread or reported to it. */
export function cacheHitTotal(): number {
  return totalHits;
}

export function resultCacheEnabled(setting = process.env[RESULT_CACHE_ENV]): boolean {
  return setting?.trim().toLowerCase() !== 'off';
}

/** The key of a request whose answer may be kept, as far as the request alone tells; undefined otherwise. */
export function requestKey(request: SearchRequest): string | undefined {
  if (request.kind !== 'search' || request.includeMetadata || request.foreignIndexes !== undefined) return undefined;
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  for (const name of UNCACHEABLE_PARAMS) if ((body as Record<string, unknown>)[name] !== undefined) return undefined;
  return `${request.uid}\u0000${JSON.stringify(body)}`;
}

/** A kept answer: its body's pieces up to the hits' end, and the fields after them. */
export interface CachedAnswer {
  commit: number;
  hits: Buffer[];
  rest: Record<string, unknown>;
  bytes: number;
}

export class ResultCache {
  /** Least recently used first (a Map keeps insertion order). */
  private readonly entries = new Map<string, CachedAnswer>();
  private bytes = 0;

  constructor(private readonly maxBytes = MAX_BYTES) {}

  /** The answer kept for `key` at `commit`; one kept for another commit is dropped. */
  get(key: string, commit: number): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.commit !== commit) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry);
    this.hits++;
    totalHits++;
    unreportedHits++;
    return entry;
  }

  /** Answers given from the cache so far. */
  hits = 0;

  set(key: string, entry: CachedAnswer): void {
    if (entry.bytes > MAX_ANSWER_BYTES) return;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.bytes -= previous.bytes;
    }
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.bytes;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get heldBytes(): number {
    return this.bytes;
  }
}
