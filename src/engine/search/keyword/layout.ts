/**
 * The keyword databases of one index environment.
 *
 *   kw-words        word -> docids               words of typo-tolerant fields (the typo dictionary)
 *   kw-exact-words  word -> docids               words of `disableOnAttributes` fields (exact only)
 *   kw-prefixes     prefix -> docids             prefixes of 1..PREFIX_MAX chars of every word
 *   kw-word-parts   word -> record           the word's id and its posting lists by part: per field
 *                                                (attributeRank, attributesToSearchOn) and per bucket of
 *                                                the word's first position in the document (wordPosition
 *                                                without reading documents); one key per word keeps a
 *                                                batch's writes few (see encodeWordRecord)
 *   kw-prefix-parts prefix -> record         for frequent prefixes of 1..PREFIX_MAX chars (see
 *                                                PREFIX_RECORD_MIN_WORDS), a record as a word's: the
 *                                                union of its words' field parts, and each document
 *                                                in the bucket of the prefix's first position; so
 *                                                that the rules rank a short prefix's matches from
 *                                                posting lists
 *   kw-values       words of a value -> docids   every short value (array element, sentence) as a
 *                                                whole, for the exactness rule's exact matches
 *   kw-pairs        pair -> docids               documents where a word comes right after another in a
 *                                                field, for short first words (PAIR_FIRST_MAX): `w1 SEP w2`
 *                                                for the two words and `w1 SEP p` for the first
 *                                                1..PAIR_PREFIX_MAX characters p of the second; after a
 *                                                longer first word, `w1 SEP w2` for a short second word
 *                                                (PAIR_SECOND_MAX: "king the", "lord of") (see
 *                                                pairKeysOf): the proximity rule's cheapest bucket
 *                                                from posting lists, where it read every document of
 *                                                the bucket (a frequent word, then the first letters of
 *                                                the next, as someone types); `pairPostings` in kw-meta
 *                                                says which of them every document of the index has
 *   kw-entries      docid -> entry               the extracted words of each document as word ids,
 *                                                in order with positions (proximity, wordPosition,
 *                                                exactness, phrases), and the exact record of what
 *                                                was indexed, so a deletion removes exactly that
 *                                                (see entry.ts)
 *   kw-id-blocks    block -> string[]        words by id, ID_BLOCK ids per key (id -> word for the
 *                                                stored entries; word -> id is in kw-word-parts)
 *   kw-meta         'fields' -> string[]         field id -> field path; 'pairPostings' -> PAIR_POSTINGS_VERSION
 *   kw-*-tail       key -> docids / record       the recent additions to a long list or record of
 *                                                the seven posting databases above (see tails.ts)
 *
 * Posting lists are roaring bitmaps in the portable serialization.
 *
 * Format 1.0.0 kept one key per (word, field) in `kw-word-fids`, per (word, bucket) in `kw-word-pos`
 * and the ids in `kw-word-ids` / `kw-id-words`: three times the keys, and LMDB puts were the largest
 * cost of indexing. Format 1.1.0 kept the entries as u32 pairs in `kw-docs`, three times the
 * bytes. `src/engine/ops/version/history.ts` converts both.
 */
import type { Database } from 'lmdb';
import type { IndexStore } from '../../index/store.js';

/** Prefix postings are kept for prefixes up to this many characters; longer prefixes are few words, resolved from the dictionary. */
export const PREFIX_MAX = 4;

/**
 * Prefixes (of up to PREFIX_MAX characters) with at least this many words in the typo dictionary
 * have records (kw-prefix-parts). The rules rank a term's words from their records when they are
 * few enough to list (256); a short prefix stands for more ("t", "co", and "the" at 200k
 * documents: 287 words), and without a record of its own the posting lists could not say in
 * which field or at which position its words are: its pure prefix matches ranked last, so "The
 * Godfather" came after "G.I. Joe" for `the g`, and a document's score depended on whether its
 * bucket was ranked from posting lists or by reading each document. Half the bound that cuts, so
 * that a cut prefix has its record; every prefix of 128 words or more at the movies is 240 of
 * their 32,500 prefixes, and records for all prefixes of up to 3 characters took 40% more
 * indexing time (bench/README.md). A prefix gets its record from its words' records when it
 * reaches the bound (so the records are prefix-closed: a prefix's own prefixes have more words),
 * and keeps it. Every batch keeps the records of an index with prefix search on (format 1.4.0:
 * the upgrade from 1.3.0 builds them); with it off there are no prefix terms, and turning it on
 * rebuilds the index.
 */
export const PREFIX_RECORD_MIN_WORDS = 128;
export const PREFIX_PARTS_DB = 'kw-prefix-parts';

/** A document's entry with the words themselves, as extracted before ids are assigned. */
export type TextEntry = Array<[fid: number, words: string[], positions: number[]]>;

/** The database of document entries (see entry.ts). */
export const ENTRIES_DB = 'kw-entries';

/** The posting databases, each with its tail twin (see tails.ts). */
export const POSTING_DBS = ['words', 'exactWords', 'prefixes', 'wordParts', 'prefixParts', 'values', 'pairs'] as const;
export type PostingDb = (typeof POSTING_DBS)[number];

export interface KeywordDbs {
  words: Database<Buffer, string>;
  exactWords: Database<Buffer, string>;
  prefixes: Database<Buffer, string>;
  wordParts: Database<Buffer, string>;
  prefixParts: Database<Buffer, string>;
  values: Database<Buffer, string>;
  pairs: Database<Buffer, string>;
  /** The tail of each long posting list or word record, under the same key (see tails.ts). */
  tails: Record<PostingDb, Database<Buffer, string>>;
  docs: Database<Buffer, number>;
  idBlocks: Database<Array<string | null>, number>;
  meta: Database<any, string>;
}

const opened = new WeakMap<IndexStore, KeywordDbs>();

export function keywordDbs(store: IndexStore): KeywordDbs {
  let dbs = opened.get(store);
  if (!dbs) {
    dbs = {
      words: store.openDB<Buffer, string>('kw-words', { encoding: 'binary' }),
      exactWords: store.openDB<Buffer, string>('kw-exact-words', { encoding: 'binary' }),
      prefixes: store.openDB<Buffer, string>('kw-prefixes', { encoding: 'binary' }),
      wordParts: store.openDB<Buffer, string>('kw-word-parts', { encoding: 'binary' }),
      prefixParts: store.openDB<Buffer, string>(PREFIX_PARTS_DB, { encoding: 'binary' }),
      values: store.openDB<Buffer, string>('kw-values', { encoding: 'binary' }),
      pairs: store.openDB<Buffer, string>('kw-pairs', { encoding: 'binary' }),
      tails: {
        words: store.openDB<Buffer, string>('kw-words-tail', { encoding: 'binary' }),
        exactWords: store.openDB<Buffer, string>('kw-exact-words-tail', { encoding: 'binary' }),
        prefixes: store.openDB<Buffer, string>('kw-prefixes-tail', { encoding: 'binary' }),
        wordParts: store.openDB<Buffer, string>('kw-word-parts-tail', { encoding: 'binary' }),
        prefixParts: store.openDB<Buffer, string>(`${PREFIX_PARTS_DB}-tail`, { encoding: 'binary' }),
        values: store.openDB<Buffer, string>('kw-values-tail', { encoding: 'binary' }),
        pairs: store.openDB<Buffer, string>('kw-pairs-tail', { encoding: 'binary' }),
      },
      docs: store.openDB<Buffer, number>(ENTRIES_DB, { keyEncoding: 'uint32', encoding: 'binary' }),
      idBlocks: store.openDB<Array<string | null>, number>('kw-id-blocks', { keyEncoding: 'uint32', encoding: 'msgpack' }),
      meta: store.openDB<any, string>('kw-meta', { encoding: 'msgpack' }),
    };
    opened.set(store, dbs);
  }
  return dbs;
}

/** Position buckets: exact below 8, then logarithmic, as far positions matter less and less. */
export const MAX_POSITION_BUCKET = 16;
export function positionBucket(p: number): number {
  if (p < 8) return p;
  return Math.min(MAX_POSITION_BUCKET, 8 + Math.floor(Math.log2(p / 8) * 2));
}

/** Part tags of a word record: a field id, or BUCKET_TAG + a first-position bucket. */
export const BUCKET_TAG = 0x8000_0000;
export const fieldTag = (fid: number): number => fid;
export const bucketTag = (bucket: number): number => (BUCKET_TAG | bucket) >>> 0;

/** Words per `kw-id-blocks` key. */
export const ID_BLOCK = 256;

/** One part of a word record: its tag and its serialized posting list. */
export interface WordPart {
  tag: number;
  bitmap: Uint8Array;
}

/**
 * A word record: `[id, n, tag x n, end x n]` as u32 LE, then the n serialized bitmaps back to
 * back (`end` is the offset just past bitmap i, counted from the first bitmap). Parts must be
 * sorted by tag.
 */
export function encodeWordRecord(id: number, parts: readonly WordPart[]): Buffer {
  const n = parts.length;
  const head = 4 * (2 + 2 * n);
  let size = head;
  for (const p of parts) size += p.bitmap.length;
  const out = Buffer.allocUnsafe(size);
  out.writeUInt32LE(id, 0);
  out.writeUInt32LE(n, 4);
  let end = 0;
  for (let i = 0; i < n; i++) {
    const p = parts[i]!;
    out.writeUInt32LE(p.tag, 8 + 4 * i);
    out.set(p.bitmap, head + end);
    end += p.bitmap.length;
    out.writeUInt32LE(end, 8 + 4 * (n + i));
  }
  return out;
}

export function recordId(raw: Uint8Array): number {
  return (raw[0]! | (raw[1]! << 8) | (raw[2]! << 16) | (raw[3]! << 24)) >>> 0;
}

/** Every part of a record, copied out (lmdb reuses the buffer of fast reads). */
export function decodeWordRecord(raw: Uint8Array): WordPart[] {
  const parts: WordPart[] = [];
  forEachRecordPart(raw, (tag, bitmap) => parts.push({ tag, bitmap: Uint8Array.prototype.slice.call(bitmap) }));
  return parts;
}

/**
 * Calls `visit` with each part's tag and serialized bitmap as a view into `raw` (valid while
 * `raw` is): for a reader that deserializes each part at once, which copies it anyway.
 */
export function forEachRecordPart(raw: Uint8Array, visit: (tag: number, bitmap: Uint8Array) => void): void {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.length);
  const n = buf.readUInt32LE(4);
  const head = 4 * (2 + 2 * n);
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = buf.readUInt32LE(8 + 4 * (n + i));
    visit(buf.readUInt32LE(8 + 4 * i), buf.subarray(head + start, head + end));
    start = end;
  }
}

/** The serialized bitmap of one part, as a view into `raw` (valid while `raw` is), or undefined. */
export function recordPart(raw: Uint8Array, tag: number): Uint8Array | undefined {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.length);
  const n = buf.readUInt32LE(4);
  let lo = 0;
  let hi = n - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const t = buf.readUInt32LE(8 + 4 * mid);
    if (t === tag) {
      const head = 4 * (2 + 2 * n);
      const start = mid === 0 ? 0 : buf.readUInt32LE(8 + 4 * (n + mid - 1));
      return buf.subarray(head + start, head + buf.readUInt32LE(8 + 4 * (n + mid)));
    }
    if (t < tag) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** Values longer than this many words are never an exact match of a query (10 words at most). */
export const MAX_VALUE_WORDS = 10;

/**
 * Fields of more words than this (descriptions) are not split into values: their sentences would
 * make postings of one document each.
 */
export const MAX_VALUE_FIELD_WORDS = 64;

/**
 * The exactness rule's "a field starts with the query" checks this many of its words: the exact
 * position buckets of the word records (see positionBucket) find the documents that may.
 */
export const START_WORDS = 8;

export function valueKey(words: readonly string[]): string {
  return words.join(' ');
}

/** Hard separators and array boundaries leave a gap of at least this between two values. */
export const VALUE_GAP = 8;

/** Prefixes of `word` that get prefix postings (whole code points only). */
export function prefixesOf(word: string, out: { put(key: string): unknown }): void {
  let end = 0;
  for (let n = 0; n < PREFIX_MAX && end < word.length; n++) {
    end += word.codePointAt(end)! > 0xffff ? 2 : 1;
    out.put(word.slice(0, end));
  }
}

/**
 * Pair postings are kept for first words of up to this many UTF-16 units: the words frequent
 * enough to make a proximity bucket large (articles, prepositions: "the", "of", "de") are short,
 * and a pair per occurrence of every word took 2.6 times the indexing time of the movies (1.35
 * million keys), where these take a fraction (see bench/README.md). A longer first word's
 * proximity bucket is read document by document, as before.
 */
export const PAIR_FIRST_MAX = 3;

/**
 * After a longer first word, pair postings are kept for second words of up to this many UTF-16
 * units: "king the", "lord of", "year the". Without them such a pair's proximity bucket was read
 * document by document, every document holding the first word (5,314 for "king the" at 200k
 * documents, 128 ms on a cold cache), and a query where a word is followed by an article or a
 * preposition is common. They add whole-pair keys only, no prefixes: about half as many keys as
 * the pairs after short first words, a fifth as many postings (bench/README.md).
 */
export const PAIR_SECOND_MAX = 3;

/** Pair postings are kept for prefixes of the second word up to this many characters; longer prefixes are few words, looked up pair by pair. */
export const PAIR_PREFIX_MAX = 3;

/** `pairKey(a, b)`: `b` right after `a`; `pairPrefixKey(a, p)`: a word starting with `p` right after `a`. */
export const pairKey = (first: string, second: string): string => `${first}\u0001${second}`;
export const pairPrefixKey = (first: string, prefix: string): string => `${first}\u0002${prefix}`;

/** The first 1..PAIR_PREFIX_MAX characters of `word` (whole code points) that get pair postings. */
export function pairPrefixesOf(word: string, put: (prefix: string) => void): void {
  let end = 0;
  for (let n = 0; n < PAIR_PREFIX_MAX && end < word.length; n++) {
    end += word.codePointAt(end)! > 0xffff ? 2 : 1;
    put(word.slice(0, end));
  }
}

/** Whether `second` right after `first` has pair postings (see kw-pairs above). */
export const hasPairKey = (first: string, second: string): boolean => first.length <= PAIR_FIRST_MAX || second.length <= PAIR_SECOND_MAX;

/** The pair keys of `second` coming right after `first`. */
export function pairKeysOf(first: string, second: string, out: { put(key: string): unknown }, prefixes: boolean): void {
  if (first.length <= PAIR_FIRST_MAX) {
    out.put(pairKey(first, second));
    if (prefixes) pairPrefixesOf(second, (prefix) => out.put(pairPrefixKey(first, prefix)));
  } else if (second.length <= PAIR_SECOND_MAX) out.put(pairKey(first, second));
}

/**
 * kw-meta key: which pair postings every document of the index has. Absent: none (an index
 * written before them); `true`: those after short first words; PAIR_POSTINGS_VERSION: those and
 * the short second words after longer first words. Each is set when an index starts empty, so an
 * index keeps the older value until it is rebuilt, and searches read what it lacks.
 */
export const PAIR_POSTINGS_META = 'pairPostings';
export const PAIR_POSTINGS_VERSION = 2;

/**
 * Bumped by every write to the keyword databases in this thread, so that search-side caches know
 * to refresh; the store's commit count adds the writes of other threads (both only grow, so the
 * sum changes whenever either does).
 */
const generations = new WeakMap<IndexStore, number>();

export function keywordGeneration(store: IndexStore): number {
  return (generations.get(store) ?? 0) + store.commit;
}

export function bumpKeywordGeneration(store: IndexStore): void {
  generations.set(store, keywordGeneration(store) + 1);
}

const SERIAL_COOKIE_NO_RUNCONTAINER = 12346;
const ARRAY_CONTAINER_MAX = 4096;

/**
 * The portable roaring serialization of a strictly ascending docid list, written directly: the
 * same bytes as `new RoaringBitmap32(ids).serialize(true)` (no run containers), without building
 * a native bitmap. Most posting lists of a batch are new keys, so this skips two native calls
 * and an object per key. Returns undefined when `ids` is not strictly ascending (the caller
 * falls back to roaring).
 */
export function serializeAscending(ids: ArrayLike<number>): Buffer | undefined {
  const size = serializedAscendingSize(ids);
  if (size < 0) return undefined;
  // Not zero-filled: every byte is written (bitmap containers are cleared first).
  const out = Buffer.allocUnsafe(size);
  writeAscending(ids, out, 0);
  return out;
}

/** The size of `serializeAscending(ids)`, -1 when `ids` is not strictly ascending. */
export function serializedAscendingSize(ids: ArrayLike<number>): number {
  const n = ids.length;
  // One container per distinct high 16 bits.
  let containers = 0;
  let prev = -1;
  let high = -1;
  let size = 8;
  let card = 0;
  for (let i = 0; i < n; i++) {
    const v = ids[i]!;
    if (v <= prev || v > 0xffffffff) return -1;
    prev = v;
    const h = v >>> 16;
    if (h !== high) {
      if (containers > 0) size += card > ARRAY_CONTAINER_MAX ? 8192 : 2 * card;
      containers++;
      high = h;
      card = 0;
    }
    card++;
  }
  if (containers > 0) size += card > ARRAY_CONTAINER_MAX ? 8192 : 2 * card;
  return size + 8 * containers;
}

/**
 * Writes `serializeAscending(ids)` into `out` at `at` (`serializedAscendingSize(ids)` bytes,
 * `ids` strictly ascending): the merge writes new keys' lists straight into its arena.
 */
export function writeAscending(ids: ArrayLike<number>, out: Buffer, at: number): void {
  const n = ids.length;
  let containers = 0;
  for (let i = 0, high = -1; i < n; i++) {
    const h = ids[i]! >>> 16;
    if (h !== high) {
      containers++;
      high = h;
    }
  }
  out.writeUInt32LE(SERIAL_COOKIE_NO_RUNCONTAINER, at);
  out.writeUInt32LE(containers, at + 4);
  let header = at + 8;
  let offsets = at + 8 + 4 * containers;
  // Container offsets count from the start of the serialization.
  let data = 8 + 8 * containers;
  for (let i = 0; i < n; ) {
    const h = ids[i]! >>> 16;
    let j = i + 1;
    while (j < n && ids[j]! >>> 16 === h) j++;
    const c = j - i;
    out.writeUInt16LE(h, header);
    out.writeUInt16LE(c - 1, header + 2);
    header += 4;
    out.writeUInt32LE(data, offsets);
    offsets += 4;
    if (c > ARRAY_CONTAINER_MAX) {
      const base = at + data;
      out.fill(0, base, base + 8192);
      for (let k = i; k < j; k++) {
        const low = ids[k]! & 0xffff;
        out[base + (low >>> 3)]! |= 1 << (low & 7);
      }
      data += 8192;
    } else {
      let d = at + data;
      for (let k = i; k < j; k++) {
        const low = ids[k]! & 0xffff;
        out[d++] = low & 0xff;
        out[d++] = low >>> 8;
      }
      data += 2 * c;
    }
    i = j;
  }
}

/**
 * A stored posting list (portable serialization without run containers, as written here) with
 * `add` appended, when every docid of `add` is above the list's largest: the same bytes as
 * deserializing, adding and serializing with roaring, without a native bitmap. New documents
 * always get the highest docids, so this is how most lists grow. Returns undefined when it does
 * not apply (another format, `add` not strictly ascending or not above the list); the caller
 * falls back to roaring.
 */
export function appendAscending(raw: Uint8Array, add: ArrayLike<number>): Buffer | undefined {
  if (add.length === 0) return undefined;
  const src = Buffer.from(raw.buffer, raw.byteOffset, raw.length);
  if (src.length < 8 || src.readUInt32LE(0) !== SERIAL_COOKIE_NO_RUNCONTAINER) return undefined;
  const count = src.readUInt32LE(4);
  if (count === 0) return undefined;
  const keyAt = (i: number) => src.readUInt16LE(8 + 4 * i);
  const cardAt = (i: number) => src.readUInt16LE(10 + 4 * i) + 1;
  const offsetAt = (i: number) => src.readUInt32LE(8 + 4 * count + 4 * i);
  // The largest stored value, in the last container.
  const lastKey = keyAt(count - 1);
  const lastCard = cardAt(count - 1);
  const lastStart = offsetAt(count - 1);
  let lastLow: number;
  if (lastCard > ARRAY_CONTAINER_MAX) {
    let byte = lastStart + 8191;
    while (src[byte] === 0) byte--;
    lastLow = (byte - lastStart) * 8 + (31 - Math.clz32(src[byte]!));
  } else lastLow = src.readUInt16LE(lastStart + 2 * (lastCard - 1));
  let prev = lastKey * 65536 + lastLow;
  for (let i = 0; i < add.length; i++) {
    const v = add[i]!;
    if (v <= prev || v > 0xffffffff) return undefined;
    prev = v;
  }
  // Containers after the merge: the stored ones but the last, the last with its additions, then new ones.
  const lows: number[][] = [];
  const keys: number[] = [];
  let a = 0;
  const lastAdds: number[] = [];
  while (a < add.length && add[a]! >>> 16 === lastKey) lastAdds.push(add[a++]! & 0xffff);
  while (a < add.length) {
    const key = add[a]! >>> 16;
    const list: number[] = [];
    while (a < add.length && add[a]! >>> 16 === key) list.push(add[a++]! & 0xffff);
    keys.push(key);
    lows.push(list);
  }
  const lastNewCard = lastCard + lastAdds.length;
  const lastBytes = lastNewCard > ARRAY_CONTAINER_MAX ? 8192 : 2 * lastNewCard;
  const total = count + keys.length;
  let size = 8 + 8 * total + (lastStart - offsetAt(0)) + lastBytes;
  for (const list of lows) size += list.length > ARRAY_CONTAINER_MAX ? 8192 : 2 * list.length;
  const out = Buffer.allocUnsafe(size);
  out.writeUInt32LE(SERIAL_COOKIE_NO_RUNCONTAINER, 0);
  out.writeUInt32LE(total, 4);
  // Stored containers before the last: same keys and cardinalities, data moved by the longer header.
  const shift = 8 * keys.length;
  src.copy(out, 8, 8, 8 + 4 * (count - 1));
  for (let i = 0; i < count - 1; i++) out.writeUInt32LE(offsetAt(i) + shift, 8 + 4 * total + 4 * i);
  let data = 8 + 8 * total;
  src.copy(out, data, offsetAt(0), lastStart);
  data += lastStart - offsetAt(0);
  // The last stored container with its additions.
  out.writeUInt16LE(lastKey, 8 + 4 * (count - 1));
  out.writeUInt16LE(lastNewCard - 1, 10 + 4 * (count - 1));
  out.writeUInt32LE(data, 8 + 4 * total + 4 * (count - 1));
  if (lastNewCard > ARRAY_CONTAINER_MAX) {
    if (lastCard > ARRAY_CONTAINER_MAX) src.copy(out, data, lastStart, lastStart + 8192);
    else {
      out.fill(0, data, data + 8192);
      for (let k = 0; k < lastCard; k++) {
        const low = src.readUInt16LE(lastStart + 2 * k);
        out[data + (low >>> 3)]! |= 1 << (low & 7);
      }
    }
    for (const low of lastAdds) out[data + (low >>> 3)]! |= 1 << (low & 7);
  } else {
    src.copy(out, data, lastStart, lastStart + 2 * lastCard);
    for (let k = 0; k < lastAdds.length; k++) out.writeUInt16LE(lastAdds[k]!, data + 2 * (lastCard + k));
  }
  data += lastBytes;
  // New containers.
  for (let c = 0; c < keys.length; c++) {
    const list = lows[c]!;
    const at = count + c;
    out.writeUInt16LE(keys[c]!, 8 + 4 * at);
    out.writeUInt16LE(list.length - 1, 10 + 4 * at);
    out.writeUInt32LE(data, 8 + 4 * total + 4 * at);
    if (list.length > ARRAY_CONTAINER_MAX) {
      out.fill(0, data, data + 8192);
      for (const low of list) out[data + (low >>> 3)]! |= 1 << (low & 7);
      data += 8192;
    } else {
      for (let k = 0; k < list.length; k++) out.writeUInt16LE(list[k]!, data + 2 * k);
      data += 2 * list.length;
    }
  }
  return out;
}

