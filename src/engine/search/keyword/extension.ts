/**
 * The keyword `IndexExtension`: derives the keyword databases (see layout.ts) from documents.
 *
 * A batch accumulates per-key deltas (docids added and removed), then merges each touched posting
 * list once; when the deltas grow past a bound they are merged early, so memory stays bounded
 * whatever the payload size. Removals use the stored extraction of the document (`kw-entries`), so
 * an update or deletion removes exactly what was indexed.
 *
 * Extraction only reads committed data, so `prepare` does it before the batch's write
 * transaction, yielding to the event loop as it goes; `apply` merges the deltas into the databases
 * inside the transaction, a slice of keys at a time, each slice written right after it was read
 * (see BatchWriter.flush); past the bound, the rest of the batch is extracted and merged there too.
 */
import roaring from 'roaring';
import type { Database } from 'lmdb';
import type { IndexExtension, DocumentChange, ApplyContext, PrepareOptions } from '../../index/extension.js';
import { appendPut, type Bitmap, type IndexStore } from '../../index/store.js';
import type { Settings } from '../../settings/types.js';
import type { Document } from '../../types.js';
import { HARD_GAP } from '../../text/tokenize.js';
import { analyzerFor, type Analyzer } from './analyzer.js';
import { forEachValue, isSearchable, localesFor } from './fields.js';
import { decodeEntry, encodeEntryView } from './entry.js';
import { hasTail, shouldFold, valueBytes } from './tails.js';
import { keyOrder, orderByKey } from './key-order.js';
import { WordTable } from './word-table.js';
import { dropLexicon, updateLexicon, type LexiconChanges } from './lexicon.js';
import { extractElsewhere, parallelSplit } from './parallel-extract.js';
import { appendAscending, BUCKET_TAG, PAIR_FIRST_MAX, PAIR_POSTINGS_META, PAIR_POSTINGS_VERSION, PAIR_PREFIX_MAX, PAIR_SECOND_MAX, pairKey, pairKeysOf, pairPrefixesOf, pairPrefixKey, PREFIX_RECORD_MIN_WORDS, MAX_POSITION_BUCKET, PREFIX_MAX, POSTING_DBS, bucketTag, bumpKeywordGeneration, decodeWordRecord, encodeWordRecord, fieldTag, forEachRecordPart, ID_BLOCK, keywordDbs, positionBucket, prefixesOf, recordId, serializeAscending, serializedAscendingSize, writeAscending, valueKey, MAX_VALUE_FIELD_WORDS, MAX_VALUE_WORDS, VALUE_GAP, type KeywordDbs, type TextEntry, type WordPart } from './layout.js';

const { RoaringBitmap32 } = roaring;

/** Provisional word ids start here (see BatchWriter.idOf); real ones stay far below. */
const PROVISIONAL_ID = 0x8000_0000;

/** Pending postings after which deltas are merged into LMDB mid-batch. */
const FLUSH_THRESHOLD = 12_000_000;
let flushThreshold = FLUSH_THRESHOLD;

/**
 * For tests: merge mid-batch past `postings` pending postings (none given: the default). A batch
 * reaches the default only past some 30,000 documents; a low bound makes a small batch take the
 * same path, flush after flush, each one merging into what the previous ones wrote.
 */
export function setFlushThreshold(postings?: number): void {
  flushThreshold = postings ?? FLUSH_THRESHOLD;
}
/** Positions beyond this in a field are not indexed (as Meilisearch caps positions per attribute). */
const MAX_POSITION = 65_535;

/** Where `keysOf` puts a document's keys: `put` is false when the key was already put for it. */
interface KeySink {
  put(key: string): boolean;
}

/** The keys of one document, kept to diff against its previous version. */
class KeySet extends Set<string> implements KeySink {
  put(key: string): boolean {
    if (this.has(key)) return false;
    this.add(key);
    return true;
  }
}

/**
 * Pending postings under numbered keys. Additions are appended to one log of (key, docid) pairs,
 * grouped per key by a counting pass at merge time: sequential writes to typed arrays instead
 * of a growing array per key. The log is a list of fixed-size chunks: a batch's logs reach tens
 * of megabytes, and a log doubled by copying held up to three times its size while it grew.
 */
const LOG_CHUNK = 1 << 16;

class PostingLog {
  private lastDoc = new Int32Array(1024).fill(-1);
  private keyChunks: Int32Array[] = [];
  private docChunks: Uint32Array[] = [];
  private fill = LOG_CHUNK;
  private adds = 0;
  keys = 0;
  dels: Map<number, number[]> | null = null;
  size = 0;

  newKey(): number {
    const k = this.keys++;
    if (k >= this.lastDoc.length) {
      const grown = new Int32Array(this.lastDoc.length * 2).fill(-1);
      grown.set(this.lastDoc);
      this.lastDoc = grown;
    }
    return k;
  }

  /**
   * Adds `docid` to key `k` unless it was the last one added there; 1 if added. A document's
   * keys are all put before the next document's, so a repeat within a document is caught here.
   */
  push(k: number, docid: number): number {
    if (this.lastDoc[k] === docid) return 0;
    this.lastDoc[k] = docid;
    this.append(k, docid);
    return 1;
  }

  /** Adds `docid` to key `k`; the caller knows it is not there yet (no check against the last docid). */
  append(k: number, docid: number): void {
    if (this.fill === LOG_CHUNK) {
      this.keyChunks.push(new Int32Array(LOG_CHUNK));
      this.docChunks.push(new Uint32Array(LOG_CHUNK));
      this.fill = 0;
    }
    this.keyChunks[this.keyChunks.length - 1]![this.fill] = k;
    this.docChunks[this.docChunks.length - 1]![this.fill++] = docid;
    this.adds++;
    this.size++;
  }

  del(k: number, docid: number): void {
    this.dels ??= new Map();
    let list = this.dels.get(k);
    if (!list) this.dels.set(k, (list = []));
    list.push(docid);
    this.size++;
  }

  /**
   * The additions grouped by key (stable: each key's docids keep their order; key k owns
   * docs[start[k], start[k+1])) and the removals, leaving the log empty: its chunks are dropped
   * before the merge allocates its own memory.
   */
  take(): { start: Uint32Array; docs: Uint32Array; dels: Map<number, number[]> | null } {
    const count = this.keys;
    const start = new Uint32Array(count + 1);
    const chunkLength = (c: number): number => (c === this.keyChunks.length - 1 ? this.fill : LOG_CHUNK);
    for (let c = 0; c < this.keyChunks.length; c++) {
      const keys = this.keyChunks[c]!;
      for (let i = 0, n = chunkLength(c); i < n; i++) start[keys[i]! + 1]!++;
    }
    for (let k = 0; k < count; k++) start[k + 1]! += start[k]!;
    const fill = start.slice(0, count);
    const docs = new Uint32Array(this.adds);
    for (let c = 0; c < this.keyChunks.length; c++) {
      const keys = this.keyChunks[c]!;
      const ids = this.docChunks[c]!;
      // Each chunk is dropped once read.
      this.keyChunks[c] = this.docChunks[c] = undefined as never;
      for (let i = 0, n = chunkLength(c); i < n; i++) docs[fill[keys[i]!]!++] = ids[i]!;
    }
    const dels = this.dels;
    this.reset();
    return { start, docs, dels };
  }

  /** Empties the log and gives its memory back. */
  reset(): void {
    this.lastDoc = new Int32Array(1024).fill(-1);
    this.keyChunks = [];
    this.docChunks = [];
    this.fill = LOG_CHUNK;
    this.adds = 0;
    this.keys = 0;
    this.dels = null;
    this.size = 0;
  }
}

function isEmptyDb(db: Database<Buffer, string>): boolean {
  for (const _ of db.getKeys({ limit: 1 })) return false;
  return true;
}

/**
 * A posting list after the batch's additions and removals, serialized; null when it ends empty.
 * `raw` is the stored list (absent for a new key).
 */
function mergedPostings(raw: Uint8Array | undefined, add: Uint32Array, del: number[] | undefined): Buffer | null {
  let bitmap: InstanceType<typeof RoaringBitmap32>;
  if (raw) {
    // New documents have the highest docids: most stored lists only grow at their end.
    const appended = del ? undefined : appendAscending(raw, add);
    if (appended) return appended;
    bitmap = RoaringBitmap32.deserialize(raw.subarray(0, raw.length), true);
    if (del) bitmap.removeMany(del);
    if (add.length) bitmap.addMany(add);
  } else {
    // A new key: its docids usually arrive in ascending order, serialized without roaring.
    const direct = del ? undefined : serializeAscending(add);
    if (direct) return direct.length > 8 ? direct : null;
    bitmap = new RoaringBitmap32(add);
  }
  return bitmap.isEmpty ? null : (bitmap.serialize(true) as unknown as Buffer);
}

/**
 * Writes computed by a merge and not yet put: a value to put, or a removal. Values are copied into
 * arena chunks rather than kept as a buffer each (a batch computes hundreds of thousands of them:
 * that many small objects would be garbage for V8 to collect), and a merge puts them a slice at a
 * time (`spill`), so a list holds a slice's values, or a flush's stored entries.
 */
const ARENA_CHUNK = 1 << 20;

class WriteList<K extends string | number> {
  readonly keys: K[] = [];
  /** Per key: its arena chunk, or -1 for a removal, and its value's start and end in the chunk. */
  private chunkOf = new Int32Array(1024);
  private starts = new Int32Array(1024);
  private ends = new Int32Array(1024);
  private chunks: Buffer[] = [];
  private used = ARENA_CHUNK;
  put(key: K, value: Uint8Array): void {
    const at = this.reserve(key, value.length);
    this.chunks[this.chunks.length - 1]!.set(value, at);
  }
  /** Room for a value of `size` bytes under `key`: its offset in `last`, for the caller to fill. */
  reserve(key: K, size: number): number {
    let chunk = this.chunks[this.chunks.length - 1];
    if (!chunk || this.used + size > chunk.length) {
      chunk = Buffer.allocUnsafe(Math.max(ARENA_CHUNK, size));
      this.chunks.push(chunk);
      this.used = 0;
    }
    const at = this.used;
    this.push(key, this.chunks.length - 1, at, at + size);
    this.used += size;
    return at;
  }
  /** Bytes of the values held (the arena chunks in use). */
  get bytes(): number {
    return this.chunks.length === 0 ? 0 : (this.chunks.length - 1) * ARENA_CHUNK + this.used;
  }

  /** The chunk `reserve` gave room in. */
  get last(): Buffer {
    return this.chunks[this.chunks.length - 1]!;
  }
  remove(key: K): void {
    this.push(key, -1, 0, 0);
  }
  private push(key: K, chunk: number, start: number, end: number): void {
    const i = this.keys.length;
    if (i >= this.starts.length) {
      const grow = (from: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
        const to = new Int32Array(i * 2);
        to.set(from);
        return to;
      };
      this.chunkOf = grow(this.chunkOf);
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
    }
    this.keys.push(key);
    this.chunkOf[i] = chunk;
    this.starts[i] = start;
    this.ends[i] = end;
  }
  /** Each write in order: the value, or null for a removal. */
  forEach(visit: (key: K, value: Uint8Array | null) => void): void {
    for (let i = 0; i < this.keys.length; i++) {
      const chunk = this.chunkOf[i]!;
      visit(this.keys[i]!, chunk >= 0 ? this.chunks[chunk]!.subarray(this.starts[i]!, this.ends[i]!) : null);
    }
  }
  /** Writes in order (see `writeTo`), then starts over empty, its first arena chunk kept for the next slice. */
  spill(db: Database<Buffer, K>, append = false): void {
    if (this.keys.length === 0) return;
    this.writeTo(db, append);
    this.keys.length = 0;
    // LMDB copied the values: the first chunk serves the next slice (a value larger than a chunk had one of its own)
    const first = this.chunks[0];
    this.chunks = first?.length === ARENA_CHUNK ? [first] : [];
    this.used = this.chunks.length > 0 ? 0 : ARENA_CHUNK;
  }
  /**
   * Writes in order. `appendFrom`: keys from this one on (numbers) or all keys (true) sort after
   * every key the database holds and come in ascending order, so they are appended (see
   * `appendPut`).
   */
  writeTo(db: Database<Buffer, K>, appendFrom: boolean | number = false): void {
    for (let i = 0; i < this.keys.length; i++) {
      const chunk = this.chunkOf[i]!;
      const key = this.keys[i]!;
      if (chunk < 0) db.removeSync(key);
      else {
        const value = this.chunks[chunk]!.subarray(this.starts[i]!, this.ends[i]!);
        if (appendFrom === true || (typeof appendFrom === 'number' && (key as number) >= appendFrom)) appendPut(db, key, value);
        else db.putSync(key, value);
      }
    }
  }
}

/**
 * The stored entries (kw-entries) of a flush before they are encoded: per document its fields as
 * `fid, n, id x n, position x n` in an arena of 32-bit chunks, ids provisional or not (see
 * BatchWriter.idOf). They are encoded once, with the settled ids, where they used to be encoded
 * at extraction, then decoded and encoded again to replace the provisional ids.
 */
const ENTRY_CHUNK = 1 << 20;

export interface ExportedEntries {
  docids: number[];
  starts: number[];
  chunkOf: number[];
  chunks: Uint32Array[];
}

class PendingEntries {
  private readonly docids: number[] = [];
  /** Per document: its chunk, or -1 for a removal, and where it starts in the chunk. */
  private readonly chunkOf: number[] = [];
  private readonly starts: number[] = [];
  private chunks: Uint32Array[] = [];
  private used = ENTRY_CHUNK;

  get length(): number {
    return this.docids.length;
  }

  put(docid: number, fields: ReadonlyArray<readonly [number, ArrayLike<number>, ArrayLike<number>]>): void {
    let size = 1;
    for (const [, ids] of fields) size += 2 + 2 * ids.length;
    let chunk = this.chunks[this.chunks.length - 1];
    if (!chunk || this.used + size > chunk.length) {
      chunk = new Uint32Array(Math.max(ENTRY_CHUNK, size));
      this.chunks.push(chunk);
      this.used = 0;
    }
    let at = this.used;
    this.docids.push(docid);
    this.chunkOf.push(this.chunks.length - 1);
    this.starts.push(at);
    chunk[at++] = fields.length;
    for (const [fid, ids, positions] of fields) {
      const n = ids.length;
      chunk[at++] = fid;
      chunk[at++] = n;
      for (let i = 0; i < n; i++) chunk[at + i] = ids[i]!;
      at += n;
      for (let i = 0; i < n; i++) chunk[at + i] = positions[i]!;
      at += n;
    }
    this.used = at;
  }

  remove(docid: number): void {
    this.docids.push(docid);
    this.chunkOf.push(-1);
    this.starts.push(0);
  }

  /** The entries as plain data for another thread (documents new to the index only: no removals). */
  exportEntries(): ExportedEntries {
    return { docids: this.docids, starts: this.starts, chunkOf: this.chunkOf, chunks: this.chunks };
  }

  /** Adds another writer's entries, with their field ids and word ids mapped to this writer's. */
  absorb(other: ExportedEntries, fid: (fid: number) => number, id: (id: number) => number): void {
    const fields: Array<[number, Uint32Array, Uint32Array]> = [];
    for (let d = 0; d < other.docids.length; d++) {
      const chunk = other.chunks[other.chunkOf[d]!]!;
      let at = other.starts[d]!;
      const count = chunk[at++]!;
      fields.length = 0;
      for (let f = 0; f < count; f++) {
        const n = chunk[at + 1]!;
        const ids = chunk.subarray(at + 2, at + 2 + n);
        for (let i = 0; i < n; i++) ids[i] = id(ids[i]!);
        fields.push([fid(chunk[at]!), ids, chunk.subarray(at + 2 + n, at + 2 + 2 * n)]);
        at += 2 + 2 * n;
      }
      this.put(other.docids[d]!, fields);
    }
  }

  /** The entries encoded, in order, with each id passed through `real`. */
  encode(real: (id: number) => number): WriteList<number> {
    const out = new WriteList<number>();
    for (let d = 0; d < this.docids.length; d++) {
      const c = this.chunkOf[d]!;
      if (c < 0) {
        out.remove(this.docids[d]!);
        continue;
      }
      const chunk = this.chunks[c]!;
      let at = this.starts[d]!;
      const count = chunk[at++]!;
      const fields: Array<[number, Uint32Array, Uint32Array]> = [];
      for (let f = 0; f < count; f++) {
        const fid = chunk[at]!;
        const n = chunk[at + 1]!;
        const ids = chunk.subarray(at + 2, at + 2 + n);
        for (let i = 0; i < n; i++) ids[i] = real(ids[i]!);
        fields.push([fid, ids, chunk.subarray(at + 2 + n, at + 2 + 2 * n)]);
        at += 2 + 2 * n;
      }
      out.put(this.docids[d]!, encodeEntryView(fields));
    }
    return out;
  }
}

/** Pending postings of one database keyed by string (one posting list per key). */
/** The additions of a delta map extracted in another thread (see parallel-extract.ts): key i owns docs[start[i], start[i+1]). */
export interface ExportedDeltas {
  keys: string[];
  start: Uint32Array;
  docs: Uint32Array;
}

/** Keys a batch added to a database or removed from it, with whether each was there before the batch. */
export class KeyMembership {
  /** key -> [there before the batch, there now]. */
  readonly changes = new Map<string, [before: boolean, now: boolean]>();

  /** `key` was just added (true) or removed (false). */
  note(key: string, present: boolean): void {
    const known = this.changes.get(key);
    if (known) known[1] = present;
    else this.changes.set(key, [!present, present]);
  }
}

class DeltaMap {
  /**
   * Keys this batch added to the database or removed from it: kept for kw-words only, whose keys
   * are the typo dictionary (see lexicon.ts).
   */
  readonly membership: KeyMembership | null;
  constructor(tracksMembership = false) {
    this.membership = tracksMembership ? new KeyMembership() : null;
  }
  /**
   * Key -> its number, built only once a key may come twice: keys that extraction knows to be
   * new (`fresh`: a word's first slot, a pair's first occurrence) skip it, and a batch of new
   * documents only looks strings up where it must (prefixes, values).
   */
  private index: Map<string, number> | null = null;
  private keys: string[] = [];
  private readonly log = new PostingLog();
  get size(): number {
    return this.log.size;
  }
  /** The additions grouped by key, leaving the map empty (additions only: a detached writer sees new documents only). */
  exportDeltas(): ExportedDeltas {
    const { start, docs } = this.log.take();
    const keys = this.keys;
    this.keys = [];
    this.index = null;
    return { keys, start, docs };
  }
  /** Adds another writer's additions after this one's (their documents are not in this map). */
  absorb(other: ExportedDeltas): void {
    const { keys, start, docs } = other;
    for (let i = 0; i < keys.length; i++) {
      const k = this.entry(keys[i]!);
      for (let j = start[i]!; j < start[i + 1]!; j++) this.log.append(k, docs[j]!);
    }
  }
  add(key: string, docid: number): void {
    this.log.push(this.entry(key), docid);
  }
  /** Adds straight from extraction, for a document with nothing indexed before. */
  addOnce(key: string, docid: number): boolean {
    return this.log.push(this.entry(key), docid) === 1;
  }
  del(key: string, docid: number): void {
    this.log.del(this.entry(key), docid);
  }
  private indexed(): Map<string, number> {
    if (!this.index) {
      this.index = new Map();
      for (let k = 0; k < this.keys.length; k++) this.index.set(this.keys[k]!, k);
    }
    return this.index;
  }
  /** The number of `key` in this batch. */
  entry(key: string): number {
    const index = this.indexed();
    let k = index.get(key);
    if (k === undefined) {
      k = this.log.newKey();
      this.keys.push(key);
      index.set(key, k);
    }
    return k;
  }
  /**
   * The number of `key`, which the caller's own tables say it never entered since the last
   * merge (only `entry`, used by the update path, may have entered it: then it is looked up).
   */
  fresh(key: string): number {
    if (this.index) return this.entry(key);
    this.keys.push(key);
    return this.log.newKey();
  }
  push(k: number, docid: number): number {
    return this.log.push(k, docid);
  }
  append(k: number, docid: number): void {
    this.log.append(k, docid);
  }
  /**
   * Merges the deltas into the posting lists and their tails and resets (inside the write
   * transaction; `empty`: the database held nothing before, so nothing is read and the lists are
   * appended). Keys go in sorted order, written a slice at a time (see SLICE_KEYS).
   */
  mergeInto(db: Database<Buffer, string>, tail: Database<Buffer, string>, empty: boolean): void {
    const out = new WriteList<string>();
    const tails = new WriteList<string>();
    const { start, docs, dels } = this.log.take();
    // Sorted keys make the B-tree writes sequential.
    const keys = this.keys;
    const order = keyOrder(keys);
    let n = 0;
    for (const k of order) {
      if ((++n & SLICE_KEYS) === 0 || out.bytes + tails.bytes > SLICE_BYTES) spillSlice(out, tails, db, tail, empty);
      const key = keys[k]!;
      const add = docs.subarray(start[k]!, start[k + 1]!);
      const del = dels?.get(k);
      const raw = empty ? undefined : db.getBinaryFast(key);
      if (raw === undefined && del === undefined) {
        // A new key (the most common case): its list serialized straight into the arena.
        const size = serializedAscendingSize(add);
        if (size > 8) {
          const at = out.reserve(key, size);
          writeAscending(add, out.last, at);
          this.membership?.note(key, true);
          continue;
        }
      }
      if (raw && hasTail(raw.length)) {
        if (!mergeLongList(db, tail, key, raw.length, add, del, out, tails)) this.membership?.note(key, false);
        continue;
      }
      const merged = mergedPostings(raw, add, del);
      if (merged) {
        out.put(key, merged);
        if (!raw) this.membership?.note(key, true);
      } else if (raw) {
        out.remove(key);
        this.membership?.note(key, false);
      }
    }
    spillSlice(out, tails, db, tail, empty);
    this.index = null;
    this.keys = [];
  }
}

/**
 * A merge writes what it computed every SLICE_KEYS + 1 keys: the pages a slice read are still in
 * memory when its writes change them, and a flush holds a slice's values rather than the whole
 * batch's. Computed ahead and written after, a 20,000-document batch at 200k documents held up to
 * 110 MiB of values, and in a 512 MiB container the pages the merge had read were evicted by the
 * time they were written, so each was read from disk twice (bench/README.md, "Memory in a
 * container").
 */
const SLICE_KEYS = 255;

/**
 * Or once a slice's values take this many bytes: the records of frequent prefixes (kw-prefix-parts)
 * are a few hundred keys of up to megabytes each at 200k documents, and a slice of them held tens
 * of MB in the write process of a 512 MiB container.
 */
const SLICE_BYTES = 4 * 2 ** 20;

/** Puts a merge's pending lists (appended when the database was empty) and tails. */
function spillSlice(lists: WriteList<string>, tails: WriteList<string>, db: Database<Buffer, string>, tailDb: Database<Buffer, string>, append: boolean): void {
  lists.spill(db, append);
  tails.spill(tailDb);
}

/**
 * A long stored list (see tails.ts): additions go to its tail, folded into the list once the tail
 * reaches a quarter of it; removals fold at once. `listBytes` is the stored list's size (its fast
 * read is invalid once the tail is read). False when the key's list is gone (every document removed).
 */
function mergeLongList(
  db: Database<Buffer, string>,
  tailDb: Database<Buffer, string>,
  key: string,
  listBytes: number,
  add: Uint32Array,
  del: number[] | undefined,
  out: WriteList<string>,
  tails: WriteList<string>,
): boolean {
  const tailRaw = tailDb.getBinaryFast(key);
  const hadTail = tailRaw !== undefined;
  let kept = true;
  if (!del) {
    // Without a tail, additions about as large as a quarter of the list fold straight away (a
    // bulk load's second batch): no tail is built only to be folded.
    const grown = hadTail || !shouldFold(2 * add.length, listBytes) ? mergedPostings(tailRaw, add, undefined) : null;
    if (grown && !shouldFold(grown.length, listBytes)) {
      tails.put(key, grown);
      return true;
    }
    const more = grown ? RoaringBitmap32.deserialize(grown, true).toUint32Array() : add;
    const list = valueBytes(db.getBinaryFast(key)!);
    out.put(key, mergedPostings(list, more, undefined) ?? list);
  } else {
    const bitmap = tailRaw ? RoaringBitmap32.deserialize(valueBytes(tailRaw), true) : new RoaringBitmap32();
    bitmap.orInPlace(RoaringBitmap32.deserialize(valueBytes(db.getBinaryFast(key)!), true));
    bitmap.removeMany(del);
    if (add.length) bitmap.addMany(add);
    kept = !bitmap.isEmpty;
    if (kept) out.put(key, bitmap.serialize(true) as unknown as Buffer);
    else out.remove(key);
  }
  if (hadTail) tails.remove(key);
  return kept;
}

/**
 * Pending postings of word parts (see `encodeWordRecord`): keys are (word, tag) pairs numbered
 * by the word's slot, so the hot path builds no key string; one record per word is written.
 */
/** The word parts extracted in another thread: part i is (words[i], tags[i]). */
export interface ExportedParts {
  words: string[];
  tags: number[];
  start: Uint32Array;
  docs: Uint32Array;
}

class PartsDelta {
  private readonly log = new PostingLog();
  private keyWord: string[] = [];
  private keyTag: number[] = [];
  /** The word slot of each part (see WordSlot.no): one slot per word until the merge. */
  private keySlot: number[] = [];
  get size(): number {
    return this.log.size;
  }
  exportParts(): ExportedParts {
    const { start, docs } = this.log.take();
    const out = { words: this.keyWord, tags: this.keyTag, start, docs };
    this.keyWord = [];
    this.keyTag = [];
    this.keySlot = [];
    return out;
  }
  /** Appends postings to part `k` (absorbing another writer's parts). */
  appendAll(k: number, docs: Uint32Array, from: number, to: number): void {
    for (let j = from; j < to; j++) this.log.append(k, docs[j]!);
  }
  /** A new part (`word`, `tag`); `group` numbers the word (its slot), the same for all its parts until the merge. */
  entry(word: string, group: number, tag: number): number {
    this.keyWord.push(word);
    this.keyTag.push(tag);
    this.keySlot.push(group);
    return this.log.newKey();
  }
  push(k: number, docid: number): number {
    return this.log.push(k, docid);
  }
  append(k: number, docid: number): void {
    this.log.append(k, docid);
  }
  del(k: number, docid: number): void {
    this.log.del(k, docid);
  }
  /** Merges the deltas into the word records and their tails and resets, as DeltaMap.mergeInto does. */
  mergeInto(
    db: Database<Buffer, string>,
    tailDb: Database<Buffer, string>,
    empty: boolean,
    settleId: (word: string, stored: number | undefined) => number,
    /** Told each part of a word new to the database, with its docids (ascending). */
    observeNew?: (word: string, tag: number, docs: Uint32Array) => void,
  ): void {
    const out = new WriteList<string>();
    const tails = new WriteList<string>();
    const { start, docs, dels } = this.log.take();
    const words = this.keyWord;
    const tags = this.keyTag;
    const order = partOrder(words, tags, this.keySlot);
    /** The parts of `stored` with the deltas of order[i..j) merged in (`withDels` false: additions only). */
    const mergeGroup = (stored: WordPart[], i: number, j: number, withDels: boolean): WordPart[] => {
      const parts: WordPart[] = [];
      let s = 0;
      for (let x = i; x < j; x++) {
        const k = order[x]!;
        const tag = tags[k]!;
        while (s < stored.length && stored[s]!.tag < tag) parts.push(stored[s++]!);
        const old = s < stored.length && stored[s]!.tag === tag ? stored[s++]!.bitmap : undefined;
        const merged = mergedPostings(old, docs.subarray(start[k]!, start[k + 1]!), withDels ? dels?.get(k) : undefined);
        if (merged) parts.push({ tag, bitmap: merged });
      }
      while (s < stored.length) parts.push(stored[s++]!);
      return parts;
    };
    let n = 0;
    for (let i = 0; i < order.length; ) {
      if ((++n & SLICE_KEYS) === 0 || out.bytes + tails.bytes > SLICE_BYTES) spillSlice(out, tails, db, tailDb, empty);
      const word = words[order[i]!]!;
      let j = i + 1;
      while (j < order.length && words[order[j]!] === word) j++;
      const raw = empty ? undefined : db.getBinaryFast(word);
      if (raw && hasTail(raw.length)) {
        // A long record (see tails.ts): its tail takes the additions.
        const recordBytes = raw.length;
        const id = settleId(word, recordId(raw));
        let removes = false;
        for (let x = i; x < j && !removes; x++) removes = dels?.has(order[x]!) ?? false;
        const tailRaw = tailDb.getBinaryFast(word);
        const tail = tailRaw ? decodeWordRecord(tailRaw) : [];
        if (!removes) {
          const grown = mergeGroup(tail, i, j, false);
          const grownRecord = encodeWordRecord(id, grown);
          if (!shouldFold(grownRecord.length, recordBytes)) tails.put(word, grownRecord);
          else {
            out.put(word, encodeWordRecord(id, unionParts(decodeWordRecord(db.getBinaryFast(word)!), grown)));
            if (tailRaw) tails.remove(word);
          }
        } else {
          const parts = mergeGroup(unionParts(decodeWordRecord(db.getBinaryFast(word)!), tail), i, j, true);
          if (parts.length > 0) out.put(word, encodeWordRecord(id, parts));
          else out.remove(word);
          if (tailRaw) tails.remove(word);
        }
        i = j;
        continue;
      }
      const stored = raw ? decodeWordRecord(raw) : [];
      if (!raw && observeNew) for (let x = i; x < j; x++) if (!dels?.has(order[x]!)) observeNew(word, tags[order[x]!]!, docs.subarray(start[order[x]!]!, start[order[x]! + 1]!));
      const id = settleId(word, raw ? recordId(raw) : undefined);
      const parts = mergeGroup(stored, i, j, true);
      if (parts.length > 0) out.put(word, encodeWordRecord(id, parts));
      else if (raw) out.remove(word);
      i = j;
    }
    spillSlice(out, tails, db, tailDb, empty);
    this.keyWord = [];
    this.keyTag = [];
    this.keySlot = [];
  }
}

/**
 * The parts in (word, tag) order. Parts of one word share its slot: the slots' words are sorted
 * (a fifth as many strings as parts), the parts placed by a counting pass, then each word's few
 * parts sorted by tag.
 */
function partOrder(words: readonly string[], tags: readonly number[], slots: readonly number[]): number[] {
  const n = words.length;
  let maxSlot = -1;
  for (let k = 0; k < n; k++) if (slots[k]! > maxSlot) maxSlot = slots[k]!;
  const firstKey = new Int32Array(maxSlot + 1).fill(-1);
  const unique: number[] = [];
  for (let k = 0; k < n; k++) {
    const slot = slots[k]!;
    if (firstKey[slot] === -1) {
      firstKey[slot] = k;
      unique.push(slot);
    }
  }
  const uniqueOrder = orderByKey(unique.length, (i) => words[firstKey[unique[i]!]!]!);
  // The start of each slot's run in the order, then the parts dropped in.
  const start = new Int32Array(maxSlot + 1);
  const count = new Int32Array(maxSlot + 1);
  for (let k = 0; k < n; k++) count[slots[k]!]!++;
  let at = 0;
  for (const i of uniqueOrder) {
    const slot = unique[i]!;
    start[slot] = at;
    at += count[slot]!;
  }
  const order = new Array<number>(n);
  for (let k = 0; k < n; k++) order[start[slots[k]!]!++] = k;
  for (let i = 0; i < n; ) {
    const slot = slots[order[i]!]!;
    let j = i + 1;
    while (j < n && slots[order[j]!] === slot) j++;
    for (let x = i + 1; x < j; x++) {
      const k = order[x]!;
      let y = x - 1;
      while (y >= i && tags[order[y]!]! > tags[k]!) {
        order[y + 1] = order[y]!;
        y--;
      }
      order[y + 1] = k;
    }
    i = j;
  }
  return order;
}

/** Parts of two records (each sorted by tag) with the lists of equal tags united. */
function unionParts(a: readonly WordPart[], b: readonly WordPart[]): WordPart[] {
  const out: WordPart[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]!.tag < b[j]!.tag)) out.push(a[i++]!);
    else if (i >= a.length || b[j]!.tag < a[i]!.tag) out.push(b[j++]!);
    else out.push({ tag: a[i]!.tag, bitmap: unionLists(a[i++]!.bitmap, b[j++]!.bitmap) });
  }
  return out;
}

/** The union of two serialized lists: appended in place when `more` only holds higher docids. */
function unionLists(list: Uint8Array, more: Uint8Array): Uint8Array {
  return mergedPostings(list, RoaringBitmap32.deserialize(more, true).toUint32Array(), undefined) ?? list;
}

/**
 * One word's deltas in the batch, resolved once: a new document then costs one map lookup per
 * word instead of a key string and a lookup per derived posting (field, position, prefixes).
 */
interface WordSlot {
  word: string;
  /** The slot's row in the batch's `SlotParts` tables. */
  no: number;
  plain: number | null;
  exact: number | null;
  /** The word's entry in the values deltas as a value of one word, once met as one. */
  value: number | null;
  /** Whether the word's prefix keys are in the prefix table yet. */
  prefixed: boolean;
  /** The last documents added to the word's plain and exact postings. */
  plainDoc: number;
  exactDoc: number;
  /** The document whose first position of the word is in `first`, and the field last seen in it. */
  doc: number;
  first: number;
  fid: number;
  /** The word id, -1 until resolved. */
  id: number;
  /** Ids (in `BatchWriter.pairPrefixIds`) of the word's first 1..PAIR_PREFIX_MAX characters, once needed. */
  pairPrefixes: number[] | null;
}

/**
 * A hash table from two non-negative integers to a row of values: the pair entries of a batch
 * (see BatchWriter.addPair), prefix entries (BatchWriter.prefixEntries). Open addressing over
 * one typed array: a string key per occurrence of a pair (2.3 million for the movies) cost more
 * than the rest of extraction, and a small Map per first word still took a tenth of it.
 */
class PairTable {
  /**
   * Rows of `width` ints: (first, second, then the caller's values) in one array, so a probe
   * reads one cache line rather than an array per column.
   */
  cells: Int32Array;
  private mask = (1 << 16) - 1;
  private size = 0;

  constructor(private readonly width = 3) {
    this.cells = this.empty(1 << 16);
  }

  private empty(capacity: number): Int32Array {
    const cells = new Int32Array(this.width * capacity);
    for (let i = 0; i < cells.length; i += this.width) cells[i] = -1;
    return cells;
  }

  /** The row of (first, second) in `cells`, or the empty row where it would go (`cells[row] === -1`). */
  find(first: number, second: number): number {
    const cells = this.cells;
    const width = this.width;
    let h = Math.imul(first, 0x9e3779b1) ^ Math.imul(second + 0x7f4a7c15, 0x85ebca77);
    h ^= h >>> 15;
    let at = h & this.mask;
    while (cells[width * at] !== -1 && (cells[width * at] !== first || cells[width * at + 1] !== second)) at = (at + 1) & this.mask;
    return width * at;
  }

  /** A new row for (first, second), which is not in the table; its values are the caller's to fill. */
  insert(first: number, second: number): number {
    if (2 * (this.size + 1) > this.mask + 1) this.grow();
    const at = this.find(first, second);
    this.cells[at] = first;
    this.cells[at + 1] = second;
    this.size++;
    return at;
  }

  /** The value of (first, second), -1 when there is none yet. */
  get(first: number, second: number): number {
    const at = this.find(first, second);
    return this.cells[at] === -1 ? -1 : this.cells[at + 2]!;
  }

  set(first: number, second: number, value: number): void {
    let at = this.find(first, second);
    if (this.cells[at] === -1) at = this.insert(first, second);
    this.cells[at + 2] = value;
  }

  private grow(): void {
    const old = this.cells;
    const width = this.width;
    const capacity = 2 * (this.mask + 1);
    this.cells = this.empty(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < old.length; i += width) {
      if (old[i] === -1) continue;
      const at = this.find(old[i]!, old[i + 1]!);
      for (let c = 0; c < width; c++) this.cells[at + c] = old[i + c]!;
    }
  }

  clear(): void {
    this.cells = this.empty(1 << 16);
    this.mask = (1 << 16) - 1;
    this.size = 0;
  }
}

/**
 * Columns of a `SlotParts` row: the first fields by id, then the position buckets, then the
 * prefix entries, then the rows of the prefix records (see PrefixParts).
 */
const SLOT_FIELDS = 8;
const SLOT_BUCKETS = MAX_POSITION_BUCKET + 1;
const SLOT_ROW = SLOT_FIELDS + SLOT_BUCKETS + PREFIX_MAX + PREFIX_MAX;

/**
 * The delta entries of each word slot of a batch: its part per field and per position bucket,
 * and its prefix keys, in one table of rows rather than three small arrays per word (45 MB of
 * arrays for the 84k words of a 20k-document batch). Fields past the first SLOT_FIELDS are rare
 * (`*` searchable with many fields) and go to a map.
 */
class SlotParts {
  private table = new Int32Array(1024 * SLOT_ROW).fill(-1);
  rows = 0;

  addRow(): number {
    const no = this.rows++;
    if (this.rows * SLOT_ROW > this.table.length) {
      const grown = new Int32Array(this.table.length * 2).fill(-1);
      grown.set(this.table);
      this.table = grown;
    }
    return no;
  }

  /** The cell of field `fid` (below SLOT_FIELDS) in row `no`. */
  fieldCell(no: number, fid: number): number {
    return no * SLOT_ROW + fid;
  }

  bucketCell(no: number, bucket: number): number {
    return no * SLOT_ROW + SLOT_FIELDS + bucket;
  }

  /** The row's prefix keys start here, -1 past the last. */
  prefixCell(no: number): number {
    return no * SLOT_ROW + SLOT_FIELDS + SLOT_BUCKETS;
  }

  /** The row's prefix-record rows start here, -1 past the last (all -1: not looked up yet). */
  prefixRowCell(no: number): number {
    return no * SLOT_ROW + SLOT_FIELDS + SLOT_BUCKETS + PREFIX_MAX;
  }

  /** -1 for an empty cell. */
  get cells(): Int32Array {
    return this.table;
  }

  /** Entries of fields past SLOT_FIELDS, by `moreKey`. */
  readonly moreFields = new Map<number, number>();
  moreKey(no: number, fid: number): number {
    return no * 0x100000 + fid;
  }

  /** The entry in `parts` of field `fid`'s part of row `no` (the row of `word`), made on first use. */
  fieldEntry(parts: PartsDelta, no: number, word: string, fid: number): number {
    if (fid >= SLOT_FIELDS) {
      const key = this.moreKey(no, fid);
      let k = this.moreFields.get(key);
      if (k === undefined) this.moreFields.set(key, (k = parts.entry(word, no, fieldTag(fid))));
      return k;
    }
    const at = this.fieldCell(no, fid);
    let k = this.table[at]!;
    if (k < 0) this.table[at] = k = parts.entry(word, no, fieldTag(fid));
    return k;
  }

  /** The entry in `parts` of position bucket `bucket`'s part of row `no` (the row of `word`), made on first use. */
  bucketEntry(parts: PartsDelta, no: number, word: string, bucket: number): number {
    const at = this.bucketCell(no, bucket);
    let k = this.table[at]!;
    if (k < 0) this.table[at] = k = parts.entry(word, no, bucketTag(bucket));
    return k;
  }

  clear(): void {
    this.table = new Int32Array(1024 * SLOT_ROW).fill(-1);
    this.moreFields.clear();
    this.rows = 0;
  }
}

/**
 * Pending postings of the prefix records (kw-prefix-parts, see PREFIX_RECORD_MIN_WORDS): a word's
 * field parts go to the same parts of its recorded prefixes' records, and a document to the bucket
 * of each recorded prefix's first position in it. A prefix has a row of part entries as a word
 * slot has (`SlotParts`), found from the word's slot by integer probes, or by its string on the
 * update path.
 */
class PrefixParts {
  readonly delta = new PartsDelta();
  private table = new SlotParts();
  private names: string[] = [];
  private byName = new Map<string, number>();
  /** Row by (the row of the prefix one character shorter + 1, or 0, next code point); NOT_RECORDED for a prefix without a record. */
  private readonly trie = new PairTable();
  /** Per row: the last document that met the prefix, and the prefix's first position in it (see `meet`). */
  private lastDoc = new Int32Array(1024).fill(-1);
  private first = new Int32Array(1024);
  private met: number[] = [];

  /** `recorded`: the prefixes with a record, which the writer adds to as prefixes reach the bound. */
  constructor(readonly recorded: Set<string>) {}

  get size(): number {
    return this.delta.size;
  }

  private newRow(prefix: string): number {
    const row = this.table.addRow();
    this.names.push(prefix);
    this.byName.set(prefix, row);
    if (row >= this.lastDoc.length) {
      const lastDoc = new Int32Array(this.lastDoc.length * 2).fill(-1);
      lastDoc.set(this.lastDoc);
      this.lastDoc = lastDoc;
      const first = new Int32Array(this.first.length * 2);
      first.set(this.first);
      this.first = first;
    }
    return row;
  }

  /** The row of a recorded prefix. */
  row(prefix: string): number {
    return this.byName.get(prefix) ?? this.newRow(prefix);
  }

  /** The rows of `word`'s recorded prefixes into `cells` from `at`, shortest first (-1 past the last). */
  rowsOf(word: string, cells: Int32Array, at: number): void {
    // Recorded prefixes are prefix-closed: none longer past one without a record.
    prefixValues(word, this.trie, (prefix) => (this.recorded.has(prefix) ? this.row(prefix) : NOT_RECORDED), cells, at);
  }

  /** The entry of field `fid`'s part of the record of `row`. */
  field(row: number, fid: number): number {
    return this.table.fieldEntry(this.delta, row, this.names[row]!, fid);
  }

  bucket(row: number, bucket: number): number {
    return this.table.bucketEntry(this.delta, row, this.names[row]!, bucket);
  }

  /** The entry of a part named by tag (`fid`: this writer's field id of a field tag). */
  part(row: number, tag: number, fid: (tag: number) => number = (t) => t): number {
    return tag & BUCKET_TAG ? this.bucket(row, tag & ~BUCKET_TAG) : this.field(row, fid(tag));
  }

  /** A word of `docid` with the prefix of `row` first occurs at `position`. */
  meet(row: number, docid: number, position: number): void {
    if (this.lastDoc[row] !== docid) {
      this.lastDoc[row] = docid;
      this.first[row] = position;
      this.met.push(row);
    } else if (position < this.first[row]!) this.first[row] = position;
  }

  /** Puts `docid` in the bucket of each prefix's first position met since the last call. */
  placeMet(docid: number): void {
    for (const row of this.met) this.delta.push(this.bucket(row, positionBucket(this.first[row]!)), docid);
    this.met.length = 0;
  }

  /** Rows point at deltas the merge is about to drop. */
  clear(): void {
    this.table.clear();
    this.names = [];
    this.byName = new Map();
    this.trie.clear();
    this.lastDoc = new Int32Array(1024).fill(-1);
    this.met.length = 0;
  }
}

const NOT_RECORDED = -2;

/**
 * The values of `word`'s prefixes (up to PREFIX_MAX code points) into `cells` from `at`: found by
 * integer probes in `trie`, keyed by (the value of the prefix one character shorter + 1, or 0,
 * the next code point), and made by `make` the first time; a negative value ends the walk. A
 * word's prefixes cost a probe each, their strings made once per batch.
 */
function prefixValues(word: string, trie: PairTable, make: (prefix: string) => number, cells: Int32Array, at: number): void {
  let parent = 0;
  let end = 0;
  for (let n = 0; n < PREFIX_MAX && end < word.length; n++) {
    const code = word.codePointAt(end)!;
    end += code > 0xffff ? 2 : 1;
    let value = trie.get(parent, code);
    if (value === -1) {
      value = make(word.slice(0, end));
      trie.set(parent, code, value);
    }
    if (value < 0) return;
    cells[at++] = value;
    parent = value + 1;
  }
}

/**
 * Builds the records of a set of prefixes (see PREFIX_RECORD_MIN_WORDS) from their words' parts:
 * field parts united, each document in the bucket of its first word with the prefix. A word's
 * part goes into its longest prefix of the set, and each prefix, once whole, into the one a
 * character shorter (a document's first position under a prefix is the least of those under its
 * longer prefixes): each part is united once, where uniting it into each of its prefixes took a
 * first batch of the movies 2.0 s for 240 records.
 */
class PrefixRecordBuilder {
  private readonly acc = new Map<string, { fields: Map<number, Bitmap>; buckets: Map<number, Bitmap> }>();

  constructor(private readonly prefixes: ReadonlySet<string>) {
    for (const p of prefixes) this.acc.set(p, { fields: new Map(), buckets: new Map() });
  }

  /** The prefixes of the set with none of their own prefixes in it. */
  outermost(): string[] {
    return [...this.prefixes].filter((p) => {
      for (let q = shorterPrefix(p); q !== ''; q = shorterPrefix(q)) if (this.prefixes.has(q)) return false;
      return true;
    });
  }

  /** A part of `word`'s record (`shared`: the caller keeps using `part`). */
  add(word: string, tag: number, part: Bitmap, shared = false): void {
    let longest: string | undefined;
    prefixesOf(word, { put: (q) => this.prefixes.has(q) && (longest = q) });
    if (longest !== undefined) this.unite(this.acc.get(longest)!, tag, part, shared);
  }

  private unite(into: { fields: Map<number, Bitmap>; buckets: Map<number, Bitmap> }, tag: number, part: Bitmap, shared: boolean): void {
    const kind = tag & BUCKET_TAG ? into.buckets : into.fields;
    const known = kind.get(tag);
    if (known) known.orInPlace(part);
    else kind.set(tag, shared ? part.clone() : part);
  }

  /** The records of the prefixes starting with `top` (all: ''), once every word under it was added; their parts let go. */
  finish(top: string, emit: (prefix: string, parts: WordPart[]) => void): void {
    // Longest first: each prefix is whole once the longer ones under it went into it.
    const under = [...this.acc.keys()].filter((p) => p.startsWith(top)).sort((a, b) => b.length - a.length);
    for (const prefix of under) {
      const { fields, buckets } = this.acc.get(prefix)!;
      this.acc.delete(prefix);
      const out: WordPart[] = [...fields].sort((a, b) => a[0] - b[0]).map(([tag, b]) => ({ tag, bitmap: b.serialize(true) as Uint8Array }));
      // (the buckets made a partition: each document in its first; what goes up is that partition)
      const placed = new RoaringBitmap32();
      for (const [tag, b] of [...buckets].sort((x, y) => x[0] - y[0])) {
        b.andNotInPlace(placed);
        placed.orInPlace(b);
        if (!b.isEmpty) out.push({ tag, bitmap: b.serialize(true) as Uint8Array });
      }
      emit(prefix, out);
      const parent = this.acc.get(shorterPrefix(prefix));
      if (!parent) continue;
      for (const [tag, b] of fields) this.unite(parent, tag, b, true);
      for (const [tag, b] of buckets) this.unite(parent, tag, b, true);
    }
  }
}

/**
 * The records of `prefixes` built from the records of their words (kw-word-parts and their
 * tails), after the batch's word records were merged: one pass over the words of each outermost
 * prefix, each record decoded once.
 */
function prefixRecordsFromWords(dbs: KeywordDbs, prefixes: ReadonlySet<string>, emit: (prefix: string, parts: WordPart[]) => void): void {
  const builder = new PrefixRecordBuilder(prefixes);
  for (const top of builder.outermost()) {
    for (const { key, value } of dbs.wordParts.getRange({ start: top })) {
      const word = key as string;
      if (!word.startsWith(top)) break;
      const tail = hasTail(value.length) ? dbs.tails.wordParts.getBinary(word) : undefined;
      for (const raw of tail ? [value, tail] : [value]) forEachRecordPart(raw, (tag, bitmap) => builder.add(word, tag, RoaringBitmap32.deserialize(bitmap, true)));
    }
    builder.finish(top, emit);
  }
}

/**
 * Builds the record of every prefix of PREFIX_RECORD_MIN_WORDS words or more from the word
 * records: the upgrade of an index from format 1.3.0, inside its write transaction. Returns how
 * many prefixes got one.
 */
export function fillPrefixRecords(store: IndexStore, checkpoint: () => void = () => {}): number {
  const dbs = keywordDbs(store);
  const counts = new Map<string, number>();
  for (const word of dbs.words.getKeys()) prefixesOf(word as string, { put: (p) => counts.set(p, (counts.get(p) ?? 0) + 1) });
  const reached = new Set<string>();
  for (const [prefix, n] of counts) if (n >= PREFIX_RECORD_MIN_WORDS) reached.add(prefix);
  prefixRecordsFromWords(dbs, reached, (prefix, parts) => {
    if (parts.length > 0) dbs.prefixParts.putSync(prefix, encodeWordRecord(0, parts));
    checkpoint();
  });
  return reached.size;
}

/** `prefix` without its last code point. */
function shorterPrefix(prefix: string): string {
  const last = prefix.codePointAt(prefix.length - 1)!;
  // (a low surrogate ends a code point of two units)
  return prefix.slice(0, prefix.length - (last >= 0xdc00 && last <= 0xdfff && prefix.length > 1 ? 2 : 1));
}

/** The recorded prefixes of an index: the keys of kw-prefix-parts. */
function recordedPrefixes(dbs: KeywordDbs): Set<string> {
  return new Set(dbs.prefixParts.getKeys() as Iterable<string>);
}

/** Whether kw-words holds at least `n` words starting with `prefix`. */
function hasWords(dbs: KeywordDbs, prefix: string, n: number): boolean {
  let count = 0;
  for (const key of dbs.words.getKeys({ start: prefix })) {
    if (!(key as string).startsWith(prefix)) return false;
    if (++count >= n) return true;
  }
  return false;
}

/** The keys one document contributes to each database; parts are `partKey(word, tag)`. */
interface DocKeys<S extends KeySink = KeySink> {
  words: S;
  exact: S;
  prefixes: S;
  parts: S;
  /** `partKey(prefix, tag)` (see PrefixParts); left empty when the index keeps no prefix records. */
  prefixParts: S;
  values: S;
  pairs: S;
}

const partKey = (word: string, tag: number): string => `${word}\u0000${tag}`;

class FieldIds {
  private readonly ids = new Map<string, number>();
  dirty = false;
  constructor(readonly paths: string[]) {
    paths.forEach((p, i) => this.ids.set(p, i));
  }
  idOf(path: string): number {
    let id = this.ids.get(path);
    if (id === undefined) {
      id = this.paths.length;
      this.paths.push(path);
      this.ids.set(path, id);
      this.dirty = true;
    }
    return id;
  }
}

export function loadFieldPaths(dbs: KeywordDbs): string[] {
  return [...((dbs.meta.get('fields') as string[] | undefined) ?? [])];
}

/** Extract the searchable words of a document with their positions, per field. */
export function extractDocument(doc: Document, analyzer: Analyzer, fields: FieldIds): TextEntry {
  const settings = analyzer.settings;
  const perField = new Map<number, { words: string[]; positions: number[]; next: number }>();
  forEachValue(doc, (path, text) => {
    if (!isSearchable(path, settings.searchableAttributes)) return;
    const fid = fields.idOf(path);
    let f = perField.get(fid);
    if (!f) {
      f = { words: [], positions: [], next: 0 };
      perField.set(fid, f);
    }
    const last = analyzer.tokenizer.indexWords(text, localesFor(path, settings.localizedAttributes), f.next, f.words, f.positions, MAX_POSITION);
    if (last >= 0) f.next = last + HARD_GAP;
  });
  const entry: TextEntry = [];
  for (const [fid, f] of perField) if (f.words.length > 0) entry.push([fid, f.words, f.positions]);
  return entry;
}

function newKeySets(): DocKeys<KeySet> {
  return { words: new KeySet(), exact: new KeySet(), prefixes: new KeySet(), parts: new KeySet(), prefixParts: new KeySet(), values: new KeySet(), pairs: new KeySet() };
}

/** Every key of a stored or new document (the update path; `addNew` is the same for new documents). */
function keysOf<S extends KeySink>(entry: TextEntry, analyzer: Analyzer, paths: readonly string[], prefixSearch: boolean, recorded: ReadonlySet<string> | null, keys: DocKeys<S>): DocKeys<S> {
  /** `visit` for each prefix of `w` with a record (see PrefixParts). */
  const recordedOf = (w: string, visit: (prefix: string) => void) => {
    if (recorded) prefixesOf(w, { put: (prefix) => recorded.has(prefix) && visit(prefix) });
  };
  const firstPosition = new Map<string, number>();
  for (const [fid, words, positions] of entry) {
    // Long texts (descriptions) are not matched as whole values: their sentences would make
    // postings of one document each.
    let from = words.length > MAX_VALUE_FIELD_WORDS ? words.length : 0;
    for (let i = from + 1; i <= words.length; i++) {
      if (i === words.length || positions[i]! - positions[i - 1]! >= VALUE_GAP) {
        if (i - from <= MAX_VALUE_WORDS) keys.values.put(valueKey(words.slice(from, i)));
        from = i;
      }
    }
    const exact = analyzer.isExactAttribute(paths[fid] ?? '');
    const target = exact ? keys.exact : keys.words;
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!;
      const p = positions[i]!;
      if (positions[i + 1] === p + 1) pairKeysOf(w, words[i + 1]!, keys.pairs, prefixSearch);
      const known = firstPosition.get(w);
      if (known === undefined || p < known) firstPosition.set(w, p);
      keys.parts.put(partKey(w, fieldTag(fid)));
      recordedOf(w, (prefix) => keys.prefixParts.put(partKey(prefix, fieldTag(fid))));
      if (!target.put(w)) continue;
      if (prefixSearch) prefixesOf(w, keys.prefixes);
    }
  }
  const prefixFirst = new Map<string, number>();
  for (const [w, p] of firstPosition) {
    keys.parts.put(partKey(w, bucketTag(positionBucket(p))));
    recordedOf(w, (prefix) => {
      const known = prefixFirst.get(prefix);
      if (known === undefined || p < known) prefixFirst.set(prefix, p);
    });
  }
  for (const [prefix, p] of prefixFirst) keys.prefixParts.put(partKey(prefix, bucketTag(positionBucket(p))));
  return keys;
}

function diff(before: Set<string>, after: Set<string> | undefined, docid: number, deltas: DeltaMap): void {
  for (const k of before) if (!after?.has(k)) deltas.del(k, docid);
  if (after) for (const k of after) if (!before.has(k)) deltas.add(k, docid);
}

class BatchWriter {
  readonly words = new DeltaMap(true);
  readonly exact = new DeltaMap();
  readonly prefixes = new DeltaMap();
  readonly parts = new PartsDelta();
  readonly prefixParts: PrefixParts;
  readonly values = new DeltaMap();
  readonly pairs = new DeltaMap();
  readonly analyzer: Analyzer;
  readonly fields: FieldIds;
  private readonly prefixSearch: boolean;
  /** Databases known to hold nothing (all of them when the batch starts from scratch). */
  private readonly emptyDbs = new Set<Database<Buffer, string>>();
  /** Prefixes of second words of pairs, by id (see WordSlot.pairPrefixes). */
  private readonly pairPrefixIds = new Map<string, number>();
  private pairPrefixList: string[] = [];
  /** This batch starts the index's pair postings (see PAIR_POSTINGS_META). */
  private readonly completesPairs: boolean;
  /** Whether the batch keeps the prefix records (kw-prefix-parts): with prefix search on (see PREFIX_RECORD_MIN_WORDS). */
  private readonly writesPrefixParts: boolean;
  /** Stored entries (kw-entries) to write at the next flush. */
  private docWrites = new PendingEntries();

  /**
   * `fromScratch`: the keyword databases will be cleared before these writes (a re-index), so
   * nothing stored is read back.
   */
  /** `recorded`: for a detached writer, the prefixes with records (an attached one reads them). */
  constructor(dbs: KeywordDbs | null, settings: Settings, private readonly fromScratch = false, paths?: readonly string[], recorded?: readonly string[]) {
    this.attached = dbs;
    this.analyzer = analyzerFor(settings);
    this.fields = new FieldIds(dbs ? loadFieldPaths(dbs) : [...(paths ?? [])]);
    this.prefixSearch = settings.prefixSearch !== 'disabled';
    if (!dbs) {
      this.completesPairs = false;
      this.writesPrefixParts = this.prefixSearch && recorded !== undefined;
      this.prefixParts = new PrefixParts(new Set(recorded));
      return;
    }
    for (const db of [dbs.words, dbs.exactWords, dbs.prefixes, dbs.wordParts, dbs.prefixParts, dbs.values, dbs.pairs]) if (fromScratch || isEmptyDb(db)) this.emptyDbs.add(db);
    if (fromScratch) this.nextId = 0;
    // Pair postings are complete when every document was written with them: from an empty index on.
    this.completesPairs = fromScratch || dbs.docs.getKeysCount({ limit: 1 }) === 0;
    this.writesPrefixParts = this.prefixSearch;
    this.prefixParts = new PrefixParts(this.writesPrefixParts && !fromScratch ? recordedPrefixes(dbs) : new Set());
  }

  /** The prefixes with records, for a detached writer (see `extractDetached`); undefined when this writer keeps none. */
  recordedPrefixList(): string[] | undefined {
    return this.writesPrefixParts ? [...this.prefixParts.recorded] : undefined;
  }

  /**
   * The keyword databases; null for a detached writer (see `extractDetached`), which only
   * extracts documents new to the index, with field paths given, and never reads nor writes.
   */
  private readonly attached: KeywordDbs | null;

  private get dbs(): KeywordDbs {
    if (!this.attached) throw new Error('a detached keyword writer has no databases');
    return this.attached;
  }

  /** Everything extracted so far, as plain data for another thread, leaving this writer empty (a detached writer's result). */
  exportAll(): ExtractedBatch {
    return {
      words: this.words.exportDeltas(),
      exact: this.exact.exportDeltas(),
      prefixes: this.prefixes.exportDeltas(),
      values: this.values.exportDeltas(),
      pairs: this.pairs.exportDeltas(),
      parts: this.parts.exportParts(),
      prefixParts: this.prefixParts.delta.exportParts(),
      entries: this.docWrites.exportEntries(),
      provisional: this.provisional,
      paths: this.fields.paths,
    };
  }

  /**
   * Adds what a detached writer extracted from other documents new to the index, as if this
   * writer had extracted them after its own: its field and word ids are mapped to this writer's,
   * its postings appended after this writer's (their docids are higher when they came later in
   * the batch, so posting lists stay in ascending order).
   */
  absorb(other: ExtractedBatch): void {
    const fids = other.paths.map((path) => this.fields.idOf(path));
    const ids = other.provisional.map((word) => this.idOf(word));
    this.words.absorb(other.words);
    this.exact.absorb(other.exact);
    this.prefixes.absorb(other.prefixes);
    this.values.absorb(other.values);
    this.pairs.absorb(other.pairs);
    const { words, tags, start, docs } = other.parts;
    for (let i = 0; i < words.length; i++) {
      const slot = this.slotOf(words[i]!);
      const tag = tags[i]!;
      const k = tag & BUCKET_TAG ? this.bucketPart(slot, tag & ~BUCKET_TAG) : this.fieldPart(slot, fids[tag]!);
      this.parts.appendAll(k, docs, start[i]!, start[i + 1]!);
    }
    if (this.writesPrefixParts) {
      const more = other.prefixParts;
      for (let i = 0; i < more.words.length; i++) {
        const k = this.prefixParts.part(this.prefixParts.row(more.words[i]!), more.tags[i]!, (tag) => fids[tag]!);
        this.prefixParts.delta.appendAll(k, more.docs, more.start[i]!, more.start[i + 1]!);
      }
    }
    this.docWrites.absorb(other.entries, (fid) => fids[fid]!, (id) => (id >= PROVISIONAL_ID ? ids[id - PROVISIONAL_ID]! : id));
    for (const docid of other.entries.docids) if (docid < this.newDocsFrom) this.newDocsFrom = docid;
  }

  /**
   * Word ids. A word first met in this batch gets a provisional id (PROVISIONAL_ID and up): its
   * real one, stored or new, is settled by the merge of the word records, which reads every
   * record of the batch in word order anyway, and the stored entries of the flush are then
   * rewritten with it (`settleEntries`). Looking each word up as extraction met it read the
   * records in random order, and every read mapped a 64 KiB window of the data file: 50-100 MB
   * more resident pages per batch at 200k documents.
   */
  private readonly idCache = new Map<string, number>();
  private provisional: string[] = [];
  private readonly wordCache = new Map<number, string>();
  /** The words given a new id by the flushes so far, for the lexicon (see `lexiconChanges`). */
  private readonly batchNewWords: Array<[number, string]> = [];

  /** What the flushes so far changed in the index's lexicon (see lexicon.ts): kw-words keys added and removed, words given an id. */
  lexiconChanges(): LexiconChanges {
    return { words: this.words.membership!.changes, newIds: this.batchNewWords };
  }

  /** The words given a new id since the last flush. */
  private newWords: Array<[number, string]> = [];
  private nextId = -1;

  private idOf(word: string): number {
    let id = this.idCache.get(word);
    if (id === undefined) {
      id = PROVISIONAL_ID + this.provisional.length;
      this.provisional.push(word);
      this.idCache.set(word, id);
    }
    return id;
  }

  /** The real id of `word`: known, else `stored` (its record's, when it has one), else a new one. */
  private settleId(word: string, stored: number | undefined): number {
    const known = this.idCache.get(word);
    if (known !== undefined && known < PROVISIONAL_ID) return known;
    let id = stored;
    if (id === undefined) {
      if (this.nextId < 0) this.nextId = (this.dbs.meta.get('nextWordId') as number | undefined) ?? 0;
      id = this.nextId++;
      this.newWords.push([id, word]);
      this.wordCache.set(id, word);
    }
    this.idCache.set(word, id);
    return id;
  }

  /** The flush's stored entries, encoded with their provisional ids replaced by the settled ones. */
  private settleEntries(entries: PendingEntries): WriteList<number> {
    // The settled id of each provisional one, looked up once per word rather than per occurrence.
    const settledIds = new Uint32Array(this.provisional.length);
    for (let i = 0; i < settledIds.length; i++) {
      const word = this.provisional[i]!;
      let settled = this.idCache.get(word)!;
      if (settled >= PROVISIONAL_ID) {
        // Every word of an entry has a part in the batch, so the records merge settled it; kept
        // as a safeguard, a word it missed is looked up.
        const raw = this.fromScratch ? undefined : this.dbs.wordParts.getBinaryFast(word);
        settled = this.settleId(word, raw ? recordId(raw) : undefined);
      }
      settledIds[i] = settled;
    }
    const settled = entries.encode((id) => (id < PROVISIONAL_ID ? id : settledIds[id - PROVISIONAL_ID]!));
    this.provisional = [];
    return settled;
  }

  private wordOf(id: number): string {
    let w = this.wordCache.get(id);
    if (w === undefined) {
      const block = this.dbs.idBlocks.get(Math.floor(id / ID_BLOCK));
      w = block?.[id % ID_BLOCK] ?? '';
      this.wordCache.set(id, w);
    }
    return w;
  }

  private stored(docid: number): TextEntry | undefined {
    if (this.fromScratch) return undefined;
    const raw = this.dbs.docs.getBinary(docid);
    if (!raw) return undefined;
    return decodeEntry(raw).map(([fid, ids, positions]) => [
      fid,
      Array.from(ids, (id) => {
        const word = this.wordOf(id);
        // A stored word's id is settled: the entries written for it need no lookup.
        const known = this.idCache.get(word);
        if (known === undefined || known >= PROVISIONAL_ID) this.idCache.set(word, id);
        return word;
      }),
      Array.from(positions),
    ]);
  }

  /** Takes one change into the deltas, merging into the databases when they grow past the bound. Inside the write transaction. */
  change(change: DocumentChange): void {
    this.extract(change);
    if (this.pending() > flushThreshold) this.flush();
  }

  /**
   * The smallest docid of a document new to the index among the entries of the next flush: new
   * docids were never used, so they sort after every stored entry (and come in ascending order).
   */
  private newDocsFrom = Infinity;

  /** Takes one change into the deltas; reads only, so it may run before the write transaction. */
  extract(change: DocumentChange): void {
    // A document new to the index has nothing indexed (its docid was never used).
    if (!change.before && change.docid < this.newDocsFrom) this.newDocsFrom = change.docid;
    const old = change.before ? this.stored(change.docid) : undefined;
    const next = change.after ? extractDocument(change.after, this.analyzer, this.fields) : undefined;
    const paths = this.fields.paths;
    let ids: number[][] | undefined;
    if (!old) {
      // Nothing indexed before: keys go straight into the deltas, no per-document sets.
      if (next) ids = this.addNew(next, change.docid);
    } else {
      const recorded = this.writesPrefixParts ? this.prefixParts.recorded : null;
      const a = keysOf(old, this.analyzer, paths, this.prefixSearch, recorded, newKeySets());
      const b = next ? keysOf(next, this.analyzer, paths, this.prefixSearch, recorded, newKeySets()) : undefined;
      this.diffAll(a, b, change.docid);
    }
    if (next && next.length > 0) {
      this.docWrites.put(change.docid, next.map(([fid, words, positions], f) => [fid, ids ? ids[f]! : words.map((w) => this.idOf(w)), positions] as const));
    } else if (old) this.docWrites.remove(change.docid);
  }

  private readonly slots = new WordTable<WordSlot>();
  /** The slots of the words of the field `addNew` is at, by position in the field. */
  private readonly fieldSlots: WordSlot[] = [];

  private slotOf(word: string): WordSlot {
    return this.slots.getOrAdd(word, this.newSlot);
  }

  private readonly newSlot = (word: string): WordSlot => ({ word, no: this.slotParts.addRow(), plain: null, exact: null, value: null, prefixed: false, plainDoc: -1, exactDoc: -1, doc: -1, first: 0, fid: -1, id: this.idOf(word), pairPrefixes: null });

  private readonly slotParts = new SlotParts();

  private fieldPart(slot: WordSlot, fid: number): number {
    return this.slotParts.fieldEntry(this.parts, slot.no, slot.word, fid);
  }

  private bucketPart(slot: WordSlot, bucket: number): number {
    return this.slotParts.bucketEntry(this.parts, slot.no, slot.word, bucket);
  }

  /**
   * The keys of a document with nothing indexed before (the same keys as `keysOf`), added
   * directly. Returns the word ids of each field, for the stored entry.
   */
  private addNew(entry: TextEntry, docid: number): number[][] {
    const paths = this.fields.paths;
    const seen: WordSlot[] = [];
    const ids: number[][] = [];
    for (const [fid, words, positions] of entry) {
      const fieldIds = new Array<number>(words.length);
      ids.push(fieldIds);
      const slots = this.fieldSlots;
      const exact = this.analyzer.isExactAttribute(paths[fid] ?? '');
      let before: WordSlot | null = null;
      for (let i = 0; i < words.length; i++) {
        const w = words[i]!;
        const p = positions[i]!;
        const slot = this.slotOf(w);
        slots[i] = slot;
        if (before !== null && positions[i - 1] === p - 1 && (before.word.length <= PAIR_FIRST_MAX || w.length <= PAIR_SECOND_MAX)) this.addPair(before, slot, docid);
        before = slot;
        fieldIds[i] = slot.id;
        if (slot.doc !== docid) {
          slot.doc = docid;
          slot.first = p;
          seen.push(slot);
        } else {
          // Positions grow within a field: a repeat in the same field adds nothing.
          if (slot.fid === fid) continue;
          if (p < slot.first) slot.first = p;
        }
        // The first time in this field of this document (a document's fields come one after
        // the other): the slot's own marks stand in for the logs' last-docid checks.
        slot.fid = fid;
        this.parts.append(this.fieldPart(slot, fid), docid);
        if (this.writesPrefixParts) {
          const prefixes = this.prefixParts;
          const cells = this.slotParts.cells;
          for (let at = this.prefixRowsOf(slot), end = at + PREFIX_MAX; at < end && cells[at]! >= 0; at++) prefixes.delta.push(prefixes.field(cells[at]!, fid), docid);
        }
        if (exact) {
          if (slot.exactDoc === docid) continue;
          slot.exactDoc = docid;
          this.exact.append((slot.exact ??= this.exact.fresh(w)), docid);
        } else {
          if (slot.plainDoc === docid) continue;
          slot.plainDoc = docid;
          this.words.append((slot.plain ??= this.words.fresh(w)), docid);
        }
        if (this.prefixSearch) {
          const first = this.slotParts.prefixCell(slot.no);
          const cells = this.slotParts.cells;
          if (!slot.prefixed) {
            slot.prefixed = true;
            this.prefixEntries(w, cells, first);
          }
          for (let at = first; at < first + PREFIX_MAX && cells[at]! >= 0; at++) this.prefixes.push(cells[at]!, docid);
        }
      }
      // Long texts (descriptions) are not matched as whole values (see keysOf). A value of one
      // word (genres, most tags) finds its entry through the word's slot, not a lookup.
      let from = words.length > MAX_VALUE_FIELD_WORDS ? words.length : 0;
      for (let i = from + 1; i <= words.length; i++) {
        if (i === words.length || positions[i]! - positions[i - 1]! >= VALUE_GAP) {
          if (i - from === 1) {
            const slot = slots[from]!;
            this.values.push((slot.value ??= this.values.entry(slot.word)), docid);
          } else if (i - from <= MAX_VALUE_WORDS) this.values.addOnce(valueKey(words.slice(from, i)), docid);
          from = i;
        }
      }
    }
    this.fieldSlots.length = 0;
    for (const slot of seen) this.parts.append(this.bucketPart(slot, positionBucket(slot.first)), docid);
    if (this.writesPrefixParts) {
      const prefixes = this.prefixParts;
      const cells = this.slotParts.cells;
      for (const slot of seen) for (let at = this.prefixRowsOf(slot), end = at + PREFIX_MAX; at < end && cells[at]! >= 0; at++) prefixes.meet(cells[at]!, docid, slot.first);
      prefixes.placeMet(docid);
    }
    return ids;
  }

  /** Where the rows of `slot`'s prefix records are in `slotParts.cells` (looked up on first use). */
  private prefixRowsOf(slot: WordSlot): number {
    const at = this.slotParts.prefixRowCell(slot.no);
    if (this.slotParts.cells[at]! < 0) this.prefixParts.rowsOf(slot.word, this.slotParts.cells, at);
    return at;
  }

  private diffAll(a: DocKeys<KeySet>, b: DocKeys<KeySet> | undefined, docid: number): void {
    diff(a.words, b?.words, docid, this.words);
    diff(a.exact, b?.exact, docid, this.exact);
    diff(a.prefixes, b?.prefixes, docid, this.prefixes);
    diff(a.values, b?.values, docid, this.values);
    diff(a.pairs, b?.pairs, docid, this.pairs);
    const part = (key: string): number => {
      const cut = key.lastIndexOf('\u0000');
      const slot = this.slotOf(key.slice(0, cut));
      const tag = Number(key.slice(cut + 1));
      return tag & BUCKET_TAG ? this.bucketPart(slot, tag & ~BUCKET_TAG) : this.fieldPart(slot, tag);
    };
    for (const k of a.parts) if (!b?.parts.has(k)) this.parts.del(part(k), docid);
    if (b) for (const k of b.parts) if (!a.parts.has(k)) this.parts.push(part(k), docid);
    const prefixes = this.prefixParts;
    const prefixPart = (key: string): number => {
      const cut = key.lastIndexOf('\u0000');
      return prefixes.part(prefixes.row(key.slice(0, cut)), Number(key.slice(cut + 1)));
    };
    for (const k of a.prefixParts) if (!b?.prefixParts.has(k)) prefixes.delta.del(prefixPart(k), docid);
    if (b) for (const k of b.prefixParts) if (!a.prefixParts.has(k)) prefixes.delta.push(prefixPart(k), docid);
  }


  /**
   * Prefix entries by (the entry of the prefix one character shorter + 1, or 0, next code point):
   * a word's prefixes are found by integer probes, their strings made once per batch.
   */
  private readonly prefixTable = new PairTable();

  /** The prefix entries of `word` (see prefixesOf) into `cells` from `at`. */
  private prefixEntries(word: string, cells: Int32Array, at: number): void {
    prefixValues(word, this.prefixTable, (prefix) => this.prefixes.fresh(prefix), cells, at);
  }


  /**
   * Pair entries by (first word's slot, second word's slot): the pair's entry, then the entries
   * of the second word's prefixes after the first word (-1 past the last), so that a pair met
   * again costs one probe, not one per prefix.
   */
  private readonly pairTable = new PairTable(3 + PAIR_PREFIX_MAX);
  /** Entries of (first word's slot, a prefix id) pairs (see WordSlot.pairPrefixes). */
  private readonly pairPrefixTable = new PairTable();

  /** `second` right after `first` in a field of `docid` (see kw-pairs in layout.ts). */
  private addPair(first: WordSlot, second: WordSlot, docid: number): void {
    const table = this.pairTable;
    let at = table.find(first.no, second.no);
    if (table.cells[at] === -1) at = this.newPair(first, second);
    const cells = table.cells;
    this.pairs.push(cells[at + 2]!, docid);
    for (let c = at + 3, end = at + 3 + PAIR_PREFIX_MAX; c < end && cells[c]! >= 0; c++) this.pairs.push(cells[c]!, docid);
  }

  /** The row of a pair first met in this flush, with its entries. */
  private newPair(first: WordSlot, second: WordSlot): number {
    const at = this.pairTable.insert(first.no, second.no);
    const cells = this.pairTable.cells;
    cells[at + 2] = this.pairs.fresh(pairKey(first.word, second.word));
    // After a longer first word only the whole pair has postings (see pairKeysOf).
    const prefixes = this.prefixSearch && first.word.length <= PAIR_FIRST_MAX ? (second.pairPrefixes ??= this.pairPrefixesOf(second.word)) : [];
    for (let i = 0; i < PAIR_PREFIX_MAX; i++) cells[at + 3 + i] = i < prefixes.length ? this.pairPrefixEntry(first, prefixes[i]!) : -1;
    return at;
  }

  private pairPrefixEntry(first: WordSlot, prefix: number): number {
    let k = this.pairPrefixTable.get(first.no, prefix);
    if (k < 0) {
      k = this.pairs.fresh(pairPrefixKey(first.word, this.pairPrefixList[prefix]!));
      this.pairPrefixTable.set(first.no, prefix, k);
    }
    return k;
  }

  private pairPrefixesOf(word: string): number[] {
    const ids: number[] = [];
    pairPrefixesOf(word, (prefix) => {
      let id = this.pairPrefixIds.get(prefix);
      if (id === undefined) {
        id = this.pairPrefixList.push(prefix) - 1;
        this.pairPrefixIds.set(prefix, id);
      }
      ids.push(id);
    });
    return ids;
  }

  /**
   * The prefixes without a record that reached PREFIX_RECORD_MIN_WORDS words (kw-words merged,
   * with this flush's documents). Candidates are the prefixes of the words the batch added whose
   * own prefix one character shorter has a record (or of one character): a prefix never has more
   * words than its own prefixes.
   */
  private reachedPrefixes(): Set<string> {
    const dbs = this.dbs;
    const recorded = this.prefixParts.recorded;
    const checked = new Set<string>();
    const reached = new Set<string>();
    const known = (prefix: string) => recorded.has(prefix) || reached.has(prefix);
    for (const [word, [before, now]] of this.words.membership!.changes) {
      if (before || !now) continue;
      let parent = '';
      prefixesOf(word, {
        put: (prefix) => {
          const candidate = !known(prefix) && (parent === '' || known(parent)) && !checked.has(prefix);
          parent = prefix;
          if (!candidate) return;
          checked.add(prefix);
          if (hasWords(dbs, prefix, PREFIX_RECORD_MIN_WORDS)) reached.add(prefix);
        },
      });
    }
    return reached;
  }

  /**
   * Drops the records of the prefixes of the words the batch removed that fell below the bound
   * (after the merge of the records' deltas), so that an index has the records a fresh build of
   * its documents would.
   */
  private dropFallenPrefixes(): void {
    const dbs = this.dbs;
    const recorded = this.prefixParts.recorded;
    for (const [word, [before, now]] of this.words.membership!.changes) {
      if (!before || now) continue;
      prefixesOf(word, {
        put: (prefix) => {
          if (!recorded.has(prefix) || hasWords(dbs, prefix, PREFIX_RECORD_MIN_WORDS)) return;
          dbs.prefixParts.removeSync(prefix);
          dbs.tails.prefixParts.removeSync(prefix);
          recorded.delete(prefix);
        },
      });
    }
  }

  /** Stores the record of a prefix that reached the bound. */
  private readonly storePrefixRecord = (prefix: string, parts: WordPart[]): void => {
    if (parts.length > 0) this.dbs.prefixParts.putSync(prefix, encodeWordRecord(0, parts));
    this.prefixParts.recorded.add(prefix);
  };

  pending(): number {
    return this.words.size + this.exact.size + this.prefixes.size + this.parts.size + this.prefixParts.size + this.values.size + this.pairs.size;
  }

  /**
   * Merges the deltas into the databases and resets them. Inside the write transaction: each
   * database's merge reads a slice of its keys and writes them before the next (see SLICE_KEYS);
   * the stored entries follow, once the records merge settled the new words' ids.
   */
  flush(): void {
    // Slots point at deltas the merge is about to drop.
    this.slots.clear();
    this.slotParts.clear();
    this.pairPrefixIds.clear();
    this.pairPrefixList = [];
    this.pairTable.clear();
    this.pairPrefixTable.clear();
    this.prefixTable.clear();
    this.prefixParts.clear();
    const dbs = this.dbs;
    const empty = (db: Database<Buffer, string>) => this.emptyDbs.has(db);
    this.words.mergeInto(dbs.words, dbs.tails.words, empty(dbs.words));
    this.exact.mergeInto(dbs.exactWords, dbs.tails.exactWords, empty(dbs.exactWords));
    this.prefixes.mergeInto(dbs.prefixes, dbs.tails.prefixes, empty(dbs.prefixes));
    // The prefixes that reach the bound get their records from their words' (see
    // PrefixRecordBuilder): read back once merged, or in a batch that starts the index, taken from
    // the word deltas as they are merged.
    const reached = this.writesPrefixParts ? this.reachedPrefixes() : null;
    const fromDeltas = reached && reached.size > 0 && empty(dbs.wordParts) ? new PrefixRecordBuilder(reached) : null;
    this.parts.mergeInto(
      dbs.wordParts,
      dbs.tails.wordParts,
      empty(dbs.wordParts),
      (word, stored) => this.settleId(word, stored),
      fromDeltas ? (word, tag, docs) => fromDeltas.add(word, tag, new RoaringBitmap32(docs)) : undefined,
    );
    // (a prefix record's id is unused)
    this.prefixParts.delta.mergeInto(dbs.prefixParts, dbs.tails.prefixParts, empty(dbs.prefixParts), () => 0);
    if (fromDeltas) fromDeltas.finish('', this.storePrefixRecord);
    else if (reached && reached.size > 0) prefixRecordsFromWords(dbs, reached, this.storePrefixRecord);
    if (this.writesPrefixParts) this.dropFallenPrefixes();
    this.values.mergeInto(dbs.values, dbs.tails.values, empty(dbs.values));
    this.pairs.mergeInto(dbs.pairs, dbs.tails.pairs, empty(dbs.pairs));
    // What is written now is what later flushes of the batch read back.
    this.emptyDbs.clear();
    this.settleEntries(this.docWrites).writeTo(dbs.docs, this.newDocsFrom);
    this.docWrites = new PendingEntries();
    this.newDocsFrom = Infinity;
    for (const [block, words] of this.newWordBlocks()) dbs.idBlocks.putSync(block, words);
    if (this.newWords.length > 0) dbs.meta.putSync('nextWordId', this.nextId);
    for (const added of this.newWords) this.batchNewWords.push(added);
    this.newWords = [];
    if (this.fields.dirty) dbs.meta.putSync('fields', [...this.fields.paths]);
    this.fields.dirty = false;
    if (this.completesPairs && dbs.meta.get(PAIR_POSTINGS_META) !== PAIR_POSTINGS_VERSION) dbs.meta.putSync(PAIR_POSTINGS_META, PAIR_POSTINGS_VERSION);
  }

  /** The id blocks holding the words given an id since the last flush, with those words added. */
  private newWordBlocks(): Array<[number, Array<string | null>]> {
    const out: Array<[number, Array<string | null>]> = [];
    const list = this.newWords;
    let i = 0;
    while (i < list.length) {
      const block = Math.floor(list[i]![0] / ID_BLOCK);
      const words = this.fromScratch && !this.wroteBlocks ? [] : [...(this.dbs.idBlocks.get(block) ?? [])];
      for (; i < list.length && Math.floor(list[i]![0] / ID_BLOCK) === block; i++) {
        const [id, word] = list[i]!;
        while (words.length < id % ID_BLOCK) words.push(null);
        words[id % ID_BLOCK] = word;
      }
      out.push([block, words]);
    }
    this.wroteBlocks = true;
    return out;
  }
  private wroteBlocks = false;
}

/** What a detached writer extracted (see `BatchWriter.exportAll`). */
export interface ExtractedBatch {
  words: ExportedDeltas;
  exact: ExportedDeltas;
  prefixes: ExportedDeltas;
  values: ExportedDeltas;
  pairs: ExportedDeltas;
  parts: ExportedParts;
  /** The prefix records' parts (see PrefixParts), named by prefix. */
  prefixParts: ExportedParts;
  entries: ExportedEntries;
  /** The words of the provisional ids used in `entries`, by id - PROVISIONAL_ID. */
  provisional: string[];
  /** Field paths by the field ids used in `parts` and `entries`. */
  paths: string[];
}

/**
 * Extracts documents new to the index (`before` absent) with a writer of its own, for
 * `BatchWriter.absorb` in another thread (see parallel-extract.ts): the first `done` of them,
 * stopping once `maxPending` postings are pending.
 */
export function extractDetached(settings: Settings, paths: readonly string[], changes: readonly DocumentChange[], maxPending: number, recorded?: readonly string[]): { batch: ExtractedBatch; done: number } {
  const writer = new BatchWriter(null, settings, false, paths, recorded);
  let done = 0;
  while (done < changes.length && writer.pending() <= maxPending) writer.extract(changes[done++]!);
  return { batch: writer.exportAll(), done };
}

/** What `prepare` hands to `apply`: the writer with the deltas extracted, the changes left to extract. */
interface PreparedKeyword {
  writer: BatchWriter;
  rest: Array<[from: number, to: number]>;
  count: number;
}

/** Longest stretch of extraction between two yields to the event loop. */
const SLICE_MS = 20;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Settings whose change alters what is extracted, so every document must be re-extracted. */
function textSettingsKey(s: Settings): string {
  return JSON.stringify([
    s.searchableAttributes,
    s.stopWords,
    s.separatorTokens,
    s.nonSeparatorTokens,
    s.dictionary,
    s.localizedAttributes,
    s.proximityPrecision,
    s.prefixSearch,
    s.typoTolerance.disableOnAttributes,
  ]);
}

export const keywordExtension: IndexExtension = {
  name: 'keyword',

  open(store: IndexStore): void {
    keywordDbs(store);
  },

  /**
   * Extraction only reads committed data, so it runs here, before the write transaction,
   * yielding to the event loop every 20 ms as it goes (the thread that runs the writer keeps
   * answering). Stops early when the deltas reach their bound (the rest then runs in `apply`,
   * merging into the databases as it goes). The merge itself runs in `apply`: it reads the
   * stored lists it rewrites, and writing each slice right after reading it reads them once.
   */
  async prepare(changes: readonly DocumentChange[], settings: Settings, store: IndexStore, options?: PrepareOptions): Promise<PreparedKeyword> {
    const writer = new BatchWriter(keywordDbs(store), settings, options?.fromScratch ?? false);
    // The later part of a large batch of new documents is extracted in another thread meanwhile
    // (see parallel-extract.ts), each side up to half the bound.
    const split = parallelSplit(changes);
    const helper = split < changes.length ? extractElsewhere(settings, writer.fields.paths, changes.slice(split), flushThreshold / 2, writer.recordedPrefixList() ?? []) : null;
    const bound = helper ? flushThreshold / 2 : flushThreshold;
    let done = 0;
    let sliceStart = performance.now();
    while (done < split && writer.pending() <= bound) {
      writer.extract(changes[done++]!);
      if (performance.now() - sliceStart >= SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
    }
    const rest: Array<[number, number]> = [[done, split]];
    if (helper) {
      const extracted = await helper;
      if (extracted) writer.absorb(extracted.batch);
      rest.push([split + (extracted?.done ?? 0), changes.length]);
    }
    return { writer, rest, count: changes.length };
  },

  apply(changes: readonly DocumentChange[], ctx: ApplyContext): void {
    const prepared = ctx.prepared as PreparedKeyword | undefined;
    let writer: BatchWriter;
    let rest: Array<[number, number]> = [[0, changes.length]];
    if (prepared && prepared.count === changes.length) {
      writer = prepared.writer;
      rest = prepared.rest;
    } else writer = new BatchWriter(keywordDbs(ctx.store), ctx.settings);
    for (const [from, to] of rest) for (let i = from; i < to; i++) writer.change(changes[i]!);
    writer.flush();
    // in the batch's transaction: search threads read it whole after the commit (lexicon.ts)
    updateLexicon(ctx.store, keywordDbs(ctx.store), changes.length, writer.lexiconChanges());
    bumpKeywordGeneration(ctx.store);
  },

  clear(store: IndexStore): void {
    const dbs = keywordDbs(store);
    for (const name of POSTING_DBS) {
      dbs[name].clearSync();
      dbs.tails[name].clearSync();
    }
    dbs.docs.clearSync();
    // No stored entry refers to a word id any more: ids start over.
    dbs.idBlocks.clearSync();
    dbs.meta.removeSync('nextWordId');
    // An empty index has every pair posting of its documents: the writes from now on keep them.
    dbs.meta.putSync(PAIR_POSTINGS_META, PAIR_POSTINGS_VERSION);
    dropLexicon(dbs);
    bumpKeywordGeneration(store);
  },

  needsReindex(before: Settings, after: Settings): boolean {
    return textSettingsKey(before) !== textSettingsKey(after);
  },
};
