/**
 * The proximity rule's cheapest bucket comes from pair postings (kw-pairs) when the first word of a
 * pair is short: the searches typed a keystroke at a time ("t", "th", "the", "the b", ...) must rank
 * exactly as the full evaluation that reads every document of the bucket, after additions,
 * updates and deletions too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import { bumpKeywordGeneration, keywordDbs, PAIR_POSTINGS_META } from '../../src/engine/search/keyword/layout.js';
import { keywordReader } from '../../src/engine/search/keyword/reader.js';
import { movies } from '../data.js';
import { openTestIndex, type TestIndex } from './helpers.js';

const FIELDS = ['title', 'cast', 'genres', 'extract'];

/** Every keystroke of titles whose first word is short (where pair postings apply), and a few others. */
function typedQueries(): string[] {
  const titles = movies()
    .map((m) => String(m.title).toLowerCase())
    .filter((t) => /^[a-z]{1,3} [a-z]/.test(t))
    .slice(0, 25);
  titles.push('through the wrong door', 'north by northwest', 'the ofice', 'them o');
  const out = new Set<string>();
  for (const t of titles) for (let n = 1; n <= Math.min(t.length, 14); n++) if (t[n - 1] !== ' ') out.add(t.slice(0, n));
  return [...out];
}

/**
 * Keystrokes of the second word after a longer first word ("film t", "film th", ...): pair
 * postings cover a longer first word before short second words only, so the cheapest proximity
 * bucket of a frequent first word holds documents not read yet, each read as the search is about
 * to return it (Unsure in ranking/rules.ts).
 */
function longFirstQueries(): string[] {
  const pairs = ['film the', 'film directed', 'american comedy', 'comedy film', 'drama film', 'silent drama', 'starring the', 'directed by', 'released through', 'written and', 'based on', 'western film'];
  const out: string[] = [];
  for (const pair of pairs) {
    const [first, second] = pair.split(' ');
    for (let n = 1; n <= second!.length; n++) out.push(`${first} ${second!.slice(0, n)}`);
  }
  return out;
}

function ranking(t: TestIndex, queries: string[], params: { limit?: number; rankingScoreThreshold?: number; distinct?: string } = {}): Array<[string, unknown]> {
  return queries.map((q) => {
    const r = search(t.index, { q, limit: 20, ...params, showRankingScoreDetails: true });
    return [q, r.hits.map((h) => [h.id, h._rankingScoreDetails])];
  });
}

/** The same searches with the pair postings ignored: every proximity bucket read document by document. */
function withoutPairs<T>(t: TestIndex, run: () => T): T {
  const store = t.index.store;
  const meta = keywordDbs(store).meta;
  const value: unknown = meta.get(PAIR_POSTINGS_META);
  store.write(() => meta.removeSync(PAIR_POSTINGS_META));
  bumpKeywordGeneration(store);
  try {
    expect(keywordReader(store).hasPairPostings()).toBe(false);
    return run();
  } finally {
    store.write(() => meta.putSync(PAIR_POSTINGS_META, value));
    bumpKeywordGeneration(store);
  }
}

/** Counts the stored entries the searches read from now on, until `restore`. */
function countReads(t: TestIndex): { count: number; restore(): void } {
  const reader = keywordReader(t.index.store);
  const rawDoc = reader.rawDoc;
  const counter = {
    count: 0,
    restore: () => {
      reader.rawDoc = rawDoc;
    },
  };
  reader.rawDoc = (docid) => {
    counter.count++;
    return rawDoc.call(reader, docid);
  };
  return counter;
}

describe('pair postings for as-you-type proximity', () => {
  let t: TestIndex;
  const docs = movies().slice(0, 3000);
  const queries = typedQueries();

  beforeAll(async () => {
    // filterable for the searches with `distinct`; filters play no part in ranking
    t = openTestIndex({ searchableAttributes: FIELDS, filterableAttributes: ['year', 'genres'] });
    t.add(docs.slice(0, 1500));
    await t.addPrepared(docs.slice(1500));
  }, 120_000);
  afterAll(() => t.close());

  it('are kept from the first batch of an index, for short first words and the prefixes of the word after', () => {
    const reader = keywordReader(t.index.store);
    expect(reader.hasPairPostings()).toBe(true);
    const withThe = docs.filter((m) => /\bthe b/i.test(`${m.title}`)).length;
    expect(withThe).toBeGreaterThan(0);
    expect(reader.pairWithPrefix('the', 'b').size).toBeGreaterThanOrEqual(withThe);
    expect(reader.pairWithPrefix('the', 'be').isSubset(reader.pairWithPrefix('the', 'b'))).toBe(true);
  });

  it('rank every keystroke exactly as reading the documents does', () => {
    expect(queries.length).toBeGreaterThan(100);
    const fast = ranking(t, queries);
    expect(fast.filter(([, hits]) => (hits as unknown[]).length > 0).length).toBeGreaterThan(queries.length / 2);
    expect(withoutPairs(t, () => ranking(t, queries))).toEqual(fast);
  });

  it('rank keystrokes after a longer first word exactly as reading the documents does, reading fewer', () => {
    const long = longFirstQueries();
    expect(long.length).toBeGreaterThan(30);
    const reads = countReads(t);
    const fast = ranking(t, long);
    const fastReads = reads.count;
    expect(fast.filter(([, hits]) => (hits as unknown[]).length === 20).length).toBe(long.length);
    const slow = withoutPairs(t, () => ranking(t, long));
    expect(slow).toEqual(fast);
    expect(fastReads).toBeLessThan((reads.count - fastReads) / 2);
    reads.restore();
    // Deeper pages; a threshold that skips part of the buckets; `distinct`, whose values a
    // document moved to a later bucket must not use up (see also bucket-sort-unsure.test.ts).
    for (const params of [{ limit: 300 }, { limit: 100, rankingScoreThreshold: 0.8 }, { limit: 20, distinct: 'year' }, { limit: 10, distinct: 'genres' }]) expect(ranking(t, long, params)).toEqual(withoutPairs(t, () => ranking(t, long, params)));
  });

  it('follow updates and deletions', async () => {
    // Each updated film gets the words of another's extract, so pairs appear and disappear.
    const updated = docs.slice(0, 400).map((m, i) => ({ ...m, extract: docs[(i + 700) % docs.length]!.extract, title: `The ${m.title}` }));
    t.add(updated, 'replace');
    await t.addPrepared(docs.slice(400, 600).map((m) => ({ id: m.id, genres: ['The Best Of'] })), 'update');
    t.remove(docs.slice(2000, 2300).map((m) => String(m.id)));
    await t.removePrepared(docs.slice(2300, 2400).map((m) => String(m.id)));
    const fast = ranking(t, queries);
    expect(withoutPairs(t, () => ranking(t, queries))).toEqual(fast);
    const gone = docs.slice(2000, 2400).map((m) => m.id);
    for (const [, hits] of fast) for (const [id] of hits as Array<[unknown]>) expect(gone).not.toContain(id);
  });

  it('an index written before them ranks from the documents, as before', () => {
    withoutPairs(t, () => {
      const r = search(t.index, { q: 'the b', limit: 5 });
      expect(r.hits.length).toBe(5);
    });
  });
});

describe('pair postings on all the films', () => {
  let t: TestIndex;

  beforeAll(async () => {
    const docs = movies();
    t = openTestIndex({ searchableAttributes: FIELDS });
    t.add(docs.slice(0, 1500));
    await t.addPrepared(docs.slice(1500));
  }, 120_000);
  afterAll(() => t.close());

  it('read the documents not read yet where they decide how a later rule ranks a bucket', () => {
    // A one- or two-letter prefix stands for more words than the rules enumerate, so a later rule
    // ranks a large bucket from posting lists and a small one document by document, and the two
    // differ on pure prefix matches: the documents a proximity bucket holds unread must not make
    // a bucket look large that is small once read. These searches ranked differently when they did.
    const queries = ['new m', 'two o', 'who sa', 'two l', 'one t', 'his tr', 'his ch', 'his ma', 'his pr', 'her g', 'one m', 'who k', 'her ma', 'war b', 'one a', 'for l', 'for v', 'her be', 'her co', 'her se', 'her st', 'one h', 'two b', 'war a', 'who sh', 'for sa', 'one c', 'war o', 'one p', 'for lo'];
    expect(ranking(t, queries)).toEqual(withoutPairs(t, () => ranking(t, queries)));
  });
});
