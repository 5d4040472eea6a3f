/**
 * The keyword layouts of earlier storage formats and their conversion to the current one (see
 * layout.ts).
 *
 * Format 1.1.0 (and 1.0.0) kept each document's entry as u32 LE values in `kw-docs`:
 * [fieldCount, (fid, n, id x n, position x n)...]. 1.2.0 keeps them in `kw-entries`, ids and
 * positions as narrow as each field needs (entry.ts).
 *
 * Format 1.0.0 kept, besides the databases that did not change:
 *
 *   kw-word-fids   word \0 fid -> docids      one key per (word, field)
 *   kw-word-pos    word \0 bucket -> docids   one key per (word, first-position bucket)
 *   kw-word-ids    word -> u32 (msgpack)      word ids
 *   kw-id-words    u32 -> word (string)       and back
 *
 * The conversion only reads those and writes the new databases, so until the upgrade commits
 * the old layout is intact (a rollback clears the new databases); the old databases are
 * dropped once the new version is in place.
 */
import type { Database } from 'lmdb';
import type { IndexStore } from '../../index/store.js';
import { encodeEntry } from './entry.js';
import { bucketTag, bumpKeywordGeneration, ENTRIES_DB, encodeWordRecord, fieldTag, ID_BLOCK, keywordDbs, type WordPart } from './layout.js';

/** The databases the conversion creates (a rollback empties them). */
export const CONVERTED_DATABASES = ['kw-word-parts', 'kw-id-blocks'] as const;
const LEGACY_DATABASES = ['kw-word-fids', 'kw-word-pos', 'kw-word-ids', 'kw-id-words'] as const;

interface LegacyDbs {
  wordFids: Database<Buffer, string>;
  wordPositions: Database<Buffer, string>;
  wordIds: Database<number, string>;
  idWords: Database<string, number>;
}

function legacyDbs(store: IndexStore): LegacyDbs {
  return {
    wordFids: store.openDB<Buffer, string>('kw-word-fids', { encoding: 'binary' }),
    wordPositions: store.openDB<Buffer, string>('kw-word-pos', { encoding: 'binary' }),
    wordIds: store.openDB<number, string>('kw-word-ids', { encoding: 'msgpack' }),
    idWords: store.openDB<string, number>('kw-id-words', { keyEncoding: 'uint32', encoding: 'string' }),
  };
}

/** The (tag, bitmap) parts of `word` stored under `word \0 n` keys, with `n` turned into a tag. */
function legacyParts(db: Database<Buffer, string>, word: string, tag: (n: number) => number, out: WordPart[]): void {
  for (const { key, value } of db.getRange({ start: `${word}\u0000`, end: `${word}\u0001` })) {
    const n = Number((key as string).slice(word.length + 1));
    out.push({ tag: tag(n), bitmap: Uint8Array.prototype.slice.call(value) });
  }
}

/**
 * Writes the current keyword layout from the 1.0.0 one. Call inside the index's write
 * transaction; `checkpoint` runs every few thousand words (it throws to cancel). Returns the
 * number of word records written.
 */
export function convertLegacyKeywordLayout(store: IndexStore, checkpoint: () => void = () => {}): number {
  const legacy = legacyDbs(store);
  const dbs = keywordDbs(store);
  let words = 0;
  for (const { key, value } of legacy.wordIds.getRange()) {
    const word = key as string;
    const parts: WordPart[] = [];
    legacyParts(legacy.wordFids, word, fieldTag, parts);
    legacyParts(legacy.wordPositions, word, bucketTag, parts);
    // A word whose documents were all deleted kept its id in 1.0.0; it has no record now.
    if (parts.length === 0) continue;
    parts.sort((a, b) => a.tag - b.tag);
    dbs.wordParts.putSync(word, encodeWordRecord(value as number, parts));
    if (++words % 5000 === 0) checkpoint();
  }
  let block = -1;
  let list: Array<string | null> = [];
  const flush = () => {
    if (block >= 0) dbs.idBlocks.putSync(block, list);
  };
  for (const { key, value } of legacy.idWords.getRange()) {
    const id = key as number;
    const b = Math.floor(id / ID_BLOCK);
    if (b !== block) {
      flush();
      block = b;
      list = [];
    }
    while (list.length < id % ID_BLOCK) list.push(null);
    list[id % ID_BLOCK] = value as string;
  }
  flush();
  bumpKeywordGeneration(store);
  return words;
}

/** Drops the 1.0.0 databases (after the upgrade committed). Call inside a write transaction. */
export function dropLegacyKeywordLayout(store: IndexStore): void {
  for (const name of LEGACY_DATABASES) store.openDB(name, { encoding: 'binary' }).dropSync();
}

/** The database the entry conversion creates (a rollback empties it). */
export const CONVERTED_ENTRIES_DATABASE = ENTRIES_DB;
const LEGACY_ENTRIES_DATABASE = 'kw-docs';

const legacyEntries = (store: IndexStore): Database<Buffer, number> =>
  store.openDB<Buffer, number>(LEGACY_ENTRIES_DATABASE, { keyEncoding: 'uint32', encoding: 'binary' });

/** The fields of a u32 entry (values read unaligned, as LMDB hands them out). */
export function legacyEntryFields(raw: Buffer): Array<[number, Uint32Array, Uint32Array]> {
  const fields: Array<[number, Uint32Array, Uint32Array]> = [];
  const count = raw.readUInt32LE(0);
  let o = 4;
  for (let f = 0; f < count; f++) {
    const fid = raw.readUInt32LE(o);
    const n = raw.readUInt32LE(o + 4);
    o += 8;
    const ids = new Uint32Array(n);
    const positions = new Uint32Array(n);
    for (let i = 0; i < n; i++) ids[i] = raw.readUInt32LE(o + 4 * i);
    o += 4 * n;
    for (let i = 0; i < n; i++) positions[i] = raw.readUInt32LE(o + 4 * i);
    o += 4 * n;
    fields.push([fid, ids, positions]);
  }
  return fields;
}

/**
 * Writes every entry of `kw-docs` (u32) into `kw-entries` (entry.ts), leaving `kw-docs` as it is
 * until the new version is committed. Call inside the index's write transaction; returns the
 * number of entries converted.
 */
export function convertLegacyEntries(store: IndexStore, checkpoint: () => void = () => {}): number {
  const target = keywordDbs(store).docs;
  let entries = 0;
  for (const { key, value } of legacyEntries(store).getRange()) {
    target.putSync(key as number, encodeEntry(legacyEntryFields(value as Buffer)));
    if (++entries % 5000 === 0) checkpoint();
  }
  bumpKeywordGeneration(store);
  return entries;
}

/** Drops `kw-docs` (after the upgrade committed). Call inside a write transaction. */
export function dropLegacyEntries(store: IndexStore): void {
  legacyEntries(store).dropSync();
}
