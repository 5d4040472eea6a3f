/**
 * Where the query terms occur in one document, from its stored words and positions: the input of
 * the position-based rules (proximity, attributeRank, wordPosition, exactness), computed at most
 * once per document and query.
 */
import { EntryCursor, entryExactness } from '../keyword/entry.js';
import type { KeywordReader } from '../keyword/reader.js';
import type { Vocabulary } from '../keyword/vocabulary.js';
import type { ResolvedTerm } from '../query/resolve.js';

/**
 * Where one term occurs in a document: a flat list of pairs `(fid << 1 | exact, position)` in
 * stored order, where `exact` marks the query word itself (no typo, not extended by the prefix).
 * Frequent words occur dozens of times per document and a proximity pass reads thousands of
 * documents, so an occurrence is two small integers rather than an object.
 */
export type TermOccurrences = number[];

export const occurrenceFid = (occ: TermOccurrences, k: number): number => occ[k]! >>> 1;
export const occurrenceIsExact = (occ: TermOccurrences, k: number): boolean => (occ[k]! & 1) === 1;
export const occurrencePosition = (occ: TermOccurrences, k: number): number => occ[k + 1]!;

export interface DocMatches {
  /** Per resolved term index. */
  occurrences: TermOccurrences[];
  /**
   * The stored entry they were read from (KeywordReader.keptDoc: stable bytes), for `exactness`:
   * the last rule reads the same documents again, and a second LMDB read per document cost 6% of
   * a `star wars` search.
   */
  raw?: Uint8Array;
}

/**
 * Tables by word id (one byte per word of the vocabulary), kept between searches: allocating and
 * zeroing a few of them per search (200 KB each at 200k words) cost 5% of a typical search and
 * fed the garbage collector. A released table is all zeros again.
 */
const freeTables: Int8Array[] = [];

function takeTable(size: number): Int8Array {
  while (freeTables.length > 0) {
    const table = freeTables.pop()!;
    // A table of another vocabulary size (another index, a grown vocabulary) is dropped.
    if (table.length === size) return table;
  }
  return new Int8Array(size);
}

function giveTable(table: Int8Array): void {
  if (freeTables.length < MAX_FREE_TABLES) freeTables.push(table);
}

const MAX_FREE_TABLES = 16;

/** Cost of a term pair with no occurrences in a common field, and of any pair this far apart or more. */
export const MAX_PAIR_COST = 7;

/**
 * The proximity cost of two occurrences `d` apart in the same field, `d` counting one more when
 * the second term comes first: 0 for adjacent words (or the same one), up to MAX_PAIR_COST.
 */
export function distanceCost(d: number): number {
  return Math.min(Math.max(d, 1), MAX_PAIR_COST + 1) - 1;
}

/** The lowest proximity cost of two terms' occurrences in a document (rules.ts, `proximity`). */
export function pairCost(a: TermOccurrences, b: TermOccurrences, byAttribute: boolean): number {
  let best = MAX_PAIR_COST;
  for (let x = 0; x < a.length; x += 2) {
    const fid = occurrenceFid(a, x);
    const px = occurrencePosition(a, x);
    for (let y = 0; y < b.length; y += 2) {
      if (occurrenceFid(b, y) !== fid) continue;
      // proximityPrecision byAttribute: only "in the same attribute" counts.
      if (byAttribute) return 0;
      const py = occurrencePosition(b, y);
      const c = distanceCost(py >= px ? py - px : px - py + 1);
      if (c < best) {
        best = c;
        if (best === 0) return 0;
      }
    }
  }
  return best;
}

/** Prefix ranges up to this many words are resolved to word ids up front. */
const MAX_PREFIX_IDS = 20_000;

export class MatchAnalyzer {
  private readonly cache = new Map<number, DocMatches>();
  /** Per term: typos + 1 by word id (0: no match), covering derivations and, when small enough, the prefix range. */
  private readonly idTypos: Int8Array[];
  /** Terms whose prefix range was too large to list: checked by string. */
  private readonly openPrefix: Array<string | null>;
  private readonly sequences: number[][][];
  private readonly vocabulary: Vocabulary;
  private readonly termWordIds: number[];

  constructor(
    private readonly reader: KeywordReader,
    readonly terms: readonly ResolvedTerm[],
    private readonly allowed: Set<number> | null,
  ) {
    const vocab = reader.vocabulary();
    this.vocabulary = vocab;
    const size = vocab.size;
    this.openPrefix = terms.map(() => null);
    const touched = this.touched;
    this.any = takeTable(size);
    this.idTypos = terms.map((t, i) => {
      const arr = takeTable(size);
      if (t.term.kind !== 'word') return arr;
      if (t.prefix !== null) {
        const [lo, hi] = reader.dictionary().prefixRange(t.prefix);
        if (hi - lo <= MAX_PREFIX_IDS) {
          // Marked here and cleared by range in `release`: listed one by one in `touched`, the
          // 20,000 ids of a one-letter prefix grew an array per search (a tenth of what the
          // keystrokes of the as-typed set allocate).
          const dictIds = (this.rangeIds ??= reader.dictionaryIds());
          const any = this.any;
          for (let k = lo; k < hi; k++) {
            const id = dictIds[k]!;
            if (id >= 0) arr[id] = any[id] = 1;
          }
          this.ranges.push(lo, hi);
        } else this.openPrefix[i] = t.prefix;
      }
      for (const [w, typos] of t.words) {
        const id = vocab.idOf(w);
        if (id !== undefined && (arr[id] === 0 || arr[id]! > typos + 1)) {
          arr[id] = typos + 1;
          touched.push(id);
        }
      }
      return arr;
    });
    // One table for "does this id concern any term at all", so most tokens cost one lookup.
    for (const id of touched) this.any[id] = 1;
    this.termWordIds = terms.map((t) => (t.term.kind === 'word' ? vocab.idOf(t.term.word) ?? -1 : -1));
    this.sequences = terms.map((t) => t.sequences.map((seq) => seq.map((w) => vocab.idOf(w) ?? -1)));
    for (const seqs of this.sequences) {
      for (const seq of seqs) {
        if (seq[0]! >= 0) {
          this.any[seq[0]!] = 1;
          touched.push(seq[0]!);
        }
      }
    }
    this.phrase = terms.map((t) => (t.term.kind === 'phrase' ? 1 : 0));
    this.checkAll = this.openPrefix.some((p) => p !== null);
    this.withSequences = this.sequences.some((seqs) => seqs.length > 0);
  }

  /** Ids set in the tables, cleared by `release`. */
  private readonly touched: number[] = [];
  /** Dictionary ranges (lo, hi pairs) whose ids are set in the tables, and the ids they were read with; cleared by `release`. */
  private readonly ranges: number[] = [];
  private rangeIds: Int32Array | null = null;
  private released = false;

  /**
   * Gives the tables back for the next search, cleared (only the ids this one set). The analyzer
   * must not be used afterwards.
   */
  release(): void {
    // Twice would hand the same table to two later searches.
    if (this.released) return;
    this.released = true;
    const ranges = this.ranges;
    const dictIds = this.rangeIds;
    for (const table of [this.any, ...this.idTypos]) {
      for (const id of this.touched) table[id] = 0;
      for (let r = 0; r < ranges.length; r += 2) {
        for (let k = ranges[r]!; k < ranges[r + 1]!; k++) {
          const id = dictIds![k]!;
          if (id >= 0) table[id] = 0;
        }
      }
      giveTable(table);
    }
    this.touched.length = 0;
  }

  private readonly any: Int8Array;
  /** Per term: 1 for a phrase (its sequence occurrences are exact). */
  private readonly phrase: number[];
  private readonly checkAll: boolean;
  /** Some term has word sequences (phrase, synonym, split) to look for. */
  private readonly withSequences: boolean;

  /** The word ids of `words`, -1 for unknown ones. */
  idsOf(words: readonly string[]): number[] {
    return words.map((w) => this.reader.idOf(w) ?? -1);
  }

  get(docid: number): DocMatches {
    let m = this.cache.get(docid);
    if (!m) {
      m = this.compute(docid);
      this.cache.set(docid, m);
    }
    return m;
  }

  private readonly cursor = new EntryCursor();

  /** Per term: its last position in the current field (-1: none yet), and whether the current token matches it. */
  private lastAt = new Int32Array(0);
  private matchedNow = new Uint8Array(0);
  private pairBest = new Int32Array(0);

  /**
   * The proximity cost of a document: the sum, over consecutive `active` terms, of `pairCost`,
   * computed in one pass over the stored entry, without building its occurrences.
   * Within a field positions only grow, so the closest pair ending at a token pairs it with the
   * other term's last position. Stops once every pair costs 0. A proximity pass reads every
   * document of a bucket (all 36k movies for "the b"), and building the occurrences of each,
   * kept for the later rules, spent more time allocating and collecting than reading.
   * `keep`: build and keep them anyway, for a bucket small enough that the later rules read them.
   */
  proximity(docid: number, active: readonly number[], byAttribute: boolean, keep: boolean): number {
    const pairs = active.length - 1;
    const nTerms = this.terms.length;
    if (this.lastAt.length < nTerms) {
      this.lastAt = new Int32Array(nTerms);
      this.matchedNow = new Uint8Array(nTerms);
    }
    if (this.pairBest.length < pairs) this.pairBest = new Int32Array(pairs);
    const best = this.pairBest;
    // loops, not `fill`: a builtin call per document and per field cost more than the scan of a short field
    for (let k = 0; k < pairs; k++) best[k] = MAX_PAIR_COST;
    const known = keep ? this.get(docid) : this.cache.get(docid);
    const raw = known ? undefined : this.reader.rawDoc(docid);
    if (known) {
      for (let k = 0; k < pairs; k++) best[k] = pairCost(known.occurrences[active[k]!]!, known.occurrences[active[k + 1]!]!, byAttribute);
    } else if (raw) this.scanProximity(raw, active, byAttribute);
    let cost = 0;
    for (let k = 0; k < pairs; k++) cost += best[k]!;
    return cost;
  }

  private scanProximity(raw: Uint8Array, active: readonly number[], byAttribute: boolean): void {
    const pairs = active.length - 1;
    const nTerms = this.terms.length;
    const best = this.pairBest;
    const last = this.lastAt;
    const matched = this.matchedNow;
    let open = pairs;
    // Hoisted: this loop runs for every word of every document of the bucket.
    const { idTypos, openPrefix, any, checkAll, vocabulary, allowed, withSequences } = this;
    const c = this.cursor;
    c.open(raw);
    while (c.nextField()) {
      const n = c.n;
      if (allowed && !allowed.has(c.fid)) continue;
      for (let t = 0; t < nTerms; t++) last[t] = -1;
      for (let i = checkAll ? 0 : c.nextMarked(any, 0); i < n; i = checkAll ? i + 1 : c.nextMarked(any, i + 1)) {
        const id = c.id(i);
        let hit = false;
        for (let t = 0; t < nTerms; t++) {
          let m = idTypos[t]![id]! > 0;
          if (!m && checkAll) {
            const prefix = openPrefix[t];
            if (prefix !== null && vocabulary.startsWith(id, prefix)) m = true;
          }
          if (!m && withSequences) m = this.sequenceAt(t, id, i, n);
          matched[t] = m ? 1 : 0;
          if (m) hit = true;
        }
        if (!hit) continue;
        const p = c.position(i);
        for (let k = 0; k < pairs; k++) {
          const a = active[k]!;
          const b = active[k + 1]!;
          const la = matched[a] ? p : last[a]!;
          let cost = best[k]!;
          if (byAttribute) {
            if (la >= 0 && (matched[b] || last[b]! >= 0)) cost = 0;
          } else {
            // b after (or with) a: the last a before it; a after b: the last b before it.
            if (matched[b] && la >= 0) cost = Math.min(cost, distanceCost(p - la));
            if (matched[a] && last[b]! >= 0) cost = Math.min(cost, distanceCost(p - last[b]! + 1));
          }
          if (cost < best[k]!) {
            best[k] = cost;
            if (cost === 0 && --open === 0) return;
          }
        }
        for (let t = 0; t < nTerms; t++) if (matched[t]) last[t] = p;
      }
    }
  }

  /** Whether one of term `t`'s word sequences (phrase, synonym, split) starts at token `i` of the current field. */
  private sequenceAt(t: number, id: number, i: number, n: number): boolean {
    const seqs = this.sequences[t]!;
    const c = this.cursor;
    for (let q = 0; q < seqs.length; q++) {
      const seq = seqs[q]!;
      if (seq[0] !== id || i + seq.length > n) continue;
      const p0 = c.position(i);
      let ok = true;
      for (let k = 1; k < seq.length && ok; k++) ok = c.id(i + k) === seq[k] && c.position(i + k) === p0 + k;
      if (ok) return true;
    }
    return false;
  }

  /** See `entryExactness`; -1 for a document without searchable words. */
  exactness(docid: number, wanted: readonly number[]): number {
    const raw = this.cache.get(docid)?.raw;
    return raw ? entryExactness(raw, wanted) : this.reader.exactness(docid, wanted);
  }

  /** Reads the stored entry in place: the ids of every word, the positions of the matching ones. */
  private compute(docid: number): DocMatches {
    const occurrences: TermOccurrences[] = this.terms.map(() => []);
    // kept between searches (KeywordReader.keptDoc): stable bytes, so `exactness` reads them too
    const raw = this.reader.keptDoc(docid);
    if (!raw) return { occurrences };
    const c = this.cursor;
    c.open(raw);
    const nTerms = this.terms.length;
    // Hoisted, as in scanProximity: every word of every document of a small bucket passes here,
    // and most are no query word (a `star wars` search spent a fifth of its CPU in this loop).
    const { idTypos, openPrefix, any, checkAll, vocabulary, allowed, withSequences, termWordIds } = this;
    const phrase = this.phrase;
    while (c.nextField()) {
      const fid = c.fid;
      const n = c.n;
      if (allowed && !allowed.has(fid)) continue;
      for (let i = checkAll ? 0 : c.nextMarked(any, 0); i < n; i = checkAll ? i + 1 : c.nextMarked(any, i + 1)) {
        const id = c.id(i);
        for (let t = 0; t < nTerms; t++) {
          let v = idTypos[t]![id]!;
          const open = openPrefix[t];
          if (v === 0 && open !== null && vocabulary.startsWith(id, open)) v = 1;
          if (v > 0) occurrences[t]!.push((fid << 1) | (id === termWordIds[t] ? 1 : 0), c.position(i));
          if (withSequences && this.sequenceAt(t, id, i, n)) occurrences[t]!.push((fid << 1) | phrase[t]!, c.position(i));
        }
      }
    }
    return { occurrences, raw };
  }
}
