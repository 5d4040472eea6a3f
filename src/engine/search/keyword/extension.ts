/**
 * The keyword `IndexExtension`: derives the keyword databases (see layout.ts) from documents.
 *
 * A batch accumulates per-key deltas (docids added and removed) in maps, then merges each touched
 * posting list once into LMDB; when the deltas grow past a bound they are merged early, so memory
 * stays bounded whatever the payload size. Removals use the stored extraction of the document
 * (`kw-docs`), so an update or deletion removes exactly what was indexed.
 */
import roaring from 'roaring';
import type { Database } from 'lmdb';
import type { IndexExtension, DocumentChange, ApplyContext } from '../../index/extension.js';
import type { IndexStore } from '../../index/store.js';
import type { Settings } from '../../settings/types.js';
import type { Document } from '../../types.js';
import { HARD_GAP } from '../../text/tokenize.js';
import { analyzerFor, type Analyzer } from './analyzer.js';
import { forEachValue, isSearchable, localesFor } from './fields.js';
import { bumpKeywordGeneration, keywordDbs, positionBucket, prefixesOf, wordFidKey, wordPositionKey, valueKey, MAX_VALUE_WORDS, VALUE_GAP, decodeEntry, encodeEntry, serializeAscending, type TextEntry, type KeywordDbs } from './layout.js';

const { RoaringBitmap32 } = roaring;

/** Pending postings after which deltas are merged into LMDB mid-batch. */
const FLUSH_THRESHOLD = 8_000_000;
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
 * Pending postings of one database. Keys get numbers; additions are appended to one log of
 * (key, docid) pairs, grouped per key by a counting pass at merge time: sequential writes to two
 * typed arrays instead of a growing array per key.
 */
class DeltaMap {
  private readonly index = new Map<string, number>();
  private keys: string[] = [];
  private lastDoc = new Int32Array(1024).fill(-1);
  private logKey = new Int32Array(1 << 16);
  private logDoc = new Uint32Array(1 << 16);
  private adds = 0;
  private dels: Map<number, number[]> | null = null;
  size = 0;
  add(key: string, docid: number): void {
    this.push(this.entry(key), docid);
  }
  /**
   * Adds straight from extraction, for a document with nothing indexed before. A document's keys
   * are all put before the next document's, so a repeated key ends with this docid.
   */
  addOnce(key: string, docid: number): boolean {
    return this.push(this.entry(key), docid) === 1;
  }
  del(key: string, docid: number): void {
    const k = this.entry(key);
    this.dels ??= new Map();
    let list = this.dels.get(k);
    if (!list) this.dels.set(k, (list = []));
    list.push(docid);
    this.size++;
  }
  /** The number of `key` in this batch. */
  entry(key: string): number {
    let k = this.index.get(key);
    if (k === undefined) {
      k = this.keys.length;
      this.keys.push(key);
      this.index.set(key, k);
      if (k >= this.lastDoc.length) {
        const grown = new Int32Array(this.lastDoc.length * 2).fill(-1);
        grown.set(this.lastDoc);
        this.lastDoc = grown;
      }
    }
    return k;
  }
  /** Adds `docid` to key number `k` unless it was the last one added there; 1 if added. */
  push(k: number, docid: number): number {
    if (this.lastDoc[k] === docid) return 0;
    this.lastDoc[k] = docid;
    if (this.adds >= this.logKey.length) {
      const key = new Int32Array(this.logKey.length * 2);
      key.set(this.logKey);
      this.logKey = key;
      const doc = new Uint32Array(this.logDoc.length * 2);
      doc.set(this.logDoc);
      this.logDoc = doc;
    }
    this.logKey[this.adds] = k;
    this.logDoc[this.adds] = docid;
    this.adds++;
    this.size++;
    return 1;
  }
  mergeInto(db: Database<Buffer, string>): void {
    // Group the log by key (stable: each key's docids keep their order).
    const count = this.keys.length;
    const start = new Uint32Array(count + 1);
    for (let i = 0; i < this.adds; i++) start[this.logKey[i]! + 1]!++;
    for (let k = 0; k < count; k++) start[k + 1]! += start[k]!;
    const fill = start.slice(0, count);
    const docs = new Uint32Array(this.adds);
    for (let i = 0; i < this.adds; i++) docs[fill[this.logKey[i]!]!++] = this.logDoc[i]!;
    // Sorted keys make the B-tree writes sequential.
    const keys = this.keys;
    const order = Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
    // A database still empty (a first batch) has nothing to read back.
    let empty = true;
    for (const _ of db.getKeys({ limit: 1 })) empty = false;
    for (const k of order) {
      const key = keys[k]!;
      const add = docs.subarray(start[k]!, start[k + 1]!);
      const del = this.dels?.get(k);
      const raw = empty ? undefined : db.getBinaryFast(key);
      let bitmap: InstanceType<typeof RoaringBitmap32>;
      if (raw) {
        bitmap = RoaringBitmap32.deserialize(raw.subarray(0, raw.length), true);
        if (del) bitmap.removeMany(del);
        if (add.length) bitmap.addMany(add);
      } else {
        // A new key: its docids usually arrive in ascending order, serialized without roaring.
        const direct = del ? undefined : serializeAscending(add);
        if (direct) {
          if (direct.length > 8) db.putSync(key, direct);
          continue;
        }
        bitmap = new RoaringBitmap32(add);
      }
      if (bitmap.isEmpty) {
        if (raw) db.removeSync(key);
      } else db.putSync(key, bitmap.serialize(true) as unknown as Buffer);
    }
    this.index.clear();
    this.keys = [];
    this.lastDoc.fill(-1);
    this.adds = 0;
    this.dels = null;
    this.size = 0;
  }
}

/**
 * One word's deltas in the batch, resolved once: a new document then costs one map lookup per
 * word instead of a key string and a lookup per derived posting (field, position, prefixes).
 */
interface WordSlot {
  word: string;
  plain: number | null;
  exact: number | null;
  prefixes: number[] | null;
  fids: Array<number | undefined>;
  positions: Array<number | undefined>;
  /** The document whose first position of the word is in `first`, and the field last seen in it. */
  doc: number;
  first: number;
  fid: number;
  /** The word id, -1 until resolved. */
  id: number;
}

/** The keys one document contributes to each database. */
interface DocKeys<S extends KeySink = KeySink> {
  words: S;
  exact: S;
  prefixes: S;
  wordFids: S;
  wordPositions: S;
  values: S;
}

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
    const tokens = analyzer.tokenizer.tokenize(text, localesFor(path, settings.localizedAttributes), f.next);
    for (const t of tokens) {
      if (t.position > MAX_POSITION) break;
      if (t.stop) continue;
      f.words.push(t.word);
      f.positions.push(t.position);
    }
    if (tokens.length > 0) f.next = tokens[tokens.length - 1]!.position + HARD_GAP;
  });
  const entry: TextEntry = [];
  for (const [fid, f] of perField) if (f.words.length > 0) entry.push([fid, f.words, f.positions]);
  return entry;
}

const MAX_VALUE_FIELD_WORDS = 64;

function newKeySets(): DocKeys<KeySet> {
  return { words: new KeySet(), exact: new KeySet(), prefixes: new KeySet(), wordFids: new KeySet(), wordPositions: new KeySet(), values: new KeySet() };
}

function keysOf<S extends KeySink>(entry: TextEntry, analyzer: Analyzer, paths: readonly string[], prefixSearch: boolean, keys: DocKeys<S>): DocKeys<S> {
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
      const known = firstPosition.get(w);
      if (known === undefined || p < known) firstPosition.set(w, p);
      keys.wordFids.put(wordFidKey(w, fid));
      if (!target.put(w)) continue;
      if (prefixSearch) prefixesOf(w, keys.prefixes);
    }
  }
  for (const [w, p] of firstPosition) keys.wordPositions.put(wordPositionKey(w, positionBucket(p)));
  return keys;
}

function diff(before: Set<string>, after: Set<string> | undefined, docid: number, deltas: DeltaMap): void {
  for (const k of before) if (!after?.has(k)) deltas.del(k, docid);
  if (after) for (const k of after) if (!before.has(k)) deltas.add(k, docid);
}

class BatchWriter {
  readonly words = new DeltaMap();
  readonly exact = new DeltaMap();
  readonly prefixes = new DeltaMap();
  readonly wordFids = new DeltaMap();
  readonly wordPositions = new DeltaMap();
  readonly values = new DeltaMap();
  readonly analyzer: Analyzer;
  readonly fields: FieldIds;
  private readonly prefixSearch: boolean;

  constructor(private readonly dbs: KeywordDbs, settings: Settings) {
    this.analyzer = analyzerFor(settings);
    this.fields = new FieldIds(loadFieldPaths(dbs));
    this.prefixSearch = settings.prefixSearch !== 'disabled';
  }

  /** Word ids known or assigned in this batch. */
  private readonly idCache = new Map<string, number>();
  private readonly wordCache = new Map<number, string>();
  private nextId = -1;

  private idOf(word: string): number {
    let id = this.idCache.get(word);
    if (id === undefined) {
      id = this.dbs.wordIds.get(word);
      if (id === undefined) {
        if (this.nextId < 0) this.nextId = (this.dbs.meta.get('nextWordId') as number | undefined) ?? 0;
        id = this.nextId++;
        this.dbs.wordIds.putSync(word, id);
        this.dbs.idWords.putSync(id, word);
      }
      this.idCache.set(word, id);
    }
    return id;
  }

  private wordOf(id: number): string {
    let w = this.wordCache.get(id);
    if (w === undefined) {
      w = this.dbs.idWords.get(id) ?? '';
      this.wordCache.set(id, w);
    }
    return w;
  }

  private stored(docid: number): TextEntry | undefined {
    const raw = this.dbs.docs.getBinary(docid);
    if (!raw) return undefined;
    return decodeEntry(raw).map(([fid, ids, positions]) => [fid, Array.from(ids, (id) => this.wordOf(id)), Array.from(positions)]);
  }

  change(change: DocumentChange): void {
    const old = this.stored(change.docid);
    const next = change.after ? extractDocument(change.after, this.analyzer, this.fields) : undefined;
    const paths = this.fields.paths;
    let ids: number[][] | undefined;
    if (!old) {
      // Nothing indexed before: keys go straight into the deltas, no per-document sets.
      if (next) ids = this.addNew(next, change.docid);
    } else {
      const a = keysOf(old, this.analyzer, paths, this.prefixSearch, newKeySets());
      const b = next ? keysOf(next, this.analyzer, paths, this.prefixSearch, newKeySets()) : undefined;
      this.diffAll(a, b, change.docid);
    }
    if (next && next.length > 0) {
      this.dbs.docs.putSync(change.docid, encodeEntry(next.map(([fid, words, positions], f) => [fid, ids ? ids[f]! : words.map((w) => this.idOf(w)), positions])));
    }
    else if (old) this.dbs.docs.removeSync(change.docid);
    if (this.pending() > FLUSH_THRESHOLD) this.flush();
  }

  private readonly slots = new Map<string, WordSlot>();

  private slotOf(word: string): WordSlot {
    let slot = this.slots.get(word);
    if (!slot) {
      slot = { word, plain: null, exact: null, prefixes: null, fids: [], positions: [], doc: -1, first: 0, fid: -1, id: -1 };
      this.slots.set(word, slot);
    }
    return slot;
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
      // Long texts (descriptions) are not matched as whole values (see keysOf).
      let from = words.length > MAX_VALUE_FIELD_WORDS ? words.length : 0;
      for (let i = from + 1; i <= words.length; i++) {
        if (i === words.length || positions[i]! - positions[i - 1]! >= VALUE_GAP) {
          if (i - from <= MAX_VALUE_WORDS) this.values.addOnce(valueKey(words.slice(from, i)), docid);
          from = i;
        }
      }
      const exact = this.analyzer.isExactAttribute(paths[fid] ?? '');
      for (let i = 0; i < words.length; i++) {
        const w = words[i]!;
        const p = positions[i]!;
        const slot = this.slotOf(w);
        if (slot.id < 0) slot.id = this.idOf(w);
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
        slot.fid = fid;
        this.wordFids.push((slot.fids[fid] ??= this.wordFids.entry(wordFidKey(w, fid))), docid);
        if (exact) {
          if (!this.exact.push((slot.exact ??= this.exact.entry(w)), docid)) continue;
        } else {
          if (!this.words.push((slot.plain ??= this.words.entry(w)), docid)) continue;
        }
        if (this.prefixSearch) {
          if (!slot.prefixes) {
            const list: number[] = (slot.prefixes = []);
            prefixesOf(w, { put: (k) => list.push(this.prefixes.entry(k)) });
          }
          for (const k of slot.prefixes) this.prefixes.push(k, docid);
        }
      }
    }
    for (const slot of seen) {
      const b = positionBucket(slot.first);
      this.wordPositions.push((slot.positions[b] ??= this.wordPositions.entry(wordPositionKey(slot.word, b))), docid);
    }
    return ids;
  }

  private diffAll(a: DocKeys<KeySet>, b: DocKeys<KeySet> | undefined, docid: number): void {
    diff(a.words, b?.words, docid, this.words);
    diff(a.exact, b?.exact, docid, this.exact);
    diff(a.prefixes, b?.prefixes, docid, this.prefixes);
    diff(a.wordFids, b?.wordFids, docid, this.wordFids);
    diff(a.wordPositions, b?.wordPositions, docid, this.wordPositions);
    diff(a.values, b?.values, docid, this.values);
  }

  pending(): number {
    return this.words.size + this.exact.size + this.prefixes.size + this.wordFids.size + this.wordPositions.size + this.values.size;
  }

  flush(): void {
    // Slots point at deltas the merge is about to drop.
    this.slots.clear();
    this.words.mergeInto(this.dbs.words);
    this.exact.mergeInto(this.dbs.exactWords);
    this.prefixes.mergeInto(this.dbs.prefixes);
    this.wordFids.mergeInto(this.dbs.wordFids);
    this.wordPositions.mergeInto(this.dbs.wordPositions);
    this.values.mergeInto(this.dbs.values);
    if (this.nextId >= 0) this.dbs.meta.putSync('nextWordId', this.nextId);
    if (this.fields.dirty) {
      this.dbs.meta.putSync('fields', this.fields.paths);
      this.fields.dirty = false;
    }
  }
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

  apply(changes: readonly DocumentChange[], ctx: ApplyContext): void {
    const dbs = keywordDbs(ctx.store);
    const writer = new BatchWriter(dbs, ctx.settings);
    for (const change of changes) writer.change(change);
    writer.flush();
    bumpKeywordGeneration(ctx.store);
  },

  clear(store: IndexStore): void {
    const dbs = keywordDbs(store);
    dbs.words.clearSync();
    dbs.exactWords.clearSync();
    dbs.prefixes.clearSync();
    dbs.wordFids.clearSync();
    dbs.wordPositions.clearSync();
    dbs.values.clearSync();
    dbs.docs.clearSync();
    bumpKeywordGeneration(store);
  },

  needsReindex(before: Settings, after: Settings): boolean {
    return textSettingsKey(before) !== textSettingsKey(after);
  },
};
