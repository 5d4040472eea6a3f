/**
 * Typo tolerance: a Damerau-Levenshtein automaton (a transposition costs one edit) run against a
 * sorted word dictionary.
 *
 * The dictionary is a sorted list of distinct words (packed: see packed-words.ts), which is an
 * implicit trie: the words that share a prefix are one contiguous range, and the children of a
 * node are found by binary search. The walk reads code units of the packed words by index and
 * makes strings only for the words it returns.
 * The automaton state is the edit-distance row of the query against the current prefix; a branch
 * is pruned as soon as no cell of the row is within budget, so a search visits only the prefixes
 * that can still lead to a match (a few hundred nodes for a typical word, whatever the dictionary
 * size).
 *
 * Meilisearch rules: a typo on the first letter counts as two, so with a one-typo budget the first
 * letter is fixed, and with a two-typo budget a different first letter is allowed only when it is
 * the only edit. The automaton therefore only walks the query's own first letter; the few words
 * one first-letter edit away are looked up directly (`firstLetterEdits`).
 */

import { BoundedCache } from '../bounded-cache.js';
import { PackedWords } from './packed-words.js';

export interface WordMatch {
  word: string;
  /** Typos as counted by the ranking rule (first-letter typo = 2). */
  typos: number;
}

export interface TypoRules {
  enabled: boolean;
  oneTypo: number;
  twoTypos: number;
  disableOnWords: ReadonlySet<string>;
  disableOnNumbers: boolean;
}

const DIGITS = /^\p{N}+$/u;

/** How many typos a query word may carry under the index's typo settings. */
export function allowedTypos(word: string, rules: TypoRules): 0 | 1 | 2 {
  if (!rules.enabled || rules.disableOnWords.has(word)) return 0;
  if (rules.disableOnNumbers && DIGITS.test(word)) return 0;
  const length = [...word].length;
  if (length >= rules.twoTypos) return 2;
  if (length >= rules.oneTypo) return 1;
  return 0;
}

/** Longest query word the automaton runs on; longer words only match exactly or by prefix. */
const MAX_AUTOMATON_LENGTH = 64;

/** Derivations a dictionary keeps (see WordDictionary.derivations), and the words they may hold in all. */
const MAX_KEPT_DERIVATIONS = 512;
const MAX_KEPT_DERIVED_WORDS = 512 * 200;

export class WordDictionary {
  readonly words: PackedWords;

  /** `words`: packed, or distinct strings in any order. */
  constructor(words: PackedWords | Iterable<string>) {
    this.words = words instanceof PackedWords ? words : PackedWords.from(words);
  }

  get size(): number {
    return this.words.size;
  }

  has(word: string): boolean {
    return this.words.indexOf(word) >= 0;
  }

  /** Dictionary index of `word`, -1 when absent. */
  indexOf(word: string): number {
    return this.words.indexOf(word);
  }

  /** [lo, hi) of the words starting with `prefix`. */
  prefixRange(prefix: string): [number, number] {
    const words = this.words;
    const lo = words.lowerBound(prefix);
    let hi = lo;
    // Galloping then binary search for the end of the range.
    let step = 1;
    while (hi + step <= words.size && words.startsWith(hi + step - 1, prefix)) {
      hi += step;
      step *= 2;
    }
    let a = hi;
    let b = Math.min(words.size, hi + step);
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (words.startsWith(mid, prefix)) a = mid + 1;
      else b = mid;
    }
    return [lo, a];
  }

  wordsWithPrefix(prefix: string, limit = Infinity): string[] {
    const [lo, hi] = this.prefixRange(prefix);
    return this.words.slice(lo, Math.min(hi, lo + limit));
  }

  /**
   * With a two-typo budget, the words whose first letter differs from the query's (two typos):
   * that change must be the only edit, so they are the query with its first letter replaced,
   * preceded by another letter, dropped, or swapped with the second (with `prefix`: the words
   * starting with one of these). Looked up directly: walking every other first letter's subtree
   * with the automaton cost more than the main walk.
   */
  private firstLetterEdits(query: string, prefix: boolean, found: (index: number) => void): void {
    const words = this.words;
    const rest = query.slice(1);
    const candidates: string[] = [];
    const first = query.charCodeAt(0);
    for (let i = 0; i < words.size; ) {
      if (words.length(i) === 0) {
        i++;
        continue;
      }
      const code = words.code(i, 0);
      if (code !== first) {
        const letter = String.fromCharCode(code);
        candidates.push(letter + rest, letter + query);
      }
      i = groupEnd(words, i, words.size, 0, code);
    }
    if (query.length > 1 && query.charCodeAt(1) !== first) candidates.push(rest, query[1]! + query[0]! + query.slice(2));
    for (const candidate of candidates) {
      if (!prefix) {
        const i = words.indexOf(candidate);
        if (i >= 0) found(i);
        continue;
      }
      const [lo, hi] = this.prefixRange(candidate);
      for (let k = lo; k < hi; k++) found(k);
    }
  }

  /**
   * Words within `maxTypos` of `query` (or, with `prefix`, starting with a string within
   * `maxTypos` of it), with their typo count, fewest typos first, at most `limit`.
   */
  fuzzy(query: string, maxTypos: 0 | 1 | 2, prefix: boolean, limit = 200): readonly WordMatch[] {
    if (maxTypos === 0 || query.length > MAX_AUTOMATON_LENGTH || query.length === 0) {
      if (prefix) return this.wordsWithPrefix(query, limit).map((word) => ({ word, typos: 0 }));
      return this.has(query) ? [{ word: query, typos: 0 }] : [];
    }
    // The words are fixed for the dictionary's life, so its derivations are too.
    const key = `${maxTypos}${prefix ? 'p' : 'w'}${limit} ${query}`;
    const known = this.derivations.get(key);
    if (known) return known;
    const found = this.derive(query, maxTypos, prefix, limit);
    this.derivations.set(key, found, found.length);
    return found;
  }

  /**
   * Derivations asked for recently, oldest first: as someone types, every keystroke resolves the
   * words typed before the last one again ("north s", "north sh", ...), and deriving a word of
   * 5 letters or more walks the dictionary for 100-300 µs.
   */
  private readonly derivations = new BoundedCache<readonly WordMatch[]>(MAX_KEPT_DERIVATIONS, MAX_KEPT_DERIVED_WORDS);

  private derive(query: string, maxTypos: 1 | 2, prefix: boolean, limit: number): readonly WordMatch[] {
    const walker = new AutomatonWalk(this.words, query, prefix);
    const first = query.charCodeAt(0);
    const [lo, hi] = this.prefixRange(query[0]!);
    if (lo < hi) walker.descend(lo, hi, first, maxTypos);
    if (maxTypos === 2) this.firstLetterEdits(query, prefix, (index) => walker.record(index, 2));
    // Dictionary order is word order: fewest typos, then the word.
    const found = [...walker.found].sort((a, b) => a[1] - b[1] || a[0] - b[0]);
    const kept = found.length > limit ? found.slice(0, limit) : found;
    return kept.map(([index, typos]) => ({ word: this.words.word(index), typos }));
  }
}

/** First index in [lo, hi) whose unit at `depth` is greater than `code` (all share the prefix). */
function groupEnd(words: PackedWords, lo: number, hi: number, depth: number, code: number): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (words.code(mid, depth) <= code) a = mid + 1;
    else b = mid;
  }
  return a;
}

class AutomatonWalk {
  /** Typos by dictionary index. */
  readonly found = new Map<number, number>();
  private readonly q: number[];
  private readonly m: number;
  /** rows[d] is the edit-distance row after d characters of the candidate. */
  private readonly rows: Int32Array[];
  private readonly chars: number[] = [];

  constructor(
    private readonly words: PackedWords,
    query: string,
    private readonly prefix: boolean,
  ) {
    this.q = Array.from({ length: query.length }, (_, i) => query.charCodeAt(i));
    this.m = query.length;
    this.rows = [Int32Array.from({ length: this.m + 1 }, (_, j) => j)];
  }

  /** Enter the node reached by `code` at depth = current chars length, words [lo, hi). */
  descend(lo: number, hi: number, code: number, budget: number, bestPrefix = Infinity): void {
    const depth = this.chars.length; // depth of the parent node
    const prev = this.rows[depth]!;
    const row = this.rows[depth + 1] ?? (this.rows[depth + 1] = new Int32Array(this.m + 1));
    const pp = depth > 0 ? this.rows[depth - 1]! : null;
    const prevChar = depth > 0 ? this.chars[depth - 1]! : -1;
    // Only the cells within `budget` of the diagonal can stay within budget (a cell is at least
    // its distance from the diagonal): the row is computed on that band, and the cells just
    // outside it, which the next row reads, are capped at budget + 1 (Ukkonen's cut-off).
    const r = depth + 1;
    const cap = budget + 1;
    const from = Math.max(1, r - budget);
    const to = Math.min(this.m, r + budget);
    row[0] = r;
    if (from > 1) row[from - 1] = cap;
    if (to < this.m) row[to + 1] = cap;
    let min = r;
    for (let j = from; j <= to; j++) {
      const qc = this.q[j - 1]!;
      let v = prev[j - 1]! + (qc === code ? 0 : 1);
      const del = prev[j]! + 1;
      if (del < v) v = del;
      const ins = row[j - 1]! + 1;
      if (ins < v) v = ins;
      if (pp && j > 1 && qc === prevChar && this.q[j - 2] === code && pp[j - 2]! + 1 < v) v = pp[j - 2]! + 1;
      if (v > cap) v = cap;
      row[j] = v;
      if (v < min) min = v;
    }
    const full = to === this.m ? row[this.m]! : cap;
    const best = this.prefix ? Math.min(bestPrefix, full) : Infinity;
    if (this.prefix && best <= budget && min >= best) {
      // A prefix already matches and no longer prefix can match with fewer typos: take the range.
      for (let k = lo; k < hi; k++) this.record(k, best);
      return;
    }
    if (min > budget) return;
    this.chars.push(code);
    const nodeDepth = depth + 1;
    const words = this.words;
    let i = lo;
    if (words.length(i) === nodeDepth) {
      const d = Math.min(best, full);
      if (d <= budget) this.record(i, d);
      i++;
    }
    while (i < hi) {
      const c = words.code(i, nodeDepth);
      const end = groupEnd(words, i, hi, nodeDepth, c);
      this.descend(i, end, c, budget, best);
      i = end;
    }
    this.chars.pop();
  }

  record(index: number, typos: number): void {
    const known = this.found.get(index);
    if (known === undefined || typos < known) this.found.set(index, typos);
  }
}
