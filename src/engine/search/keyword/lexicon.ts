/**
 * An index's lexicon: the word structures a search needs whole (the typo dictionary, the
 * vocabulary of word ids, and the id of each dictionary word), built once per commit by the write
 * side and stored in kw-meta in the same transaction, so that a search thread reads them in one
 * piece after a commit instead of rebuilding them.
 *
 * Why: every commit changes an index's words, and each search thread used to rebuild all three
 * from the keyword databases on its first search after it (walking every key of kw-words and
 * kw-id-blocks): 130-245 ms per thread per commit on the movies, during which that thread answered
 * nothing. Searching the index being filled (a search every 10 ms while the movies were added to it
 * in 4 payloads) gave p99 110-195 ms against 47 ms for another index. Reading the stored lexicon
 * is one copy of a few MB.
 *
 * The stored copy carries the commit it was built in (COMMIT_KEY of store.ts). A reader uses it
 * only when that is the commit it reads; any other transaction on the index (a later one that
 * did not rebuild it, a database written before lexicons, a path that writes words without
 * `storeLexicon`) leaves it stale, and the reader builds the structures itself as before. So a
 * stale lexicon costs time, never answers.
 *
 * Layout (little-endian): magic, version, the commit (float64), the number of arrays, then per
 * array its element type and length, then each array's bytes at an offset aligned to 8.
 */
import { COMMIT_KEY, type IndexStore } from '../../index/store.js';
import { PackedWords, PackedWordsBuilder } from '../../text/packed-words.js';
import { WordDictionary } from '../../text/typo.js';
import { ID_BLOCK, type KeywordDbs } from './layout.js';
import { Vocabulary } from './vocabulary.js';
import { availableMemory } from '../../tasks/batch-budget.js';
import { AMPLE_MEMORY } from '../../thread-heaps.js';

/** kw-meta key of the stored lexicon. */
export const LEXICON_KEY = 'lexicon';

const MAGIC = 0x4c455831; // 'LEX1'
const VERSION = 1;

export interface Lexicon {
  dictionary: WordDictionary;
  vocabulary: Vocabulary;
  /** The word id of each dictionary word, in dictionary order (-1 for none). */
  dictionaryIds: Int32Array;
}

/** The typo dictionary: the keys of kw-words, packed as they stream by (each key's string dies young). */
export function buildDictionary(dbs: KeywordDbs): WordDictionary {
  // LMDB orders by UTF-8 bytes, the automaton walks UTF-16 code units: the builder sorts when the
  // two orders differ.
  const builder = new PackedWordsBuilder();
  for (const key of dbs.words.getKeys()) builder.add(key as string);
  return new WordDictionary(builder.finish());
}

/** Word <-> id for every indexed word, from kw-id-blocks. */
export function buildVocabulary(dbs: KeywordDbs): Vocabulary {
  const blocks = dbs.idBlocks.getRange();
  return Vocabulary.load(
    (function* () {
      for (const { key, value } of blocks) yield { base: (key as number) * ID_BLOCK, words: value as Array<string | null> };
    })(),
  );
}

/**
 * The id of each dictionary word: a prefix's range of the dictionary maps to ids by index, where a
 * map lookup per word cost a typical search 7% at 200k documents (a short prefix spans thousands
 * of words).
 */
export function buildDictionaryIds(dictionary: WordDictionary, vocabulary: Vocabulary): Int32Array {
  const words = dictionary.words;
  const out = new Int32Array(words.size);
  for (let k = 0; k < words.size; k++) out[k] = vocabulary.idOfPacked(words, k);
  return out;
}

/**
 * Whether a batch of `documents` changes is worth the lexicon's build, on an index of `words`
 * words (kw-words entries). Building costs 1.5-3 µs a word, a batch about 250 µs a document (the
 * movies: 98,000 words in 150-340 ms, batches of 9,000 documents in 2-3 s): above
 * WORDS_PER_DOCUMENT words a document the build would add more than a tenth or so to the batch,
 * and a small batch on a large index (1,000 documents on 500,000 words) is left without one; its
 * readers build the structures themselves, as before lexicons. Small indexes always get one.
 *
 * None under a memory limit below AMPLE_MEMORY: a batch's transaction keeps its dirty pages in
 * the write process's memory until the commit, and a 200k-document build in 512 MiB already held
 * 440 MiB there; the lexicon's copies (its previous and next arrays, their encoding, its new
 * pages: some 60-90 MB at 500,000 words) had the write process killed at the limit three times.
 */
export function worthStoring(words: number, documents: number, memory = availableMemory(), setting = process.env[STORED_LEXICON_ENV]): boolean {
  const mode = setting?.trim().toLowerCase();
  if (mode === 'off') return false;
  if (mode !== 'on' && memory < AMPLE_MEMORY) return false;
  return words <= ALWAYS_WORDS || words <= documents * WORDS_PER_DOCUMENT;
}

/** `SEARCH_STORED_LEXICON`: `off` (never stored), `on` (whatever the memory), `auto` (the default: not under a limit below 4 GiB). */
export const STORED_LEXICON_ENV = 'SEARCH_STORED_LEXICON';
const ALWAYS_WORDS = 50_000;
const WORDS_PER_DOCUMENT = 16;

/** A batch's changes to the lexicon, as its keyword writer saw them. */
export interface LexiconChanges {
  /** kw-words keys the batch added or removed: key -> [there before the batch, there now]. */
  words: ReadonlyMap<string, readonly [before: boolean, now: boolean]>;
  /** Words given a new id, ascending. */
  newIds: ReadonlyArray<readonly [id: number, word: string]>;
}

/**
 * After a batch's keyword writes, inside its transaction: nothing but dropping the stale one when
 * the batch is not worth a lexicon (`worthStoring`). Else, when the lexicon of the state the batch
 * started from is stored (by an earlier writer of this transaction, or in the commit just
 * before), the batch's changes are applied to it: its arrays copied once with the added words
 * merged in, and the vocabulary's hash table built again; on the movies 110-200 ms per batch
 * against 150-340 ms for a whole build, at load 5 (it runs once per batch, in code V8 has not
 * optimized). Otherwise it is built whole.
 */
export function updateLexicon(store: IndexStore, dbs: KeywordDbs, documents: number, changes: LexiconChanges): void {
  if (!worthStoring((dbs.words.getStats() as { entryCount: number }).entryCount, documents)) {
    dropLexicon(dbs);
    return;
  }
  const commit = currentCommit(store);
  const previous = readLexicon(dbs, commit, commit - 1);
  if (previous) dbs.meta.putSync(LEXICON_KEY, encodeLexicon(changed(previous, changes), commit));
  else storeLexicon(store, dbs);
}

/** `lexicon` with a batch's `changes`. */
export function changed(lexicon: Lexicon, changes: LexiconChanges): Lexicon {
  const vocabulary = changes.newIds.length > 0 ? lexicon.vocabulary.extended(changes.newIds) : lexicon.vocabulary;
  const words = lexicon.dictionary.words;
  const added: string[] = [];
  const dropped = new Set<number>();
  /** Words removed and added again by the batch: they may have a new id. */
  const returned = new Set<number>();
  for (const [word, [before, now]] of changes.words) {
    if (!before && now) added.push(word);
    else if (before) {
      const at = words.indexOf(word);
      if (at < 0) continue; // not a dictionary word after all: nothing to change
      if (now) returned.add(at);
      else dropped.add(at);
    }
  }
  if (added.length === 0 && dropped.size === 0 && returned.size === 0 && vocabulary === lexicon.vocabulary) return lexicon;
  // JS string order: what the dictionary sorts by (UTF-16 code units)
  added.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const merged = words.merged(added, dropped);
  const dictionaryIds = new Int32Array(merged.words.size);
  const { from } = merged;
  for (let k = 0; k < from.length; k++) {
    const was = from[k]!;
    dictionaryIds[k] = was >= 0 && !returned.has(was) ? lexicon.dictionaryIds[was]! : (vocabulary.idOf(merged.words.word(k)) ?? -1);
  }
  return { dictionary: new WordDictionary(merged.words), vocabulary, dictionaryIds };
}

function currentCommit(store: IndexStore): number {
  return (store.main.get(COMMIT_KEY) as number | undefined) ?? 0;
}

/** Build the lexicon of the index as this transaction sees it and store it, stamped with the commit (call inside the write). */
export function storeLexicon(store: IndexStore, dbs: KeywordDbs): void {
  const commit = currentCommit(store);
  const dictionary = buildDictionary(dbs);
  const vocabulary = buildVocabulary(dbs);
  const lexicon: Lexicon = { dictionary, vocabulary, dictionaryIds: buildDictionaryIds(dictionary, vocabulary) };
  dbs.meta.putSync(LEXICON_KEY, encodeLexicon(lexicon, commit));
}

/** Drop the stored lexicon (an index cleared of its words). */
export function dropLexicon(dbs: KeywordDbs): void {
  dbs.meta.removeSync(LEXICON_KEY);
}

/** The stored lexicon if it was built in one of `commits`, else null (see above). */
export function readLexicon(dbs: KeywordDbs, ...commits: number[]): Lexicon | null {
  const bytes = dbs.meta.get(LEXICON_KEY) as Uint8Array | undefined;
  if (!bytes || bytes.byteLength < HEADER_BYTES) return null;
  return decodeLexicon(bytes, ...commits);
}

type Part = Uint8Array | Uint16Array | Uint32Array | Int32Array;
const KINDS = [Uint8Array, Uint16Array, Uint32Array, Int32Array] as const;
const HEADER_BYTES = 24;
const PART_BYTES = 8;
const align = (n: number) => (n + 7) & ~7;

function kindOf(part: Part): number {
  const kind = KINDS.findIndex((type) => part instanceof type);
  if (kind < 0) throw new Error('lexicon: an array of an unknown type');
  return kind;
}

export function encodeLexicon(lexicon: Lexicon, commit: number): Buffer {
  const parts: Part[] = [...lexicon.dictionary.words.parts(), ...lexicon.vocabulary.parts(), lexicon.dictionaryIds];
  let size = align(HEADER_BYTES + parts.length * PART_BYTES);
  for (const part of parts) size += align(part.byteLength);
  const out = Buffer.alloc(size);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeDoubleLE(commit, 8);
  out.writeUInt32LE(parts.length, 16);
  let at = align(HEADER_BYTES + parts.length * PART_BYTES);
  parts.forEach((part, i) => {
    out.writeUInt32LE(kindOf(part), HEADER_BYTES + i * PART_BYTES);
    out.writeUInt32LE(part.length, HEADER_BYTES + i * PART_BYTES + 4);
    out.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), at);
    at += align(part.byteLength);
  });
  return out;
}

/** From stored bytes (copied once into memory of its own, aligned for the views); null when of none of `commits` or not a lexicon. */
export function decodeLexicon(stored: Uint8Array, ...commits: number[]): Lexicon | null {
  const header = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  if (header.readUInt32LE(0) !== MAGIC || header.readUInt32LE(4) !== VERSION || !commits.includes(header.readDoubleLE(8))) return null;
  const count = header.readUInt32LE(16);
  if (count !== 8) return null;
  const own = new ArrayBuffer(stored.byteLength);
  new Uint8Array(own).set(stored);
  const parts: Part[] = [];
  let at = align(HEADER_BYTES + count * PART_BYTES);
  for (let i = 0; i < count; i++) {
    const type = KINDS[header.readUInt32LE(HEADER_BYTES + i * PART_BYTES)];
    const length = header.readUInt32LE(HEADER_BYTES + i * PART_BYTES + 4);
    if (!type || at + length * type.BYTES_PER_ELEMENT > own.byteLength) return null;
    parts.push(new type(own, at, length));
    at += align(length * type.BYTES_PER_ELEMENT);
  }
  const [dUnits, bases, ends, shared, vUnits, starts, table, dictionaryIds] = parts as [Uint8Array | Uint16Array, Uint32Array, Uint8Array | Uint16Array | Uint32Array, Uint8Array, Uint8Array | Uint16Array, Uint32Array<ArrayBuffer>, Int32Array<ArrayBuffer>, Int32Array];
  return {
    dictionary: new WordDictionary(new PackedWords(dUnits, bases, ends, shared)),
    vocabulary: Vocabulary.fromParts(vUnits, starts, table),
    dictionaryIds,
  };
}
