/**
 * The keyword databases of one index environment.
 *
 *   kw-words        word -> docids               words of typo-tolerant fields (the typo dictionary)
 *   kw-exact-words  word -> docids               words of `disableOnAttributes` fields (exact only)
 *   kw-prefixes     prefix -> docids             prefixes of 1..PREFIX_MAX chars of every word
 *   kw-word-fids    word \0 fid -> docids        per-field postings (attributeRank, attributesToSearchOn)
 *   kw-word-pos     word \0 bucket -> docids     bucket of the word's first position in the document
 *                                                (wordPosition without reading documents)
 *   kw-docs         docid -> [[fid, words, positions], ...]   the extracted words of each document,
 *                                                in order with positions (proximity, wordPosition,
 *                                                exactness, phrases) and the exact record of what
 *                                                was indexed, so a deletion removes exactly that
 *   kw-meta         'fields' -> string[]         field id -> field path
 *
 * Posting lists are roaring bitmaps in the portable serialization.
 */
import type { Database } from 'lmdb';
import type { IndexStore } from '../../index/store.js';

/** Prefix postings are kept for prefixes up to this many characters; longer prefixes are few words, resolved from the dictionary. */
export const PREFIX_MAX = 4;

export type FieldWords = [fid: number, words: string[], positions: number[]];
export type DocEntry = FieldWords[];

export interface KeywordDbs {
  words: Database<Buffer, string>;
  exactWords: Database<Buffer, string>;
  prefixes: Database<Buffer, string>;
  wordFids: Database<Buffer, string>;
  wordPositions: Database<Buffer, string>;
  docs: Database<DocEntry, number>;
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
      wordFids: store.openDB<Buffer, string>('kw-word-fids', { encoding: 'binary' }),
      wordPositions: store.openDB<Buffer, string>('kw-word-pos', { encoding: 'binary' }),
      docs: store.openDB<DocEntry, number>('kw-docs', { keyEncoding: 'uint32', encoding: 'msgpack' }),
      meta: store.openDB<any, string>('kw-meta', { encoding: 'msgpack' }),
    };
    opened.set(store, dbs);
  }
  return dbs;
}

export function wordFidKey(word: string, fid: number): string {
  return `${word}\u0000${fid}`;
}

/** Position buckets: exact below 8, then logarithmic, as far positions matter less and less. */
export const MAX_POSITION_BUCKET = 16;
export function positionBucket(p: number): number {
  if (p < 8) return p;
  return Math.min(MAX_POSITION_BUCKET, 8 + Math.floor(Math.log2(p / 8) * 2));
}

export function wordPositionKey(word: string, bucket: number): string {
  return `${word}\u0000${bucket}`;
}

/** Prefixes of `word` that get prefix postings (whole code points only). */
export function prefixesOf(word: string, out: Set<string>): void {
  let end = 0;
  for (let n = 0; n < PREFIX_MAX && end < word.length; n++) {
    end += word.codePointAt(end)! > 0xffff ? 2 : 1;
    out.add(word.slice(0, end));
  }
}

/** Bumped by every write to the keyword databases, so that search-side caches know to refresh. */
const generations = new WeakMap<IndexStore, number>();

export function keywordGeneration(store: IndexStore): number {
  return generations.get(store) ?? 0;
}

export function bumpKeywordGeneration(store: IndexStore): void {
  generations.set(store, keywordGeneration(store) + 1);
}
