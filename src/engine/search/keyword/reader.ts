/**
 * Read side of the keyword databases, with the caches a search needs: the typo dictionary (the
 * sorted keys of `kw-words`) and recently decoded posting lists. Both are dropped when the
 * keyword generation of the store changes (any batch touching the keyword databases).
 */
import roaring from 'roaring';
import type { Bitmap, IndexStore } from '../../index/store.js';
import type { WordDictionary } from '../../text/typo.js';
import { entryExactness } from './entry.js';
import { hasTail, readPostings, valueBytes } from './tails.js';
import { BUCKET_TAG, bucketTag, forEachRecordPart, hasPairKey, pairKey, pairPrefixKey, PAIR_FIRST_MAX, PAIR_POSTINGS_META, PAIR_POSTINGS_VERSION, fieldTag, valueKey, keywordDbs, keywordGeneration, type KeywordDbs } from './layout.js';
import { loadFieldPaths } from './extension.js';
import { BoundedCache } from '../../bounded-cache.js';
import type { Vocabulary } from './vocabulary.js';
import { buildDictionary, buildDictionaryIds, buildVocabulary, readLexicon } from './lexicon.js';

const { RoaringBitmap32 } = roaring;
const EMPTY = new RoaringBitmap32();
/** Decoded posting lists kept per index; the hot words of a workload fit easily. */
const BITMAP_CACHE_SIZE = 4096;
/**
 * And the bytes they may hold (their serialized size, close to what roaring allocates): counted
 * in lists alone, 4,096 short prefixes' lists of 500,000 documents could hold hundreds of MB of
 * native memory; on the movies (32,000 documents) the cache holds a few MB and this never binds.
 */
const BITMAP_CACHE_BYTES = 16 * 2 ** 20;
/** Word records kept per index, and the bytes they may hold (serialized; a kind of parts decoded about as much again). */
const RECORD_CACHE_SIZE = 2048;
const RECORD_CACHE_BYTES = 16 * 2 ** 20;

/**
 * Stored entries (a document's words and positions, entry.ts) kept per index, as copies, for the
 * documents ranked one by one (`keptDoc`). A movie's entry is a few hundred bytes: 4 MiB holds
 * thousands, the documents of a workload's frequent queries.
 */
const ENTRY_CACHE_SIZE = 8192;
const ENTRY_CACHE_BYTES = 4 * 2 ** 20;

const bitmapBytes = (b: Bitmap): number => b.getSerializationSizeInBytes(false);

/** A word record's bytes, main and tail, and its parts of each kind once decoded (see KeywordReader.record). */
interface WordRecord {
  /** Whether the key has a record (main and tail are dropped once both kinds of parts are decoded). */
  exists: boolean;
  main: Uint8Array | null;
  tail: Uint8Array | null;
  fields: Map<number, Bitmap> | null;
  buckets: Map<number, Bitmap> | null;
}

export class KeywordReader {
  readonly dbs: KeywordDbs;
  private generation = -1;
  private dict: WordDictionary | null = null;
  private paths: string[] | null = null;
  /** Decoded posting lists, least recently read first. */
  private readonly bitmaps = new BoundedCache<Bitmap>(BITMAP_CACHE_SIZE, BITMAP_CACHE_BYTES);
  /** Word records read (see `record`), oldest first. */
  private readonly records = new BoundedCache<WordRecord>(RECORD_CACHE_SIZE, RECORD_CACHE_BYTES);
  /** Copies of stored entries (see `keptDoc`), oldest first. */
  private readonly entries = new BoundedCache<Uint8Array, number>(ENTRY_CACHE_SIZE, ENTRY_CACHE_BYTES);

  constructor(readonly store: IndexStore) {
    this.dbs = keywordDbs(store);
  }

  private refresh(): void {
    const g = keywordGeneration(this.store);
    if (g === this.generation) return;
    this.generation = g;
    this.dict = null;
    this.paths = null;
    this.vocab = null;
    this.dictIds = null;
    this.lexiconRead = false;
    this.bitmaps.clear();
    this.records.clear();
    this.entries.clear();
  }

  /** The typo dictionary (see lexicon.ts), loaded once per keyword generation. */
  dictionary(): WordDictionary {
    this.refresh();
    if (!this.dict) this.fromStoredLexicon();
    if (!this.dict) this.dict = buildDictionary(this.dbs);
    return this.dict;
  }

  /** Whether the stored lexicon was looked for in this generation. */
  private lexiconRead = false;

  /** Take the structures the write side stored for this commit, when it did (see lexicon.ts). */
  private fromStoredLexicon(): void {
    if (this.lexiconRead) return;
    this.lexiconRead = true;
    const lexicon = readLexicon(this.dbs, this.store.commit);
    if (!lexicon) return;
    this.dict = lexicon.dictionary;
    this.vocab = lexicon.vocabulary;
    this.dictIds = lexicon.dictionaryIds;
  }

  fieldPaths(): string[] {
    this.refresh();
    if (!this.paths) this.paths = loadFieldPaths(this.dbs);
    return this.paths;
  }

  private cached(kind: string, key: string, load: () => Bitmap | undefined): Bitmap {
    this.refresh();
    const k = kind + key;
    const known = this.bitmaps.use(k);
    if (known) return known;
    const bitmap = load() ?? EMPTY;
    this.bitmaps.set(k, bitmap, bitmapBytes(bitmap));
    return bitmap;
  }

  /** Docids of a typo-tolerant word. Shared: never mutate. */
  word(word: string): Bitmap {
    return this.cached('w', word, () => readPostings(this.dbs.words, this.dbs.tails.words, word));
  }

  /** Docids of a word in exact-only attributes. Shared: never mutate. */
  exactWord(word: string): Bitmap {
    return this.cached('e', word, () => readPostings(this.dbs.exactWords, this.dbs.tails.exactWords, word));
  }

  /** Docids of a word in any attribute. */
  anyWord(word: string): Bitmap {
    const a = this.word(word);
    const b = this.exactWord(word);
    if (b.isEmpty) return a;
    if (a.isEmpty) return b;
    return RoaringBitmap32.or(a, b);
  }

  prefix(prefix: string): Bitmap {
    return this.cached('p', prefix, () => readPostings(this.dbs.prefixes, this.dbs.tails.prefixes, prefix));
  }

  /** Documents where `second` comes right after `first` in a field (see kw-pairs in layout.ts). */
  pair(first: string, second: string): Bitmap {
    const key = pairKey(first, second);
    return this.cached('2', key, () => readPostings(this.dbs.pairs, this.dbs.tails.pairs, key));
  }

  /** Documents where a word starting with `prefix` (up to PAIR_PREFIX_MAX characters) comes right after `first`. */
  pairWithPrefix(first: string, prefix: string): Bitmap {
    const key = pairPrefixKey(first, prefix);
    return this.cached('2', key, () => readPostings(this.dbs.pairs, this.dbs.tails.pairs, key));
  }

  /** Which pair postings every document has: 0 none, 1 after short first words, PAIR_POSTINGS_VERSION also short second words (see PAIR_POSTINGS_META). */
  private pairsKnown: number | null = null;
  private pairsGeneration = -1;

  private pairPostings(): number {
    this.refresh();
    if (this.pairsGeneration !== this.generation || this.pairsKnown === null) {
      this.pairsGeneration = this.generation;
      const value: unknown = this.dbs.meta.get(PAIR_POSTINGS_META);
      this.pairsKnown = value === true ? 1 : typeof value === 'number' ? value : 0;
    }
    return this.pairsKnown;
  }

  /** Whether every document has its pair postings after short first words (an index written before they existed has none). */
  hasPairPostings(): boolean {
    return this.pairPostings() >= 1;
  }

  /** Whether every document also has its pair postings of short second words after longer first words. */
  hasShortSecondPairs(): boolean {
    return this.pairPostings() >= PAIR_POSTINGS_VERSION;
  }

  /** Whether `pair(first, second)` holds every document where `second` comes right after `first`. */
  hasPairPostingsOf(first: string, second: string): boolean {
    if (!hasPairKey(first, second)) return false;
    return first.length <= PAIR_FIRST_MAX ? this.hasPairPostings() : this.hasShortSecondPairs();
  }

  /**
   * A word record (its tail beside it), read once: the rules that read records want all of a
   * word's parts of one kind (every field, or every position bucket), and reading the record once
   * per part read it 16 times for wordPosition, 4,096 reads for a 256-word prefix.
   */
  private record(word: string, kind: 'wordParts' | 'prefixParts' = 'wordParts'): WordRecord {
    this.refresh();
    // (a prefix record is cached under a key no word has)
    const cacheKey = kind === 'wordParts' ? word : `\u0000${word}`;
    const known = this.records.get(cacheKey);
    if (known) return known;
    const raw = this.dbs[kind].getBinaryFast(word);
    // Copied: the next read reuses lmdb's buffer, and each kind of part is decoded when first asked for.
    const main = raw ? Buffer.from(valueBytes(raw)) : null;
    const more = raw && hasTail(raw.length) ? this.dbs.tails[kind].getBinaryFast(word) : undefined;
    const record: WordRecord = { exists: main !== null, main, tail: more ? Buffer.from(valueBytes(more)) : null, fields: null, buckets: null };
    // The record's serialized size stands for its decoded parts' (no call per part).
    this.records.set(cacheKey, record, (main?.length ?? 0) + (record.tail?.length ?? 0));
    return record;
  }

  /**
   * The parts of one kind of a record, by tag, its tail's merged in. Decoded on demand: the
   * attribute rule wants the fields of every word of a prefix, the position rule their buckets,
   * and a cold keystroke (`je`: 6.6 ms, warm 0.5) spent half its time decoding word records.
   */
  private partsOf(record: WordRecord, buckets: boolean): Map<number, Bitmap> {
    const known = buckets ? record.buckets : record.fields;
    if (known) return known;
    const parts = new Map<number, Bitmap>();
    const take = (tag: number, bitmap: Uint8Array) => {
      if (tag >= BUCKET_TAG !== buckets) return;
      const decoded = RoaringBitmap32.deserialize(bitmap, true);
      const already = parts.get(tag);
      if (already) already.orInPlace(decoded);
      else parts.set(tag, decoded);
    };
    if (record.main) forEachRecordPart(record.main, take);
    if (record.tail) forEachRecordPart(record.tail, take);
    if (buckets) record.buckets = parts;
    else record.fields = parts;
    // both kinds decoded: the bytes are not needed any more
    if (record.fields && record.buckets) record.main = record.tail = null;
    return parts;
  }

  /**
   * The field parts of `word`'s record, by field tag (see layout.ts). Shared: never mutate. For
   * rules that want a part of many words: one lookup per word, where a lookup per part and word
   * cost a three-letter prefix (256 words x 16 buckets) a quarter of its search.
   */
  wordFields(word: string): ReadonlyMap<number, Bitmap> {
    return this.partsOf(this.record(word), false);
  }

  /** The position-bucket parts of `word`'s record, by bucket tag (see `wordFields`). */
  wordBuckets(word: string): ReadonlyMap<number, Bitmap> {
    return this.partsOf(this.record(word), true);
  }

  /**
   * Whether `prefix` has a record (kw-prefix-parts, see PREFIX_RECORD_MIN_WORDS) covering every
   * document: the field parts of the words starting with it, and each document in the bucket of
   * the first of them.
   */
  hasPrefixRecord(prefix: string): boolean {
    return this.record(prefix, 'prefixParts').exists;
  }

  /** The field parts of the record of `prefix` (see `hasPrefixRecord`), by field tag. Shared: never mutate. */
  prefixFields(prefix: string): ReadonlyMap<number, Bitmap> {
    return this.partsOf(this.record(prefix, 'prefixParts'), false);
  }

  /** The position-bucket parts of the record of `prefix`, by bucket tag. */
  prefixBuckets(prefix: string): ReadonlyMap<number, Bitmap> {
    return this.partsOf(this.record(prefix, 'prefixParts'), true);
  }

  wordInField(word: string, fid: number): Bitmap {
    return this.wordFields(word).get(fieldTag(fid)) ?? EMPTY;
  }

  /** Documents whose first occurrence of `word` falls in position bucket `bucket`. */
  wordAtBucket(word: string, bucket: number): Bitmap {
    return this.wordBuckets(word).get(bucketTag(bucket)) ?? EMPTY;
  }

  private exactKnown: boolean | null = null;
  private exactGeneration = -1;

  hasExactWords(): boolean {
    this.refresh();
    if (this.exactGeneration !== this.generation || this.exactKnown === null) {
      this.exactGeneration = this.generation;
      this.exactKnown = this.dbs.exactWords.getKeysCount({ limit: 1 }) > 0;
    }
    return this.exactKnown;
  }

  /** Documents with a value (array element, sentence) made of exactly these words. */
  value(words: readonly string[]): Bitmap {
    const key = valueKey(words);
    return this.cached('v', key, () => readPostings(this.dbs.values, this.dbs.tails.values, key));
  }

  /** The stored entry bytes, valid until the next read (lmdb reuses the buffer); see entry.ts. */
  rawDoc(docid: number): Buffer | undefined {
    const raw = this.dbs.docs.getBinaryFast(docid);
    return raw ? (valueBytes(raw) as Buffer) : undefined;
  }

  /**
   * The stored entry bytes of `docid`, kept between searches until the keyword databases change:
   * stable, shared (never mutate). For the documents of small buckets, which the position rules
   * read one by one (the 23 candidates of `star wars`, three times each): an LMDB read per
   * document and search, and a copy to keep it for the later rules, were a tenth of such a
   * search. A large bucket's proximity pass reads each document once (`rawDoc`), uncached.
   */
  keptDoc(docid: number): Uint8Array | undefined {
    this.refresh();
    // `get`, not `use`: moving each hit to the newest end cost more than it saves, entries are evicted oldest first
    const known = this.entries.get(docid);
    if (known) return known;
    const raw = this.rawDoc(docid);
    if (!raw) return undefined;
    // Buffer.from: small entries share Node's pool slabs instead of an ArrayBuffer each
    const copy = Buffer.from(raw);
    this.entries.set(docid, copy, copy.byteLength);
    return copy;
  }

  /** See `entryExactness`; -1 for a document without searchable words. */
  exactness(docid: number, wanted: readonly number[]): number {
    const raw = this.dbs.docs.getBinaryFast(docid);
    return raw ? entryExactness(raw, wanted) : -1;
  }

  private vocab: Vocabulary | null = null;

  /** Word <-> id for every indexed word, loaded once per keyword generation. */
  vocabulary(): Vocabulary {
    this.refresh();
    if (!this.vocab) this.fromStoredLexicon();
    if (!this.vocab) this.vocab = buildVocabulary(this.dbs);
    return this.vocab;
  }

  private dictIds: Int32Array | null = null;

  /** The word id of each dictionary word, in dictionary order (-1 for none; see lexicon.ts). */
  dictionaryIds(): Int32Array {
    this.refresh();
    if (!this.dictIds) this.fromStoredLexicon();
    if (!this.dictIds) this.dictIds = buildDictionaryIds(this.dictionary(), this.vocabulary());
    return this.dictIds;
  }

  idOf(word: string): number | undefined {
    return this.vocabulary().idOf(word);
  }
}

const readers = new WeakMap<IndexStore, KeywordReader>();

export function keywordReader(store: IndexStore): KeywordReader {
  let r = readers.get(store);
  if (!r) {
    r = new KeywordReader(store);
    readers.set(store, r);
  }
  return r;
}
