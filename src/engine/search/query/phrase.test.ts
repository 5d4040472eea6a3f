import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestIndex, type TestIndex } from '../../../../test/keyword/helpers.js';
import { movies as moviesData } from '../../../../test/data.js';
import { search } from '../index.js';
import { analyzerFor } from '../keyword/analyzer.js';
import { hasPairKey, PAIR_FIRST_MAX } from '../keyword/layout.js';
import { keywordReader } from '../keyword/reader.js';
import { phraseDocids } from './phrase.js';
import type { QueryPhrase } from './parse.js';

let t: TestIndex;
const TEXT_FIELDS = ['title', 'cast', 'genres', 'extract'];

beforeAll(() => {
  t = openTestIndex({ searchableAttributes: TEXT_FIELDS });
  t.add(moviesData().slice(-1500));
}, 120_000);
afterAll(() => t.close());

/** Adjacent word pairs of the films' extracts that have pair postings (a short first or second word), as a user might quote them. */
function adjacentPairs(limit: number): string[][] {
  const pairs = new Map<string, string[]>();
  for (const doc of moviesData().slice(-1500)) {
    const words = String(doc.extract ?? '').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
    for (let i = 0; i + 1 < words.length && pairs.size < limit; i++) if (hasPairKey(words[i]!, words[i + 1]!)) pairs.set(`${words[i]} ${words[i + 1]}`, [words[i]!, words[i + 1]!]);
  }
  return [...pairs.values()];
}

/** Three words of the films' extracts with a space between each (punctuation moves positions further apart). */
function adjacentTriples(limit: number): string[][] {
  const triples = new Map<string, string[]>();
  for (const doc of moviesData().slice(-1500)) {
    for (const m of String(doc.extract ?? '').toLowerCase().matchAll(/(?<!\S)([a-z]+) ([a-z]+) ([a-z]+)(?!\S)/g)) {
      if (triples.size < limit) triples.set(m[0], [m[1]!, m[2]!, m[3]!]);
    }
  }
  return [...triples.values()];
}

const phrase = (words: string[], offsets = words.map((_, i) => i)): QueryPhrase => ({ kind: 'phrase', words, offsets, index: 0 });

describe('phrase matching', () => {
  it('finds two adjacent words from the pair postings exactly where the stored entries have them', () => {
    const reader = keywordReader(t.index.store);
    expect(reader.hasPairPostings()).toBe(true);
    const analyzer = analyzerFor(t.index.settings);
    // every field named: the pair postings cannot say, each candidate's entry is read
    const everyField = reader.fieldPaths().map((_, fid) => fid);
    let found = 0;
    const pairs = adjacentPairs(600);
    // "film by", "released in": the short second words' postings after a long first word too
    expect(pairs.filter(([first]) => first!.length > PAIR_FIRST_MAX).length).toBeGreaterThan(200);
    for (const words of pairs) {
      const fromPairs = phraseDocids({ reader, analyzer, fids: null }, phrase(words));
      const verified = phraseDocids({ reader, analyzer, fids: everyField }, phrase(words));
      expect(fromPairs.toArray(), words.join(' ')).toEqual(verified.toArray());
      found += verified.size;
    }
    expect(found).toBeGreaterThan(600);
  });

  it('hands out a bitmap of its own, not the cached postings', () => {
    const reader = keywordReader(t.index.store);
    const ctx = { reader, analyzer: analyzerFor(t.index.settings), fids: null };
    const [first, second] = adjacentPairs(1)[0]!;
    const before = phraseDocids(ctx, phrase([first!, second!])).size;
    phraseDocids(ctx, phrase([first!, second!])).clear();
    expect(phraseDocids(ctx, phrase([first!, second!])).size).toBe(before);
  });

  it('lines the words up at their offsets, gaps included', () => {
    const reader = keywordReader(t.index.store);
    const ctx = { reader, analyzer: analyzerFor(t.index.settings), fids: null };
    let checked = 0;
    let differ = 0;
    for (const [a, b, c] of adjacentTriples(150)) {
      const whole = phraseDocids(ctx, phrase([a!, b!, c!]));
      // a removed word (a stop word) keeps its place: "a _ c"
      const gap = phraseDocids(ctx, { kind: 'phrase', words: [a!, null, c!], offsets: [0, 1, 2], index: 0 });
      const wider = phraseDocids(ctx, { kind: 'phrase', words: [a!, null, null, c!], offsets: [0, 1, 2, 3], index: 0 });
      const reversed = phraseDocids(ctx, phrase([c!, b!, a!]));
      expect(whole.size, `${a} ${b} ${c}`).toBeGreaterThan(0);
      expect(whole.isSubset(gap), `${a} ${b} ${c}`).toBe(true);
      if (!gap.isEqual(wider)) differ++;
      if (!whole.isEqual(reversed)) differ++;
      checked++;
    }
    expect(checked).toBe(150);
    expect(differ).toBeGreaterThan(150);
  });

  it('finds the two words of a word typed joined ("theend"), as the quoted phrase does', () => {
    const ids = (q: string) => new Set(search(t.index, { q, limit: 1000, attributesToRetrieve: ['id'] }).hits.map((h) => h.id));
    const quoted = ids('"the end"');
    const joined = ids('theend');
    expect(quoted.size).toBeGreaterThan(0);
    for (const id of quoted) expect(joined.has(id)).toBe(true);
  });
});
