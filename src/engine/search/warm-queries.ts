/**
 * Searches an engine runs on each index when it opens, their answers dropped, so that the first
 * searches users send after a start do not pay for what any search loads once (the index's word
 * dictionary and vocabulary, its settings) nor run V8's unoptimized code: on the movies, the
 * first search of a freshly opened engine took 1.4 s and the next ones 70-130 ms, where a warm
 * engine answers in 1-3 ms. The queries come from the index's own words (a word, a prefix, two
 * words, a typo), so they take the paths users' queries take: short prefixes with large buckets,
 * proximity, typo derivations, formatting of hits.
 */
import type { Index } from '../index/index.js';
import { keywordReader } from './keyword/reader.js';
import type { PackedWords } from '../text/packed-words.js';

/** Words sampled from the dictionary: each gives a handful of queries. */
const SAMPLED_WORDS = 24;

const LETTERS = /^\p{L}{3,}$/u;

/**
 * Whether dictionary word `i` is made of three letters or more. ASCII is decided on the packed
 * units, so that a dictionary of numbers (document ids) makes no string per word.
 */
function isLetterWord(words: PackedWords, i: number): boolean {
  const n = words.length(i);
  if (n < 3) return false;
  for (let d = 0; d < n; d++) {
    const c = words.code(i, d);
    if (c >= 0x80) return LETTERS.test(words.word(i));
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a))) return false;
  }
  return true;
}

/** Query bodies for warming `index`; none when it has no searchable words. */
export function warmQueries(index: Index): Array<{ q: string; limit: number }> {
  const dict = keywordReader(index.store).dictionary().words;
  const letters: number[] = [];
  for (let i = 0; i < dict.size; i++) if (isLetterWord(dict, i)) letters.push(i);
  if (letters.length === 0) return [];
  const count = Math.min(SAMPLED_WORDS, letters.length);
  const sampled = Array.from({ length: count }, (_, i) => dict.word(letters[Math.floor((i * letters.length) / count)]!));
  const out: string[] = [];
  sampled.forEach((word, i) => {
    const next = sampled[(i + 1) % sampled.length]!;
    out.push(word, word.slice(0, 3), `${word} ${next}`, `${word} ${next.slice(0, 2)}`);
    // one typo (two letters swapped) where the default typo tolerance allows one
    if (word.length >= 5) out.push(word.slice(0, 1) + word[2] + word[1] + word.slice(3));
    // a single letter: the largest prefix bucket, as the first keystroke of a search box
    if (i < 2) out.push(word.slice(0, 1));
  });
  return out.map((q) => ({ q, limit: 20 }));
}
