/**
 * Query terms -> what each matches: docids per typo count, the matched words (for per-document
 * ranking and highlighting), from typo derivations, the prefix of the last word, synonyms,
 * concatenation of neighbouring words and splitting of one word in two.
 */
import roaring from 'roaring';
import type { Bitmap } from '../../index/store.js';
import { allowedTypos, type TypoRules } from '../../text/typo.js';
import { normalizeWord } from '../../text/normalize.js';
import { PREFIX_MAX } from '../keyword/layout.js';
import type { KeywordReader } from '../keyword/reader.js';
import type { Analyzer } from '../keyword/analyzer.js';
import type { QueryTerm, QueryPhrase } from './parse.js';
import { synonymMap } from './synonyms.js';
import { phraseDocids } from './phrase.js';

const { RoaringBitmap32 } = roaring;

/** Typo derivations kept per word (Meilisearch bounds them too). */
const MAX_DERIVATIONS = 150;
/** A prefix matching more words than this is resolved by the prefix postings, not word by word. */
const MAX_PREFIX_WORDS = 5000;
/** A split word is verified document by document, up to this many candidates. */
const MAX_SPLIT_CANDIDATES = 1000;

export interface ResolvedTerm {
  term: QueryTerm;
  maxTypos: number;
  /** levels[t]: documents whose best match of this term has t typos (disjoint). */
  levels: Bitmap[];
  all: Bitmap;
  /** Matched words with their typo count. */
  words: Map<string, number>;
  /** When set, every word starting with it matches with no typo (prefix of the last word). */
  prefix: string | null;
  /** Multi-word alternatives (phrases, synonyms, splits) matched as sequences. */
  sequences: string[][];
  /** The documents where one of `sequences` occurs (the proximity rule reads only these for them). */
  sequenceDocids: Bitmap;
}

export interface ResolveContext {
  reader: KeywordReader;
  analyzer: Analyzer;
  /** Field ids to search in, or null for every searchable field. */
  fids: number[] | null;
}

export function typoRules(analyzer: Analyzer): TypoRules {
  const t = analyzer.settings.typoTolerance;
  return {
    enabled: t.enabled,
    oneTypo: t.minWordSizeForTypos.oneTypo,
    twoTypos: t.minWordSizeForTypos.twoTypos,
    disableOnWords: new Set(t.disableOnWords.map((w) => normalizeWord(w))),
    disableOnNumbers: t.disableOnNumbers,
  };
}

function restrict(ctx: ResolveContext, word: string, anyField: boolean): Bitmap {
  if (!ctx.fids) return anyField ? ctx.reader.anyWord(word) : ctx.reader.word(word);
  const parts = ctx.fids.map((fid) => ctx.reader.wordInField(word, fid));
  return RoaringBitmap32.orMany(parts);
}

function prefixDocids(ctx: ResolveContext, prefix: string): Bitmap {
  const dict = ctx.reader.dictionary();
  if (!ctx.fids && [...prefix].length <= PREFIX_MAX) return ctx.reader.prefix(prefix);
  const words = dict.wordsWithPrefix(prefix, MAX_PREFIX_WORDS);
  return RoaringBitmap32.orMany(words.map((w) => restrict(ctx, w, true)));
}

export function resolveTerms(terms: readonly QueryTerm[], ctx: ResolveContext, prefixSearch: boolean): ResolvedTerm[] {
  const rules = typoRules(ctx.analyzer);
  const dict = ctx.reader.dictionary();
  const synonyms = synonymMap(ctx.analyzer);
  const resolved: ResolvedTerm[] = terms.map((term) => {
    const r: ResolvedTerm = { term, maxTypos: 0, levels: [], all: new RoaringBitmap32(), words: new Map(), prefix: null, sequences: [], sequenceDocids: new RoaringBitmap32() };
    const add = (typos: number, docids: Bitmap) => {
      while (r.levels.length <= typos) r.levels.push(new RoaringBitmap32());
      r.levels[typos]!.orInPlace(docids);
    };
    if (term.kind === 'phrase') {
      const docids = phraseDocids(ctx, term);
      add(0, docids);
      r.sequenceDocids.orInPlace(docids);
      r.sequences.push(term.words.filter((w): w is string => w !== null));
      for (const w of term.words) if (w) r.words.set(w, 0);
      return r;
    }
    const word = term.word;
    const isPrefix = term.prefix && prefixSearch;
    r.maxTypos = allowedTypos(word, rules);
    // Exact form, in any field (including exact-only attributes).
    add(0, restrict(ctx, word, true));
    r.words.set(word, 0);
    if (isPrefix) {
      r.prefix = word;
      add(0, prefixDocids(ctx, word));
    }
    if (r.maxTypos > 0) {
      const matches = dict.fuzzy(word, r.maxTypos as 1 | 2, isPrefix, MAX_DERIVATIONS);
      for (const m of matches) {
        if (m.typos === 0 && isPrefix) continue; // covered by the prefix postings
        if (r.words.has(m.word) && r.words.get(m.word)! <= m.typos) continue;
        r.words.set(m.word, m.typos);
        add(m.typos, restrict(ctx, m.word, false));
      }
    }
    for (const alternative of synonyms.get(word) ?? []) addAlternative(ctx, r, alternative, add);
    const split = bestSplit(ctx, word);
    // Verifying adjacency reads each candidate document: skip splits into two common words.
    if (split && ctx.reader.anyWord(split[0]!).andCardinality(ctx.reader.anyWord(split[1]!)) <= MAX_SPLIT_CANDIDATES) {
      const docids = phraseDocids(ctx, { kind: 'phrase', words: split, offsets: [0, 1], index: term.index });
      add(1, docids);
      r.sequenceDocids.orInPlace(docids);
      r.sequences.push(split);
      r.maxTypos = Math.max(r.maxTypos, 1);
    }
    return r;
  });
  // Neighbouring words: concatenation ("new york" finds "newyork") and multi-word synonyms.
  for (let n = 2; n <= 3; n++) {
    for (let i = 0; i + n <= resolved.length; i++) {
      const group = resolved.slice(i, i + n);
      if (!group.every((g) => g.term.kind === 'word')) continue;
      const words = group.map((g) => (g.term as { word: string }).word);
      const concat = words.join('');
      const extra: Bitmap[] = [];
      if (dict.has(concat) || ctx.reader.hasExactWords()) {
        const docids = restrict(ctx, concat, true);
        if (!docids.isEmpty) {
          extra.push(docids);
          for (const g of group) g.words.set(concat, 0);
        }
      }
      for (const alternative of synonyms.get(words.join(' ')) ?? []) {
        const holder: ResolvedTerm = { ...group[0]!, levels: [], words: new Map(), sequences: [], sequenceDocids: new RoaringBitmap32() };
        addAlternative(ctx, holder, alternative, (_t, d) => extra.push(d));
        for (const g of group) {
          for (const [w, t] of holder.words) g.words.set(w, t);
          g.sequences.push(...holder.sequences);
          g.sequenceDocids.orInPlace(holder.sequenceDocids);
        }
      }
      if (extra.length === 0) continue;
      const docids = RoaringBitmap32.orMany(extra);
      for (const g of group) {
        while (g.levels.length < 1) g.levels.push(new RoaringBitmap32());
        g.levels[0]!.orInPlace(docids);
      }
    }
  }
  for (const r of resolved) finish(r);
  return resolved;
}

function addAlternative(ctx: ResolveContext, r: ResolvedTerm, alternative: string[], add: (typos: number, docids: Bitmap) => void): void {
  if (alternative.length === 1) {
    r.words.set(alternative[0]!, 0);
    add(0, restrict(ctx, alternative[0]!, true));
    return;
  }
  const phrase: QueryPhrase = { kind: 'phrase', words: alternative, offsets: alternative.map((_, i) => i), index: r.term.index };
  const docids = phraseDocids(ctx, phrase);
  add(0, docids);
  r.sequenceDocids.orInPlace(docids);
  r.sequences.push(alternative);
  for (const w of alternative) if (!r.words.has(w)) r.words.set(w, 0);
}

/** Split a word in two known words ("newyork" -> new york), the split whose rarer half is most frequent. */
function bestSplit(ctx: ResolveContext, word: string): string[] | null {
  const chars = [...word];
  if (chars.length < 4 || chars.length > 32 || /^\p{N}+$/u.test(word)) return null;
  const dict = ctx.reader.dictionary();
  let best: string[] | null = null;
  let bestScore = 0;
  for (let i = 2; i <= chars.length - 2; i++) {
    const a = chars.slice(0, i).join('');
    const b = chars.slice(i).join('');
    if (!dict.has(a) || !dict.has(b)) continue;
    const score = Math.min(ctx.reader.word(a).size, ctx.reader.word(b).size);
    if (score > bestScore) {
      bestScore = score;
      best = [a, b];
    }
  }
  return best;
}

/** Make levels disjoint (a document counts at its best typo level) and compute the union. */
function finish(r: ResolvedTerm): void {
  if (r.levels.length === 0) r.levels.push(new RoaringBitmap32());
  const seen = new RoaringBitmap32();
  for (let t = 0; t < r.levels.length; t++) {
    const level = r.levels[t]!;
    if (t > 0) level.andNotInPlace(seen);
    seen.orInPlace(level);
  }
  r.all = seen;
}

/** Documents containing a negated word (exact) or phrase. */
export function negatedDocids(terms: readonly QueryTerm[], ctx: ResolveContext): Bitmap {
  const parts = terms.map((t) => (t.kind === 'phrase' ? phraseDocids(ctx, t) : restrict(ctx, t.word, true)));
  return RoaringBitmap32.orMany(parts);
}
