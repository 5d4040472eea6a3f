/**
 * Hits as JSON bytes, for answers that are only serialized (the HTTP search route, `answer`).
 *
 * A hit without formatting is the stored document as displayed: decoding it from msgpack,
 * presenting it and stringifying it again took a third of a `star wars` search (20 hits, 22 KB;
 * bench/README.md "Search throughput"). Each search thread therefore keeps, per index, the
 * displayed form of recently returned documents with their UTF-8 JSON, and splices those bytes
 * into the response body. The cache holds documents, never answers: every search still ranks
 * its candidates; only the per-document decode and stringify are shared between searches.
 * Bounded (count and bytes), and dropped whenever the index commits (documents or settings
 * may have changed), like the keyword reader's caches (`IndexStore.commit`).
 */
import type { Index } from '../index/index.js';
import type { IndexStore } from '../index/store.js';
import type { Document } from '../types.js';

/** Where a hit built by `displayedHit` keeps the bytes of its document part (a symbol key: JSON.stringify and Object.keys skip it). */
const HIT_BYTES = Symbol('hit bytes');

/** Documents kept per index and thread; a page of hits for a few hundred frequent queries. */
const MAX_DOCUMENTS = 4_096;
/** Bytes of JSON kept per index and thread (the displayed objects take about as much again). */
const MAX_BYTES = 8 * 2 ** 20;

interface DisplayedDocument {
  /**
   * The document as `Index.present` shows it with no field selection and no vectors, carrying
   * its own bytes (HIT_BYTES). Frozen: a hit without extras is this very object, shared by
   * every search that returns it, so a caller that tried to change it would fail loudly rather
   * than change what later searches return.
   */
  doc: Document;
  /** Its own keys. */
  keys: number;
  /** `JSON.stringify(doc)` as UTF-8. */
  json: Buffer;
}

class DisplayedDocuments {
  private commit = -1;
  private bytes = 0;
  private readonly entries = new Map<number, DisplayedDocument>();

  constructor(private readonly store: IndexStore) {}

  get(index: Index, docid: number): DisplayedDocument | undefined {
    const commit = this.store.commit;
    if (commit !== this.commit) {
      this.commit = commit;
      this.entries.clear();
      this.bytes = 0;
    }
    const known = this.entries.get(docid);
    if (known) {
      // most recently used last: eviction takes the first
      this.entries.delete(docid);
      this.entries.set(docid, known);
      return known;
    }
    const stored = this.store.getDocument(docid);
    if (!stored) return undefined;
    const doc = index.present(docid, stored, null, false);
    const json = Buffer.from(JSON.stringify(doc));
    const keys = Object.keys(doc).length;
    (doc as { [HIT_BYTES]?: HitBytes })[HIT_BYTES] = { owner: doc, json, keys, extras: null };
    const entry = { doc: Object.freeze(doc), keys, json };
    if (entry.json.length > MAX_BYTES / 16) return entry; // a huge document would push out hundreds of others
    while (this.entries.size > 0 && (this.entries.size >= MAX_DOCUMENTS || this.bytes + entry.json.length > MAX_BYTES)) {
      const [oldest, evicted] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      this.bytes -= evicted.json.length;
    }
    this.entries.set(docid, entry);
    this.bytes += entry.json.length;
    return entry;
  }
}

const caches = new WeakMap<IndexStore, DisplayedDocuments>();


interface HitBytes {
  /** The hit these bytes were made for: a copy of it (spread) carries the symbol, not the right to use them. */
  owner: object;
  /** The displayed document's JSON. */
  json: Buffer;
  /** Own keys of the hit when it was built: the document's, then the extras' (see `hitJson`). */
  keys: number;
  /** The extra keys (`_formatted`, `_rankingScore`...) after the document's, as JSON, or null. */
  extras: string | null;
}

/**
 * A hit made of the displayed document `docid` and `extras` (keys the document does not have,
 * appended after its own), carrying the document's JSON so that `responseBytes` splices it.
 * Without extras, the cached document itself (frozen, shared).
 * Undefined when the document is gone, or when an extra key would overwrite one of the
 * document's (the bytes would then be wrong): the caller builds the hit the ordinary way.
 */
export function displayedHit(index: Index, docid: number, extras: Document): Document | undefined {
  let cache = caches.get(index.store);
  if (!cache) caches.set(index.store, (cache = new DisplayedDocuments(index.store)));
  const entry = cache.get(index, docid);
  if (!entry) return undefined;
  const extraKeys = Object.keys(extras);
  if (extraKeys.length === 0) return entry.doc;
  for (const key of extraKeys) if (Object.hasOwn(entry.doc, key)) return undefined;
  const hit: Document = { ...entry.doc, ...extras };
  (hit as { [HIT_BYTES]?: HitBytes })[HIT_BYTES] = { owner: hit, json: entry.json, keys: entry.keys + extraKeys.length, extras: JSON.stringify(extras) };
  return hit;
}

const OPEN_BRACE = 0x7b;

/** The hit's JSON as chunks of bytes: the cached document's, spliced with its extras when it has some. */
function hitChunks(hit: unknown, out: Buffer[]): void {
  const bytes = (hit as { [HIT_BYTES]?: HitBytes } | null)?.[HIT_BYTES];
  // a key added after the hit was built (by a caller that decorates hits) is not in the bytes;
  // a shared document (no extras) is frozen and cannot have one
  if (!bytes || bytes.owner !== hit || (bytes.extras !== null && Object.keys(hit as object).length !== bytes.keys)) {
    out.push(Buffer.from(JSON.stringify(hit)));
    return;
  }
  if (bytes.extras === null) out.push(bytes.json);
  else if (bytes.json.length === 2 && bytes.json[0] === OPEN_BRACE) out.push(Buffer.from(bytes.extras)); // `{}`: nothing to splice into
  else out.push(bytes.json.subarray(0, bytes.json.length - 1), Buffer.from(`,${bytes.extras.slice(1)}`));
}

const HITS_OPEN = Buffer.from('{"hits":[');
const COMMA = Buffer.from(',');

/**
 * A response as UTF-8 JSON, exactly `JSON.stringify(response)`: hits built by `displayedHit`
 * contribute their cached bytes. A response whose first key is not `hits` is stringified whole.
 */
export function responseBytes(response: unknown): Buffer {
  const chunks = responseChunks(response);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * `responseBytes` in pieces, to be copied one after the other (a search thread copies them
 * straight into the buffer of its batch of answers). Pieces may be shared: never change them.
 */
export function responseChunks(response: unknown): Buffer[] {
  const hits = (response as { hits?: unknown } | null)?.hits;
  if (!Array.isArray(hits) || Object.keys(response as object)[0] !== 'hits') return [Buffer.from(JSON.stringify(response))];
  const { hits: _, ...rest } = response as Record<string, unknown>;
  const chunks: Buffer[] = [HITS_OPEN];
  hits.forEach((hit, i) => {
    if (i > 0) chunks.push(COMMA);
    hitChunks(hit, chunks);
  });
  chunks.push(afterHits(rest));
  return chunks;
}

/** The last piece of `responseChunks`: the hits' closing bracket and the response's other fields. */
export function afterHits(rest: Record<string, unknown>): Buffer {
  const tail = JSON.stringify(rest);
  return Buffer.from(tail === '{}' ? ']}' : `],${tail.slice(1)}`);
}
