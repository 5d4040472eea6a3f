/**
 * The ranking rules, each splitting a bucket of documents into ordered sub-buckets with the rank
 * each sub-bucket earns. `words` and `typo` work on posting lists; the position-based rules
 * (proximity, attributeRank, wordPosition, exactness) score each document of the bucket from its
 * stored positions; sort criteria delegate to the sort module.
 */
import roaring from 'roaring';
import type { Bitmap, IndexStore } from '../../index/store.js';
import type { Settings } from '../../settings/types.js';
import type { ResolvedTerm } from '../query/resolve.js';
import { MAX_PAIR_COST, occurrenceFid, occurrenceIsExact, occurrencePosition, type MatchAnalyzer } from './matches.js';
import type { KeywordReader } from '../keyword/reader.js';
import { isSearchable } from '../keyword/fields.js';
import { BUCKET_TAG, fieldTag, MAX_POSITION_BUCKET, PAIR_FIRST_MAX, PAIR_PREFIX_MAX, PAIR_SECOND_MAX, positionBucket, PREFIX_MAX, START_WORDS } from '../keyword/layout.js';
import type { RuleDetail } from './score.js';

const { RoaringBitmap32 } = roaring;

export type Docids = Bitmap | number[];

export interface Bucket {
  docids: Docids;
  /** Indices of the query terms this bucket must match (set by `words`). */
  active: number[];
  detail: RuleDetail;
  /** Documents of the bucket that may belong to a later bucket of the same rule (see Unsure). */
  unsure?: Unsure;
}

/**
 * Documents a rule put in a bucket on what its postings say, without reading them: some may
 * belong to a later bucket of the rule. The bucket sort asks `admit` for each one it is about to
 * return (or whose reading decides how a later rule ranks the bucket); false moves the document
 * to the later bucket where it belongs, which the rule then yields with it.
 */
export interface Unsure {
  /** Those not asked about yet (shrinks as `admit` is called). */
  docs: Bitmap;
  admit(docid: number): boolean;
}

export interface RankingContext {
  store: IndexStore;
  settings: Settings;
  terms: readonly ResolvedTerm[];
  matches: MatchAnalyzer;
  matchingStrategy: 'last' | 'all' | 'frequency';
  /** Attribute rank of a field id, and the number of ranks. */
  fidRank: (fid: number) => number;
  maxFidRank: number;
  reader: KeywordReader;
  /** Field ids searched in (null: all). */
  fids: number[] | null;
  /** Every word a term can match when they are few enough to enumerate, else null. */
  termWords: (i: number) => string[] | null;
  /**
   * Whether `termWords(i)` leaves out words the term matches: a short prefix's, past a bound. The
   * rules that rank a large bucket from posting lists then rank its pure prefix matches last,
   * where reading each document ranks them by where they are.
   */
  termWordsCut: (i: number) => boolean;
  /**
   * The prefix whose record (kw-prefix-parts) stands for the words `termWords(i)` leaves out of a
   * short prefix's, else null: with it the rules rank every match of the term from posting lists.
   */
  termPrefixRecord: (i: number) => string | null;
}

/**
 * Buckets at least this large are ranked from posting lists when the terms allow it, smaller ones
 * by reading each document's entry. The two agree (a document ranks the same in any bucket) but
 * where a term's words are cut (RankingContext.termWordsCut). 64 took a tenth to a third off the
 * keyword searches' CPU and half the entries read at 200k, but the cold searches that still read
 * hundreds of entries ("king the") got slower in a 512 MiB container, the searches before them no
 * longer bringing those pages in (bench/README.md, "One ranking whatever the bucket").
 */
export const BITMAP_PATH_MIN = 256;

/** Whether the search leaves out a field with words (`attributesToSearchOn` naming fewer than all). */
function restrictsFields(ctx: RankingContext): boolean {
  const fids = ctx.fids;
  if (fids === null) return false;
  return ctx.reader.fieldPaths().some((path, fid) => !fids.includes(fid) && isSearchable(path, ctx.settings.searchableAttributes));
}

export interface RankingRule {
  key: string;
  /** Rules that need query terms are skipped for placeholder searches. */
  needsTerms: boolean;
  split(docids: Docids, active: number[], ctx: RankingContext): Iterable<Bucket>;
}

export function toBitmap(d: Docids): Bitmap {
  return Array.isArray(d) ? new RoaringBitmap32(d) : d;
}

export function toArray(d: Docids): number[] {
  if (Array.isArray(d)) return d;
  // a plain loop: Array.from walks a typed array through its iterator, several times slower
  const ids = d.toUint32Array();
  const out = new Array<number>(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = ids[i]!;
  return out;
}

export function sizeOf(d: Docids): number {
  return Array.isArray(d) ? d.length : d.size;
}

/** Order in which terms are dropped by the `words` rule. */
function removalOrder(ctx: RankingContext): number[] {
  const idx = ctx.terms.map((_, i) => i);
  if (ctx.matchingStrategy === 'frequency') {
    return idx.sort((a, b) => ctx.terms[b]!.all.size - ctx.terms[a]!.all.size || b - a);
  }
  return idx.reverse();
}

const words: RankingRule = {
  key: 'words',
  needsTerms: true,
  *split(docids, _active, ctx) {
    const n = ctx.terms.length;
    const removal = removalOrder(ctx);
    // never changed in place (and/andNot make new bitmaps): no copy of the candidates needed
    let remaining = toBitmap(docids);
    const minKept = ctx.matchingStrategy === 'all' ? n : 1;
    for (let kept = n; kept >= minKept && !remaining.isEmpty; kept--) {
      const dropped = new Set(removal.slice(0, n - kept));
      const active = ctx.terms.map((_, i) => i).filter((i) => !dropped.has(i));
      // kept >= 1: at least one `and`, so the bucket is a bitmap of its own
      let bucket = remaining;
      for (const i of active) bucket = RoaringBitmap32.and(bucket, ctx.terms[i]!.all);
      if (bucket.isEmpty) continue;
      remaining = RoaringBitmap32.andNot(remaining, bucket);
      yield { docids: bucket, active, detail: { key: 'words', rank: kept, maxRank: n, extra: { matchingWords: kept, maxMatchingWords: n } } };
    }
  },
};

const typo: RankingRule = {
  key: 'typo',
  needsTerms: true,
  *split(docids, active, ctx) {
    let buckets: Bitmap[] = [toBitmap(docids)];
    let max = 0;
    for (const i of active) {
      const term = ctx.terms[i]!;
      max += term.maxTypos;
      const next: Bitmap[] = [];
      buckets.forEach((b, t) => {
        if (b.isEmpty) return;
        term.levels.forEach((level, k) => {
          const part = RoaringBitmap32.and(b, level);
          if (part.isEmpty) return;
          const at = t + k;
          next[at] = next[at] ? RoaringBitmap32.or(next[at]!, part) : part;
        });
      });
      buckets = next;
    }
    for (let t = 0; t < buckets.length; t++) {
      const b = buckets[t];
      if (!b || b.isEmpty) continue;
      const maxTypo = Math.max(max, t);
      yield { docids: b, active, detail: { key: 'typo', rank: maxTypo + 1 - t, maxRank: maxTypo + 1, extra: { typoCount: t, maxTypoCount: maxTypo } } };
    }
  },
};

/** Cost ranges byCost counts through (wider ones are sorted). */
const MAX_COST_RANGE = 1 << 16;

/**
 * Group documents by a per-document cost, cheapest first, each group in docid order. Costs are
 * small integers (a rule's rank range): counted per cost, each group is gathered only when the
 * search gets to it (a Map of growing arrays and a sorted key list per call were a tenth of
 * what a `star wars` search allocated).
 */
function* byCost(docids: Docids, active: number[], cost: (docid: number) => number, detail: (cost: number) => RuleDetail): Iterable<Bucket> {
  // read in place: copied into a plain array, a large bucket's ids were allocated twice
  const ids: ArrayLike<number> = Array.isArray(docids) ? docids : docids.toUint32Array();
  // plain arrays: a typed array's buffer costs more than the few costs of a small bucket
  const costs = new Array<number>(ids.length);
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < ids.length; i++) {
    const c = cost(ids[i]!);
    costs[i] = c;
    if (c < min) min = c;
    if (c > max) max = c;
  }
  if (ids.length === 0) return;
  if (max - min > MAX_COST_RANGE) {
    // not a rank range (no rule gives one): grouped by sorting instead of counting
    const order = Array.from({ length: ids.length }, (_, i) => i).sort((a, b) => costs[a]! - costs[b]! || a - b);
    for (let at = 0; at < order.length; ) {
      const c = costs[order[at]!]!;
      const group: number[] = [];
      for (; at < order.length && costs[order[at]!] === c; at++) group.push(ids[order[at]!]!);
      yield { docids: group, active, detail: detail(c) };
    }
    return;
  }
  const counts = new Array<number>(max - min + 1).fill(0);
  for (let i = 0; i < costs.length; i++) counts[costs[i]! - min]!++;
  for (let k = 0; k < counts.length; k++) {
    const n = counts[k]!;
    if (n === 0) continue;
    const c = k + min;
    const group = new Array<number>(n);
    for (let i = 0, g = 0; g < n; i++) if (costs[i] === c) group[g++] = ids[i]!;
    yield { docids: group, active, detail: detail(c) };
  }
}

/**
 * Sum of per-term costs from posting lists: `costs(words, prefix)[c]` holds the documents where one
 * of a term's words, or its prefix record (RankingContext.termPrefixRecord), costs c under `rule`
 * (documents in none cost `maxCost`); computed once per term and search. Returns null when a term's words cannot be enumerated. Word
 * sequences (splits such as "be very" for "bevery", multi-word synonyms) have no postings of their
 * own: the documents where one occurs are read (`perDoc`), as a small bucket's all are, so that a
 * document costs the same in any bucket.
 */
function bitmapCosts(
  docids: Docids,
  active: number[],
  ctx: RankingContext,
  rule: string,
  maxCost: number,
  costs: (words: string[], prefix: string | null) => Bitmap[],
  perDoc: (docid: number) => number,
): Array<[number, Bitmap]> | null {
  if (sizeOf(docids) < BITMAP_PATH_MIN) return null;
  const perTerm: Bitmap[][] = [];
  let known = costsBySearch.get(ctx);
  if (!known) costsBySearch.set(ctx, (known = new Map()));
  for (const i of active) {
    const words = ctx.termWords(i);
    if (!words) return null;
    // A term costs the same in every bucket of the search: its words' records are united once.
    const key = `${rule} ${i}`;
    let c = known.get(key);
    if (!c) known.set(key, (c = costs(words, ctx.termPrefixRecord(i))));
    perTerm.push(c);
  }
  let all = toBitmap(docids);
  const sequences = sequenceDocs(ctx, active);
  const read = sequences ? RoaringBitmap32.and(all, sequences) : null;
  if (read && !read.isEmpty) all = RoaringBitmap32.andNot(all, read);
  let buckets: Bitmap[] = [all];
  for (const termCosts of perTerm) {
    const next: Bitmap[] = [];
    const put = (at: number, b: Bitmap) => {
      if (b.isEmpty) return;
      next[at] = next[at] ? RoaringBitmap32.or(next[at]!, b) : b;
    };
    buckets.forEach((b, t) => {
      if (!b || b.isEmpty) return;
      let rest = b;
      termCosts.forEach((cb, c) => {
        if (c >= maxCost || cb.isEmpty) return;
        const part = RoaringBitmap32.and(rest, cb);
        if (part.isEmpty) return;
        put(t + c, part);
        rest = RoaringBitmap32.andNot(rest, part);
      });
      put(t + maxCost, rest);
    });
    buckets = next;
  }
  if (read) {
    for (const d of read) {
      const c = perDoc(d);
      // (the combined bitmaps are new ones: adding to them changes no reader's postings)
      const b = buckets[c];
      if (b) b.add(d);
      else buckets[c] = new RoaringBitmap32([d]);
    }
  }
  const out: Array<[number, Bitmap]> = [];
  buckets.forEach((b, c) => {
    if (b && !b.isEmpty) out.push([c, b]);
  });
  return out;
}

/** The per-term costs of each rule that ranks from posting lists (see bitmapCosts), by search. */
const costsBySearch = new WeakMap<RankingContext, Map<string, Bitmap[]>>();

/** Pair lookups one proximity split may make before it reads the documents instead. */
const MAX_PAIR_LOOKUPS = 4096;

/**
 * What the pair postings say of consecutive active terms `a` and `b`: the documents where they
 * cost 0 to the proximity rule through their words (a word of `b` right after a word of `a` in a
 * field, or one word matching both), and those where they may, through a long word of `a` before
 * a long word of `b` (neither has pair postings: see kw-pairs in layout.ts), to be read.
 */
interface Adjacency {
  adjacent: Bitmap;
  /** Null: none. */
  unsure: Bitmap | null;
}

/**
 * The adjacency of consecutive active terms `a` and `b` from the pair postings; null when the
 * terms cannot be looked up that way (phrases, a prefix on `a`, too many words, an index without
 * the postings a long first word needs). Their word sequences (splits, multi-word synonyms) are
 * not looked up: see `adjacencyPlan`.
 */
function adjacentDocs(ctx: RankingContext, a: number, b: number): Adjacency | null {
  const first = ctx.terms[a]!;
  const second = ctx.terms[b]!;
  if (first.term.kind !== 'word' || second.term.kind !== 'word' || first.prefix !== null) return null;
  const prefix = second.prefix;
  const matchesSecond = (w: string) => second.words.has(w) || (prefix !== null && w.startsWith(prefix));
  // A word matching both terms (a concatenation such as "them" for "the m") costs 0 wherever it
  // is: its documents are in, whatever follows it, so it needs no pair postings.
  const both = [...first.words.keys()].filter(matchesSecond);
  const firsts = [...first.words.keys()].filter((w) => !matchesSecond(w));
  const shortFirsts = firsts.filter((w) => w.length <= PAIR_FIRST_MAX);
  const longFirsts = firsts.filter((w) => w.length > PAIR_FIRST_MAX);
  const parts: Bitmap[] = both.map((w) => ctx.reader.anyWord(w));
  let lookups = 0;
  if (shortFirsts.length > 0) {
    const short = prefix !== null && [...prefix].length <= PAIR_PREFIX_MAX;
    let seconds: string[];
    if (prefix === null || short) seconds = [...second.words.keys()].filter((w) => !(short && w.startsWith(prefix!)));
    else {
      const words = ctx.termWords(b);
      if (!words) return null;
      seconds = words;
    }
    lookups += shortFirsts.length * (seconds.length + (short ? 1 : 0));
    if (lookups > MAX_PAIR_LOOKUPS) return null;
    for (const w1 of shortFirsts) {
      if (short) parts.push(ctx.reader.pairWithPrefix(w1, prefix!));
      for (const w2 of seconds) parts.push(ctx.reader.pair(w1, w2));
    }
  }
  let unsure: Bitmap | null = null;
  if (longFirsts.length > 0) {
    if (!ctx.reader.hasShortSecondPairs()) return null;
    const seconds = secondsAfterLongWords(ctx, b);
    if (!seconds) return null;
    lookups += longFirsts.length * seconds.short.length;
    if (lookups > MAX_PAIR_LOOKUPS) return null;
    for (const w1 of longFirsts) for (const w2 of seconds.short) parts.push(ctx.reader.pair(w1, w2));
    const longDocs = [...seconds.long.map((w) => ctx.reader.anyWord(w)), ...seconds.heads.map((h) => ctx.reader.prefix(h))];
    // (the reader's postings are shared: combined into new bitmaps, never changed)
    if (longDocs.length > 0) unsure = RoaringBitmap32.and(RoaringBitmap32.orMany(longDocs), RoaringBitmap32.orMany(longFirsts.map((w) => ctx.reader.anyWord(w))));
  }
  return { adjacent: RoaringBitmap32.orMany(parts), unsure };
}

/**
 * Lookups of long second words (see secondsAfterLongWords) a pair may make before it reads the
 * documents instead. "the" takes 22 at 200k documents, "of" 34; "th" 108 and "fi" 176, whose
 * long words are in most documents anyway: reading their prefix postings, on a cold cache, cost
 * more than it saved (K in 512 MiB, as-typed p99 34 -> 41-53 ms with a bound of 256).
 */
const MAX_LONG_SECOND_LOOKUPS = 48;

/**
 * The words of term `b` after a long first word: the short ones, which have pair postings, and
 * the long ones, which do not, to be looked up by their documents: one by one, or by the prefix
 * postings of their first PREFIX_MAX characters (`heads`: a few lookups for all the words of a
 * prefix, "the" being followed by "their", "theatre" and hundreds more). The words of a prefix
 * are those of the typo dictionary, as for the proximity of a document read (MatchAnalyzer).
 * Null when the long ones need too many lookups.
 */
function secondsAfterLongWords(ctx: RankingContext, b: number): { short: string[]; long: string[]; heads: string[] } | null {
  const term = ctx.terms[b]!;
  const prefix = term.prefix;
  const short = new Set<string>();
  const long: string[] = [];
  const heads: string[] = [];
  const add = (w: string) => (w.length <= PAIR_SECOND_MAX ? short.add(w) : long.push(w));
  for (const w of term.words.keys()) if (prefix === null || !w.startsWith(prefix)) add(w);
  if (prefix !== null) {
    const dictionary = ctx.reader.dictionary();
    const [lo, hi] = dictionary.prefixRange(prefix);
    for (let i = lo; i < hi; ) {
      if (long.length + heads.length > MAX_LONG_SECOND_LOOKUPS) return null;
      const w = dictionary.words.word(i);
      const head = leadingCodePoints(w, PREFIX_MAX);
      if (w.length <= PAIR_SECOND_MAX || head === null) {
        add(w);
        i++;
        continue;
      }
      // Every word from here starting with `head` is long: one prefix posting list for them all.
      heads.push(head);
      i = Math.max(i + 1, dictionary.prefixRange(head)[1]);
    }
  }
  return long.length + heads.length > MAX_LONG_SECOND_LOOKUPS ? null : { short: [...short], long, heads };
}

/** The first `n` code points of `word`, or null when it has fewer. */
function leadingCodePoints(word: string, n: number): string | null {
  let end = 0;
  for (let k = 0; k < n; k++) {
    if (end >= word.length) return null;
    end += word.codePointAt(end)! > 0xffff ? 2 : 1;
  }
  return word.slice(0, end);
}

/**
 * Documents where a word sequence of an active term occurs (a split such as "la st" for "last",
 * a multi-word synonym): only there can a sequence make a pair adjacent. Null when no term has any.
 */
function sequenceDocs(ctx: RankingContext, active: number[]): Bitmap | null {
  const parts = active.map((i) => ctx.terms[i]!).filter((t) => t.sequences.length > 0).map((t) => t.sequenceDocids);
  return parts.length === 0 ? null : RoaringBitmap32.orMany(parts);
}

/** What the pair postings say of a bucket's proximity (see adjacencyBuckets). */
interface AdjacencyPlan {
  /** Documents adjacent through words on every pair: cost 0 without a read (none when some pair has no postings). */
  certain: Bitmap;
  /** The documents of the bucket possibly adjacent on each pair with postings. */
  maybe: Bitmap[];
  /** Pairs the postings say nothing of: any document may be adjacent on them. */
  unknown: number;
}

/**
 * The adjacency plan of the active terms' pairs over `all`; null when no pair has postings. A
 * document may be adjacent on a pair through its words (the pair postings), through long words
 * without pair postings (`Adjacency.unsure`), or through a word sequence (read where a sequence
 * occurs).
 */
function adjacencyPlan(ctx: RankingContext, active: number[], all: Bitmap): AdjacencyPlan | null {
  const pairs: Array<Adjacency | null> = [];
  for (let k = 0; k + 1 < active.length; k++) pairs.push(adjacentDocs(ctx, active[k]!, active[k + 1]!));
  const known = pairs.filter((p): p is Adjacency => p !== null);
  if (known.length === 0) return null;
  const sequences = sequenceDocs(ctx, active);
  let certain: Bitmap;
  if (known.length === pairs.length) {
    certain = RoaringBitmap32.and(all, known[0]!.adjacent);
    for (const p of known.slice(1)) certain.andInPlace(p.adjacent);
  } else certain = new RoaringBitmap32();
  const maybe = known.map((p) => {
    const others = [p.unsure, sequences].filter((b): b is Bitmap => b !== null);
    return RoaringBitmap32.and(all, others.length === 0 ? p.adjacent : RoaringBitmap32.orMany([p.adjacent, ...others]));
  });
  return { certain, maybe, unknown: pairs.length - known.length };
}

/**
 * `levels[m]`: the documents of `all` in at least m of the `sets` (`levels[0]`: all of them). Built
 * from the top down for each set, so that each level grows from the one below as it was before.
 */
function membershipLevels(all: Bitmap, sets: readonly Bitmap[]): Bitmap[] {
  const levels: Bitmap[] = [all];
  for (const set of sets) {
    levels.push(RoaringBitmap32.and(levels.at(-1)!, set));
    for (let m = levels.length - 2; m >= 1; m--) levels[m] = RoaringBitmap32.or(levels[m]!, RoaringBitmap32.and(levels[m - 1]!, set));
  }
  return levels;
}

/**
 * The proximity buckets of a plan, cheapest first. A document adjacent on m of the P pairs costs
 * at least P - m (every other pair costs 1 or more), so the documents of cost c are among those
 * possibly adjacent on P - c pairs or more: bucket c holds the documents known to cost c and
 * those of that level not read yet (`Unsure`), each read only when the search is about to return
 * it, and moved to the bucket of its cost when that is more. A search that fills its page from
 * the first buckets reads the documents it returns, not every document possibly adjacent: after
 * a longer first word, pair postings cover short second words only, so "day the" on the movies
 * read the 606 documents with "day" and a longer word starting with "the", and now reads 62.
 * What the search skipped of a bucket (below a ranking score threshold) is read when it comes
 * back for more, so that every later bucket is whole.
 */
function* adjacencyBuckets(plan: AdjacencyPlan, all: Bitmap, active: number[], ctx: RankingContext, detail: (cost: number) => RuleDetail): Iterable<Bucket> {
  const pairs = active.length - 1;
  const settled = plan.certain.clone();
  const groups = new Map<number, number[]>();
  const place = (d: number, cost: number) => {
    const group = groups.get(cost);
    if (group) group.push(d);
    else groups.set(cost, [d]);
  };
  // Only the top level for the cheapest bucket; every level once a search needs more.
  let levels: Bitmap[] | null = null;
  for (let c = 0; ; c++) {
    const level = pairs - c - plan.unknown;
    let wanted: Bitmap;
    if (c === 0) {
      wanted = plan.maybe[0]!;
      for (const m of plan.maybe.slice(1)) wanted = RoaringBitmap32.and(wanted, m);
    } else wanted = (levels ??= membershipLevels(all, plan.maybe))[Math.max(0, level)]!;
    // Documents of cost c not read yet: all of them have cost c or more (those possibly adjacent
    // on more pairs were read for an earlier bucket).
    const unread = RoaringBitmap32.andNot(wanted, settled);
    settled.orInPlace(unread);
    const bucket = c === 0 ? plan.certain.clone() : new RoaringBitmap32();
    const known = groups.get(c);
    groups.delete(c);
    if (known) bucket.addMany(known);
    bucket.orInPlace(unread);
    const admit = (d: number): boolean => {
      if (!unread.has(d)) return true;
      unread.remove(d);
      const cost = ctx.matches.proximity(d, active, false, false);
      if (cost === c) return true;
      place(d, cost);
      return false;
    };
    if (!bucket.isEmpty) yield { docids: bucket, active, detail: detail(c), unsure: unread.isEmpty ? undefined : { docs: unread, admit } };
    // Back for more: place what the search did not reach (cost c: it was in this bucket).
    for (const d of unread) {
      const cost = ctx.matches.proximity(d, active, false, false);
      if (cost !== c) place(d, cost);
    }
    if (level <= 0) {
      // Every document is read: the rest by cost.
      for (const k of [...groups.keys()].sort((a, b) => a - b)) yield { docids: groups.get(k)!.sort((a, b) => a - b), active, detail: detail(k) };
      return;
    }
  }
}

const proximity: RankingRule = {
  key: 'proximity',
  needsTerms: true,
  *split(docids, active, ctx) {
    const pairs = Math.max(0, active.length - 1);
    const maxRank = pairs * MAX_PAIR_COST + 1;
    const byAttribute = ctx.settings.proximityPrecision === 'byAttribute';
    if (pairs === 0) return yield { docids, active, detail: { key: 'proximity', rank: 1, maxRank: 1 } };
    const detail = (c: number): RuleDetail => ({ key: 'proximity', rank: maxRank - c, maxRank });
    const large = sizeOf(docids) >= BITMAP_PATH_MIN;
    if (!byAttribute && ctx.fids === null && large && ctx.reader.hasPairPostings()) {
      const all = toBitmap(docids);
      const plan = adjacencyPlan(ctx, active, all);
      if (plan) return yield* adjacencyBuckets(plan, all, active, ctx, detail);
    }
    const keep = !large;
    yield* byCost(docids, active, (d) => ctx.matches.proximity(d, active, byAttribute, keep), detail);
  },
};

const attributeRank: RankingRule = {
  key: 'attributeRank',
  needsTerms: true,
  split(docids, active, ctx) {
    const per = ctx.maxFidRank;
    const maxRank = active.length * (per - 1) + 1;
    if (per <= 1) return [{ docids, active, detail: { key: 'attributeRank', rank: 1, maxRank: 1 } }];
    const paths = ctx.reader.fieldPaths();
    const fids = ctx.fids ?? paths.map((_, fid) => fid);
    const rankOf = new Map(fids.map((fid) => [fieldTag(fid), ctx.fidRank(fid)]));
    const detail = (c: number): RuleDetail => ({ key: 'attributeRank', rank: maxRank - c, maxRank });
    const perDoc = (d: number): number => {
      const occ = ctx.matches.get(d).occurrences;
      let cost = 0;
      for (const i of active) {
        let best = per - 1;
        const o = occ[i]!;
        for (let k = 0; k < o.length; k += 2) best = Math.min(best, ctx.fidRank(occurrenceFid(o, k)));
        cost += best;
      }
      return cost;
    };
    const fast = bitmapCosts(docids, active, ctx, 'attributeRank', per - 1, (words, prefix) => {
      // each word's record once (see KeywordReader.wordFields)
      const byRank: Bitmap[][] = Array.from({ length: per }, () => []);
      const take = (parts: ReadonlyMap<number, Bitmap>) => {
        for (const [tag, bitmap] of parts) {
          const r = rankOf.get(tag);
          if (r !== undefined) byRank[r]!.push(bitmap);
        }
      };
      for (const w of words) take(ctx.reader.wordFields(w));
      if (prefix !== null) take(ctx.reader.prefixFields(prefix));
      return byRank.map((parts) => RoaringBitmap32.orMany(parts));
    }, perDoc);
    if (fast) return fast.map(([c, b]) => ({ docids: b, active, detail: detail(c) }));
    return byCost(docids, active, perDoc, detail);
  },
};


const wordPosition: RankingRule = {
  key: 'wordPosition',
  needsTerms: true,
  split(docids, active, ctx) {
    const maxRank = active.length * MAX_POSITION_BUCKET + 1;
    const detail = (c: number): RuleDetail => ({ key: 'wordPosition', rank: maxRank - c, maxRank });
    const perDoc = (d: number): number => {
      const occ = ctx.matches.get(d).occurrences;
      let cost = 0;
      for (const i of active) {
        let best = MAX_POSITION_BUCKET;
        const o = occ[i]!;
        for (let k = 0; k < o.length; k += 2) best = Math.min(best, positionBucket(occurrencePosition(o, k)));
        cost += best;
      }
      return cost;
    };
    // (a word record's buckets are of its first position in any field: not for a search restricted to some)
    const fast = restrictsFields(ctx) ? null : bitmapCosts(docids, active, ctx, 'wordPosition', MAX_POSITION_BUCKET, (words, prefix) => {
      // each word's record once (see KeywordReader.wordBuckets); the last bucket costs as much as none
      const byBucket: Bitmap[][] = Array.from({ length: MAX_POSITION_BUCKET }, () => []);
      const take = (parts: ReadonlyMap<number, Bitmap>) => {
        for (const [tag, bitmap] of parts) {
          const b = tag - BUCKET_TAG;
          if (b >= 0 && b < MAX_POSITION_BUCKET) byBucket[b]!.push(bitmap);
        }
      };
      for (const w of words) take(ctx.reader.wordBuckets(w));
      if (prefix !== null) take(ctx.reader.prefixBuckets(prefix));
      return byBucket.map((parts) => RoaringBitmap32.orMany(parts));
    }, perDoc);
    if (fast) return fast.map(([c, b]) => ({ docids: b, active, detail: detail(c) }));
    return byCost(docids, active, perDoc, detail);
  },
};

/** The query words of the active terms, in order (a loop: `flatMap` was 4% of a `star wars` search, one call per final bucket). */
function queryWords(ctx: RankingContext, active: number[]): string[] {
  const out: string[] = [];
  for (const i of active) {
    const t = ctx.terms[i]!.term;
    if (t.kind === 'word') out.push(t.word);
    else for (const w of t.words) if (w !== null) out.push(w);
  }
  return out;
}

/**
 * The exactness buckets of a large bucket from posting lists. Whole values come from their own
 * postings (kw-values). Where a field starts with the query, its k-th word first occurs in the
 * document at position k or before (exact position buckets, see START_WORDS): for a one-word
 * query those documents are the answer; for a longer one they are candidates, each read only
 * when the search is about to return it (Unsure, as the proximity rule's), and moved to the
 * bucket of its exact words when no field starts with the query: "the last" at 200k documents
 * has 765 candidates, and a page of hits needs a few dozen of them.
 */
function* exactnessBuckets(all: Bitmap, active: number[], ctx: RankingContext, wanted: string[], exactCost: (docid: number) => number, detail: (cost: number) => RuleDetail): Iterable<Bucket> {
  const whole = RoaringBitmap32.and(all, ctx.reader.value(wanted));
  let start: Bitmap = RoaringBitmap32.andNot(all, whole);
  wanted.slice(0, START_WORDS).forEach((w, k) => {
    const upToK = k === 0 ? ctx.reader.wordAtBucket(w, 0) : RoaringBitmap32.orMany(Array.from({ length: k + 1 }, (_, b) => ctx.reader.wordAtBucket(w, b)));
    start = RoaringBitmap32.and(start, upToK);
  });
  if (!whole.isEmpty) yield { docids: whole, active, detail: detail(0) };
  const notStart: number[] = [];
  if (!start.isEmpty) {
    if (wanted.length === 1) yield { docids: start, active, detail: detail(1) };
    else {
      const unread = start.clone();
      const admit = (d: number): boolean => {
        if (!unread.has(d)) return true;
        unread.remove(d);
        if (exactCost(d) === 1) return true;
        notStart.push(d);
        return false;
      };
      yield { docids: start, active, detail: detail(1), unsure: { docs: unread, admit } };
      // Back for more: what the search did not reach is read now, so that the later buckets are whole.
      for (const d of toArray(unread)) if (exactCost(d) !== 1) notStart.push(d);
    }
  }
  const rest = RoaringBitmap32.andNot(RoaringBitmap32.andNot(all, whole), start);
  if (notStart.length > 0) rest.addMany(notStart);
  // Then by the query words found as they are (no typo, not a prefix), in the fields searched.
  let buckets: Bitmap[] = [rest];
  for (const i of active) {
    const word = (ctx.terms[i]!.term as { word: string }).word;
    const exact = ctx.fids === null ? ctx.reader.anyWord(word) : RoaringBitmap32.orMany(ctx.fids.map((fid) => ctx.reader.wordInField(word, fid)));
    const next: Bitmap[] = [];
    buckets.forEach((b, t) => {
      if (!b || b.isEmpty) return;
      const hit = RoaringBitmap32.and(b, exact);
      const miss = RoaringBitmap32.andNot(b, hit);
      next[t] = next[t] ? RoaringBitmap32.or(next[t]!, hit) : hit;
      next[t + 1] = next[t + 1] ? RoaringBitmap32.or(next[t + 1]!, miss) : miss;
    });
    buckets = next;
  }
  for (let missing = 0; missing < buckets.length; missing++) {
    const b = buckets[missing];
    if (b && !b.isEmpty) yield { docids: b, active, detail: detail(2 + missing) };
  }
}

const exactness: RankingRule = {
  key: 'exactness',
  needsTerms: true,
  split(docids, active, ctx) {
    const wanted = queryWords(ctx, active);
    const n = active.length;
    const maxRank = n + 3;
    const wantedIds = ctx.matches.idsOf(wanted);
    const detail = (c: number): RuleDetail => ({
      key: 'exactness',
      rank: maxRank - c,
      maxRank,
      extra:
        c === 0
          ? { matchType: 'exactMatch' }
          : c === 1
            ? { matchType: 'matchesStart' }
            : { matchType: 'noExactMatch', matchingWords: n - (c - 2), maxMatchingWords: n },
    });
    // (entryExactness reads a document's entry as exactnessBuckets reads the posting lists)
    const exactCost = (d: number) => ctx.matches.exactness(d, wantedIds);
    if (sizeOf(docids) >= BITMAP_PATH_MIN && wanted.length > 0 && active.every((i) => ctx.terms[i]!.term.kind === 'word')) {
      return exactnessBuckets(toBitmap(docids), active, ctx, wanted, exactCost, detail);
    }
    return byCost(
      docids,
      active,
      (d) => {
        const c = exactCost(d);
        if (c >= 0) return c;
        const m = ctx.matches.get(d);
        let exact = 0;
        for (const i of active) {
          const o = m.occurrences[i]!;
          for (let k = 0; k < o.length; k += 2) {
            if (occurrenceIsExact(o, k)) {
              exact++;
              break;
            }
          }
        }
        return 2 + (n - exact);
      },
      detail,
    );
  },
};

export const BUILTIN_RULES: Record<string, RankingRule> = { words, typo, proximity, attributeRank, wordPosition, exactness };
