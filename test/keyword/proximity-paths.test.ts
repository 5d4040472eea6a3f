/**
 * The proximity rule ranks a large bucket's adjacent documents from the pair postings and reads
 * the others; restricted to some attributes it reads them all. Both must rank alike: searching
 * on every searchable attribute by name is the same search as searching on all of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import { analyzerFor } from '../../src/engine/search/keyword/analyzer.js';
import { bumpKeywordGeneration, keywordDbs, PAIR_POSTINGS_META, PAIR_POSTINGS_VERSION } from '../../src/engine/search/keyword/layout.js';
import { keywordReader } from '../../src/engine/search/keyword/reader.js';
import { parseQuery } from '../../src/engine/search/query/parse.js';
import { resolveTerms } from '../../src/engine/search/query/resolve.js';
import { movies as moviesData } from '../data.js';
import { openTestIndex, type TestIndex } from './helpers.js';

const FIELDS = ['title', 'cast', 'genres', 'extract'];
let t: TestIndex;

beforeAll(() => {
  t = openTestIndex({ searchableAttributes: FIELDS });
  t.add(moviesData().slice(-4000));
}, 120_000);
afterAll(() => t.close());

/**
 * A frequent short word, then each word of the films' titles in turn: "the x" as typed, whole
 * and as prefixes; each title word followed by a short one ("x the", "x of", "x th", "the x
 * the": the short second word's pair postings, the long words starting with "th" read); and
 * "the x y" with a frequent long word and the first letter of the next, where the pair after
 * the long word has no postings.
 */
function queries(): string[] {
  const out = new Set<string>();
  moviesData().slice(-4000, -3850).forEach((movie, i) => {
    for (const word of String(movie.title).toLowerCase().split(/[^a-z]+/).filter((w) => w.length >= 4)) {
      for (const first of ['the', 'of', 'a']) {
        out.add(`${first} ${word}`);
        out.add(`${first} ${word.slice(0, -1)}`);
      }
      if (i % 2 === 1) continue;
      for (const second of ['the', 'of', 'th']) out.add(`${word} ${second}`);
      out.add(`the ${word} the`);
    }
  });
  for (const word of ['film', 'directed', 'starring', 'story', 'american', 'based', 'released', 'young'])
    for (const letter of ['s', 'm', 'b', 'w', 'f']) out.add(`the ${word} ${letter}`);
  return [...out];
}

const ranked = (q: string, on?: string[]) =>
  search(t.index, { q, limit: 30, showRankingScoreDetails: true, attributesToRetrieve: ['id'], ...(on ? { attributesToSearchOn: on } : {}) }).hits.map((h) => [
    h.id,
    h._rankingScoreDetails,
  ]);

describe('proximity from the pair postings and from the documents', () => {
  it('ranks alike, words split in two ("la st" for "last") and pairs after a long word included', () => {
    const reader = keywordReader(t.index.store);
    const analyzer = analyzerFor(t.index.settings);
    let withSplits = 0;
    for (const q of queries()) {
      const terms = resolveTerms(parseQuery(q, analyzer, null).terms, { reader, analyzer, fids: null }, true);
      if (terms.some((term) => term.sequences.length > 0)) withSplits++;
      expect(ranked(q), q).toEqual(ranked(q, FIELDS));
    }
    // the comparison covers the terms with word sequences, where the pair postings cannot say all
    expect(withSplits).toBeGreaterThan(50);
  });

  it('ranks alike on an index written before the short second words had pair postings', () => {
    const store = t.index.store;
    const meta = keywordDbs(store).meta;
    const longThenShort = queries().filter((q) => /^[a-z]{4,} [a-z]{1,3}$/.test(q)).slice(0, 150);
    const before = longThenShort.map((q) => ranked(q));
    store.write(() => meta.putSync(PAIR_POSTINGS_META, true));
    bumpKeywordGeneration(store);
    try {
      expect(keywordReader(store).hasShortSecondPairs()).toBe(false);
      expect(longThenShort.map((q) => ranked(q))).toEqual(before);
    } finally {
      store.write(() => meta.putSync(PAIR_POSTINGS_META, PAIR_POSTINGS_VERSION));
      bumpKeywordGeneration(store);
    }
  });

  it('puts a document adjacent through a long word of a prefix in the same bucket as those adjacent through a short one', () => {
    // "king the": "the" after "king" has pair postings, "theatre" after it does not (both long);
    // the film with "king theatre" must share the adjacent bucket with those with "king the",
    // and its title match put it first.
    const small = openTestIndex({ searchableAttributes: ['title', 'extract'], rankingRules: ['words', 'proximity', 'attribute', 'exactness'] });
    try {
      const docs = Array.from({ length: 300 }, (_, i) => ({ id: i, title: `film ${i}`, extract: i % 3 === 0 ? `the king the great, number ${i}` : `a king came to the town, number ${i}` }));
      docs.push({ id: 300, title: 'king theatre royal', extract: 'a play' });
      small.add(docs);
      expect(keywordReader(small.index.store).hasShortSecondPairs()).toBe(true);
      const hits = (on?: string[]) =>
        search(small.index, { q: 'king the', limit: 200, showRankingScoreDetails: true, attributesToRetrieve: ['id'], ...(on ? { attributesToSearchOn: on } : {}) }).hits;
      const first = hits()[0]!;
      expect(first.id).toBe(300);
      expect(first._rankingScoreDetails?.proximity).toMatchObject({ score: 1 });
      expect(hits().filter((h) => h._rankingScoreDetails?.proximity?.score === 1)).toHaveLength(101);
      expect(hits()).toEqual(hits(['title', 'extract']));
    } finally {
      void small.close();
    }
  });

  it('puts a document adjacent only through a split in the same bucket as those adjacent through words', () => {
    // 300 films with "the last" in their extract, one with "the la st" in its title: all adjacent
    // (a split costs a typo, so the typo rule is left out to have them in one bucket), and the
    // title match must come first, as when every document is read.
    const small = openTestIndex({ searchableAttributes: ['title', 'extract'], rankingRules: ['words', 'proximity', 'attribute', 'exactness'] });
    try {
      const docs = Array.from({ length: 300 }, (_, i) => ({ id: i, title: `film ${i}`, extract: `not the last one, number ${i}` }));
      docs.push({ id: 300, title: 'the la st picture', extract: 'la and st apart' });
      small.add(docs);
      const hits = (on?: string[]) =>
        search(small.index, { q: 'the last', limit: 5, showRankingScoreDetails: true, attributesToRetrieve: ['id'], ...(on ? { attributesToSearchOn: on } : {}) }).hits;
      const first = hits()[0]!;
      expect(first.id).toBe(300);
      expect(first._rankingScoreDetails?.proximity).toMatchObject({ score: 1 });
      expect(hits()).toEqual(hits(['title', 'extract']));
    } finally {
      void small.close();
    }
  });
});

