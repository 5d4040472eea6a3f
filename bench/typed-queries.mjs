/**
 * The keyword benches' query sets (not a section itself: its name has no `.bench.`): 300 queries
 * from movie titles, 1-3 words with one typo in 2 of 3, and the as-typed set: every keystroke of
 * the first 40 queries of two words or more ("t", "th", "the", "the b", ...), 441 searches.
 */

/** Deterministic queries from titles: 1-3 words, one typo (swap, drop or change a letter) in 2 of 3. */
export function makeQueries(docs, count = 300) {
  let seed = 42;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  const out = [];
  while (out.length < count) {
    const words = String(docs[Math.floor(rnd() * docs.length)].title).toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 2);
    if (words.length === 0) continue;
    const k = 1 + Math.floor(rnd() * Math.min(3, words.length));
    const picked = words.slice(0, k);
    const i = picked.findIndex((w) => w.length >= 5);
    if (i >= 0 && rnd() < 0.67) {
      const w = picked[i];
      const p = 1 + Math.floor(rnd() * (w.length - 2));
      const kind = Math.floor(rnd() * 3);
      picked[i] = kind === 0 ? w.slice(0, p) + w[p + 1] + w[p] + w.slice(p + 2) : kind === 1 ? w.slice(0, p) + w.slice(p + 1) : w.slice(0, p) + 'x' + w.slice(p + 1);
    }
    out.push(picked.join(' '));
  }
  return out;
}

/** Every keystroke of the first `typed` queries of two words or more, as sent while typing. */
export function typedQueries(queries, typed = 40) {
  const out = [];
  for (const q of queries.filter((q) => q.includes(' ')).slice(0, typed)) {
    for (let n = 1; n <= q.length; n++) if (q[n - 1] !== ' ') out.push(q.slice(0, n));
  }
  return out;
}
