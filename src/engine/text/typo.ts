/**
 * Typo tolerance: a Damerau-Levenshtein automaton (a transposition costs one edit) run against a
 * sorted word dictionary.
 *
 * The dictionary is a sorted array of distinct words, which is an implicit trie: the words that
 * share a prefix are one contiguous range, and the children of a node are found by binary search.
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

export class WordDictionary {
  constructor(readonly words: readonly string[]) {}

  get size(): number {
    return this.words.length;
  }

  has(word: string): boolean {
    const i = this.lowerBound(word);
    return i < this.words.length && this.words[i] === word;
  }

  /** [lo, hi) of the words starting with `prefix`. */
  prefixRange(prefix: string): [number, number] {
    const lo = this.lowerBound(prefix);
    let hi = lo;
    // Galloping then binary search for the end of the range.
    let step = 1;
    while (hi + step <= this.words.length && this.words[hi + step - 1]!.startsWith(prefix)) {
      hi += step;
      step *= 2;
    }
    let a = hi;
    let b = Math.min(this.words.length, hi + step);
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.words[mid]!.startsWith(prefix)) a = mid + 1;
      else b = mid;
    }
    return [lo, a];
  }

  wordsWithPrefix(prefix: string, limit = Infinity): string[] {
    const [lo, hi] = this.prefixRange(prefix);
    return this.words.slice(lo, Math.min(hi, lo + limit)) as string[];
  }

  /**
   * With a two-typo budget, the words whose first letter differs from the query's (two typos):
   * that change must be the only edit, so they are the query with its first letter replaced,
   * preceded by another letter, dropped, or swapped with the second (with `prefix`: the words
   * starting with one of these). Looked up directly: walking every other first letter's subtree
   * with the automaton cost more than the main walk.
   */
  private firstLetterEdits(query: string, prefix: boolean, found: (word: string) => void): void {
    const rest = query.slice(1);
    const candidates: string[] = [];
    const first = query.charCodeAt(0);
    for (let i = 0; i < this.words.length; ) {
      const word = this.words[i]!;
      if (word.length === 0) {
        i++;
        continue;
      }
      const code = word.charCodeAt(0);
      if (code !== first) candidates.push(word[0]! + rest, word[0]! + query);
      i = this.groupEnd(i, this.words.length, 0, code);
    }
    if (query.length > 1 && query.charCodeAt(1) !== first) candidates.push(rest, query[1]! + query[0]! + query.slice(2));
    for (const candidate of candidates) {
      if (!prefix) {
        if (this.has(candidate)) found(candidate);
        continue;
      }
      const [lo, hi] = this.prefixRange(candidate);
      for (let k = lo; k < hi; k++) found(this.words[k]!);
    }
  }

  private lowerBound(key: string): number {
    let a = 0;
    let b = this.words.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.words[mid]! < key) a = mid + 1;
      else b = mid;
    }
    return a;
  }

  /** First index in [lo, hi) whose char at `depth` is greater than `code` (all share the prefix). */
  private groupEnd(lo: number, hi: number, depth: number, code: number): number {
    let a = lo;
    let b = hi;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.words[mid]!.charCodeAt(depth) <= code) a = mid + 1;
      else b = mid;
    }
    return a;
  }

  /**
   * Words within `maxTypos` of `query` (or, with `prefix`, starting with a string within
   * `maxTypos` of it), with their typo count, fewest typos first, at most `limit`.
   */
  fuzzy(query: string, maxTypos: 0 | 1 | 2, prefix: boolean, limit = 200): WordMatch[] {
    if (maxTypos === 0 || query.length > MAX_AUTOMATON_LENGTH || query.length === 0) {
      if (prefix) return this.wordsWithPrefix(query, limit).map((word) => ({ word, typos: 0 }));
      return this.has(query) ? [{ word: query, typos: 0 }] : [];
    }
    const walker = new AutomatonWalk(this.words, query, prefix, (lo, hi, depth, code) => this.groupEnd(lo, hi, depth, code));
    const first = query.charCodeAt(0);
    const [lo, hi] = this.prefixRange(query[0]!);
    if (lo < hi) walker.descend(lo, hi, first, maxTypos);
    if (maxTypos === 2) this.firstLetterEdits(query, prefix, (word) => walker.record(word, 2));
    const out = [...walker.found].map(([word, typos]) => ({ word, typos }));
    out.sort((a, b) => a.typos - b.typos || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0));
    return out.length > limit ? out.slice(0, limit) : out;
  }
}

class AutomatonWalk {
  readonly found = new Map<string, number>();
  private readonly q: number[];
  private readonly m: number;
  /** rows[d] is the edit-distance row after d characters of the candidate. */
  private readonly rows: Int32Array[];
  private readonly chars: number[] = [];

  constructor(
    private readonly words: readonly string[],
    query: string,
    private readonly prefix: boolean,
    private readonly groupEnd: (lo: number, hi: number, depth: number, code: number) => number,
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
      for (let k = lo; k < hi; k++) this.record(this.words[k]!, best);
      return;
    }
    if (min > budget) return;
    this.chars.push(code);
    const nodeDepth = depth + 1;
    let i = lo;
    if (this.words[i]!.length === nodeDepth) {
      const d = Math.min(best, full);
      if (d <= budget) this.record(this.words[i]!, d);
      i++;
    }
    while (i < hi) {
      const c = this.words[i]!.charCodeAt(nodeDepth);
      const end = this.groupEnd(i, hi, nodeDepth, c);
      this.descend(i, end, c, budget, best);
      i = end;
    }
    this.chars.pop();
  }

  record(word: string, typos: number): void {
    const known = this.found.get(word);
    if (known === undefined || typos < known) this.found.set(word, typos);
  }
}
