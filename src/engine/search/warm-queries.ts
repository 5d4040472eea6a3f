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

/** Words sampled from the dictionary: each gives a handful of queries. */
const SAMPLED_WORDS = 24;

/** Query bodies for warming `index`; none when it has no searchable words. */
export function warmQueries(index: Index): Array<{ q: string; limit: number }> {
  const words = keywordReader(index.store)
    .dictionary()
    .words.filter((w) => /^\p{L}{3,}$/u.test(w));
  if (words.length === 0) return [];
  const sampled = Array.from({ length: Math.min(SAMPLED_WORDS, words.length) }, (_, i) => words[Math.floor((i * words.length) / Math.min(SAMPLED_WORDS, words.length))]!);
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
