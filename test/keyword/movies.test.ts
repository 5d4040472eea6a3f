import roaring from 'roaring';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { search, multiSearch } from '../../src/engine/search/index.js';
import { keywordDbs } from '../../src/engine/search/keyword/layout.js';
import { SearchError } from '../../src/engine/errors.js';
import { analyzerFor } from '../../src/engine/search/keyword/analyzer.js';
import { keywordReader } from '../../src/engine/search/keyword/reader.js';
import { parseQuery } from '../../src/engine/search/query/parse.js';
import { resolveTerms } from '../../src/engine/search/query/resolve.js';
import { MatchAnalyzer, pairCost } from '../../src/engine/search/ranking/matches.js';
import { dumpKeyword, openTestIndex, type TestIndex } from './helpers.js';
import { movies as moviesData } from '../data.js';
import type { Document } from '../../src/engine/types.js';

const { RoaringBitmap32 } = roaring;

let t: TestIndex;
let movies: Document[];
const titles = (r: { hits: Array<Record<string, unknown>> }) => r.hits.map((h) => h.title);
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as SearchError).code;
  }
  return 'no error';
};

beforeAll(() => {
  // The most recent films: real titles, casts and extracts, small enough for a quick test.
  movies = moviesData().slice(-4000);
  t = openTestIndex({ searchableAttributes: ['title', 'cast', 'genres', 'extract'] });
  t.add(movies);
}, 120_000);
afterAll(() => t.close());

describe('keyword search on movies.json (4,000 most recent films)', () => {
  it('tolerates typos, ranks the title match first', () => {
    const r = search(t.index, { q: 'avngers endgme' });
    expect(titles(r)[0]).toBe('Avengers: Endgame');
    const swapped = search(t.index, { q: 'Intersetllar' }); // transposition = one typo
    expect(titles(swapped)[0]).toBe('Interstellar');
  });
  it('matches the last word as a prefix, not the others', () => {
    expect(titles(search(t.index, { q: 'guardians of the gal' })).slice(0, 2)).toContain('Guardians of the Galaxy');
    expect(search(t.index, { q: 'guardi ' }).estimatedTotalHits).toBeLessThan(search(t.index, { q: 'guardi' }).estimatedTotalHits!);
  });
  it('matches phrases and excludes negated words', () => {
    const phrase = search(t.index, { q: '"star wars"', limit: 50 });
    expect(phrase.estimatedTotalHits).toBeGreaterThan(0);
    for (const h of phrase.hits) expect(JSON.stringify(h).toLowerCase()).toMatch(/star wars/);
    const without = search(t.index, { q: 'star wars -skywalker', limit: 1000 });
    expect(without.hits.some((h) => JSON.stringify(h).toLowerCase().includes('skywalker'))).toBe(false);
    expect(without.estimatedTotalHits).toBeLessThan(search(t.index, { q: 'star wars', limit: 0 }).estimatedTotalHits!);
  });
  it('matchingStrategy all requires every word, last drops words from the end', () => {
    const all = search(t.index, { q: 'star wars skywalker', matchingStrategy: 'all' }).estimatedTotalHits!;
    const last = search(t.index, { q: 'star wars skywalker', matchingStrategy: 'last' }).estimatedTotalHits!;
    const batman = search(t.index, { q: 'star ', matchingStrategy: 'last' }).estimatedTotalHits!;
    expect(all).toBeGreaterThan(0);
    expect(last).toBe(batman);
    expect(all).toBeLessThan(last);
  });
  it('restricts to attributesToSearchOn', () => {
    const inTitle = search(t.index, { q: 'Tom Hanks', attributesToSearchOn: ['title'], matchingStrategy: 'all' });
    const inCast = search(t.index, { q: 'Tom Hanks', attributesToSearchOn: ['cast'], matchingStrategy: 'all', limit: 100 });
    expect(inTitle.estimatedTotalHits).toBe(0);
    expect(inCast.estimatedTotalHits).toBeGreaterThan(5);
    for (const h of inCast.hits) expect((h.cast as string[]).join(' ')).toMatch(/\bTom\b/);
    // Proximity puts the actor first.
    for (const h of inCast.hits.slice(0, 3)) expect(h.cast as string[]).toContain('Tom Hanks');
  });
  it('highlights, crops and reports match positions', () => {
    const r = search(t.index, {
      q: 'interstellar',
      limit: 1,
      attributesToRetrieve: ['title'],
      attributesToHighlight: ['title', 'extract'],
      attributesToCrop: ['extract:6'],
      cropMarker: '[…]',
      showMatchesPosition: true,
    });
    const hit = r.hits[0]!;
    expect(hit).toMatchObject({ title: 'Interstellar' });
    expect(hit.extract).toBeUndefined();
    expect(hit._formatted!.title).toBe('<em>Interstellar</em>');
    const crop = hit._formatted!.extract as string;
    expect(crop).toMatch(/<em>Interstellar<\/em>/);
    expect(crop.replace(/<\/?em>/g, '').replace(/\[…\]/g, '').trim().split(/\s+/).length).toBeLessThanOrEqual(6);
    expect(hit._matchesPosition!.title).toEqual([{ start: 0, length: 12 }]);
  });
  it('highlights only the matched prefix of a word', () => {
    const r = search(t.index, { q: 'interstel', limit: 1, attributesToHighlight: ['title'], highlightPreTag: '[', highlightPostTag: ']' });
    expect(r.hits[0]!._formatted!.title).toBe('[Interstel]lar');
  });
  it('paginates with page/hitsPerPage and offset/limit consistently', () => {
    const pages = search(t.index, { q: 'love', hitsPerPage: 5, page: 2 });
    const offset = search(t.index, { q: 'love', offset: 5, limit: 5 });
    expect(titles(pages)).toEqual(titles(offset));
    expect(pages.totalHits).toBe(offset.estimatedTotalHits);
    expect(pages.totalPages).toBe(Math.ceil(pages.totalHits! / 5));
    expect(Object.keys(offset)).toEqual(['hits', 'query', 'processingTimeMs', 'limit', 'offset', 'estimatedTotalHits']);
  });
  it('computes ranking scores rule by rule, decreasing, with a threshold', () => {
    const r = search(t.index, { q: 'spider man', showRankingScore: true, showRankingScoreDetails: true, limit: 30 });
    const scores = r.hits.map((h) => h._rankingScore!);
    for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeLessThanOrEqual(scores[i - 1]!);
    const details = r.hits[0]!._rankingScoreDetails as Record<string, { order: number; score?: number }>;
    expect(Object.keys(details)).toEqual(['words', 'typo', 'proximity', 'attributeRank', 'wordPosition', 'exactness']);
    expect(details.words).toMatchObject({ order: 0, matchingWords: 2, maxMatchingWords: 2, score: 1 });
    const threshold = scores[5]!;
    const above = search(t.index, { q: 'spider man', rankingScoreThreshold: threshold, limit: 100, showRankingScore: true });
    expect(above.hits.every((h) => h._rankingScore! >= threshold)).toBe(true);
    expect(above.estimatedTotalHits).toBe(above.hits.length);
  });
  it('ranks a query the same whatever searches ran before it (tables reused between searches start clean)', () => {
    const q = { q: 'love story', limit: 50, showRankingScoreDetails: true, attributesToRetrieve: ['id'] };
    const first = search(t.index, q).hits;
    // Searches matching many other words (short prefixes, typos, a phrase) in between.
    for (const other of ['the s', 'a', 'lvoe', 'storm of the', '"the story"', 'st']) search(t.index, { q: other, limit: 20 });
    expect(search(t.index, q).hits).toEqual(first);
  });
  it('computes proximity in one pass over each entry exactly as from the occurrences', () => {
    const settings = t.index.settings;
    const reader = keywordReader(t.index.store);
    const analyzer = analyzerFor(settings);
    for (const q of ['the b', 'of the', 'star wars', 'lvoe story', 'the godfahter part', '"the dark" knight', 'new york city', 'a', 'man of the year', 'th']) {
      const parsed = parseQuery(q, analyzer, null);
      const terms = resolveTerms(parsed.terms, { reader, analyzer, fids: null }, true);
      const active = terms.map((_, i) => i);
      let docs = t.index.store.docids();
      for (const term of terms) docs = RoaringBitmap32.and(docs, term.all);
      for (const byAttribute of [false, true]) {
        const streamed = new MatchAnalyzer(reader, terms, null);
        const built = new MatchAnalyzer(reader, terms, null);
        let checked = 0;
        for (const d of docs) {
          const occ = built.get(d).occurrences;
          let expected = 0;
          for (let k = 0; k + 1 < active.length; k++) expected += pairCost(occ[active[k]!]!, occ[active[k + 1]!]!, byAttribute);
          expect({ q, d, byAttribute, cost: streamed.proximity(d, active, byAttribute, false) }).toEqual({ q, d, byAttribute, cost: expected });
          if (++checked === 600) break;
        }
        streamed.release();
        built.release();
      }
    }
  });
  it('rejects invalid parameters with the reference codes', () => {
    expect(codeOf(() => search(t.index, { q: 1 }))).toBe('invalid_search_q');
    expect(codeOf(() => search(t.index, { limit: -1 }))).toBe('invalid_search_limit');
    expect(codeOf(() => search(t.index, { matchingStrategy: 'some' }))).toBe('invalid_search_matching_strategy');
    expect(codeOf(() => search(t.index, { attributesToSearchOn: ['href'] }))).toBe('invalid_search_attributes_to_search_on');
    expect(codeOf(() => search(t.index, { rankingScoreThreshold: 2 }))).toBe('invalid_search_ranking_score_threshold');
    expect(codeOf(() => search(t.index, { foo: 1 }))).toBe('bad_request');
    expect(codeOf(() => search(t.index, { sort: ['year:asc'] }))).toBe('invalid_search_sort');
  });
  it('answers federated multi-search with weighted scores', async () => {
    const r = (await multiSearch(() => t.index, {
      federation: { limit: 5 },
      queries: [
        { indexUid: 'movies', q: 'interstellar' },
        { indexUid: 'movies', q: 'inception', federationOptions: { weight: 2 } },
      ],
    })) as { hits: Array<Record<string, any>>; estimatedTotalHits: number };
    expect(r.hits[0]!.title).toBe('Inception');
    expect(r.hits[0]!._federation).toMatchObject({ indexUid: 'movies', queriesPosition: 1, weightedRankingScore: 2 });
    const plain = (await multiSearch(() => t.index, { queries: [{ indexUid: 'movies', q: 'inception', limit: 1 }] })) as { results: any[] };
    expect(plain.results[0]).toMatchObject({ indexUid: 'movies', query: 'inception' });
    await expect(multiSearch(() => t.index, { federation: {}, queries: [{ indexUid: 'movies', q: 'x', limit: 2 }] })).rejects.toMatchObject({ code: 'invalid_multi_search_query_pagination' });
  });
});


describe('incremental indexing stays exact', () => {
  it('add, update and delete give the same databases as a fresh build', async () => {
    const sample = movies.slice(0, 200);
    const a = openTestIndex({ searchableAttributes: ['title', 'cast', 'extract'] });
    const b = openTestIndex({ searchableAttributes: ['title', 'cast', 'extract'] });
    try {
      a.add(sample);
      const updated = sample.slice(0, 100).map((m) => ({ ...m, title: `${m.title} remastered edition`, extract: undefined }));
      a.add(updated, 'update');
      a.remove(sample.slice(150).map((m) => String(m.id)));
      const expected = [...updated.map((u) => ({ ...sample.find((m) => m.id === u.id)!, ...u })), ...sample.slice(100, 150)];
      b.add(expected.map((m) => JSON.parse(JSON.stringify(m))));
      expect(dumpKeyword(a)).toEqual(dumpKeyword(b));
      expect(titles(search(a.index, { q: 'remastered', limit: 200 })).length).toBe(100);
    } finally {
      await a.close();
      await b.close();
    }
  });
  it('preparing before the write transaction (the task processors\' path) builds the same databases', async () => {
    const sample = movies.slice(0, 300);
    const settings = { searchableAttributes: ['title', 'cast', 'extract'] };
    const a = openTestIndex(settings);
    const b = openTestIndex(settings);
    try {
      const updated = sample.slice(0, 120).map((m) => ({ ...m, title: `${m.title} director's cut`, cast: undefined }));
      const removed = sample.slice(250).map((m) => String(m.id));
      await a.addPrepared(sample);
      await a.addPrepared(updated, 'update');
      await a.removePrepared(removed);
      b.add(sample);
      b.add(updated, 'update');
      b.remove(removed);
      expect(dumpKeyword(a)).toEqual(dumpKeyword(b));
      // A re-index prepared from scratch (settings that change extraction) matches too.
      await a.setSettingsPrepared({ stopWords: ['the', 'of'] });
      b.setSettings({ stopWords: ['the', 'of'] });
      expect(dumpKeyword(a)).toEqual(dumpKeyword(b));
      const q = { q: "director's cut", limit: 500, showRankingScoreDetails: true };
      expect(search(a.index, q).estimatedTotalHits).toBeGreaterThanOrEqual(120);
      expect(search(a.index, q).hits).toEqual(search(b.index, q).hits);
    } finally {
      await a.close();
      await b.close();
    }
  });
  it('long lists take small batches into tails, folded back on growth and on removals, and read the same as a fresh build', async () => {
    const settings = { searchableAttributes: ['title', 'cast', 'genres', 'extract'] };
    const a = openTestIndex(settings);
    const b = openTestIndex(settings);
    try {
      const base = movies.slice(0, 3000);
      await a.addPrepared(base);
      // Small batches on a large index: frequent words' lists are long, so their additions land in tails.
      const later = movies.slice(3000, 3600);
      let sawTails = false;
      for (let i = 0; i < later.length; i += 50) {
        if (i % 100 === 0) await a.addPrepared(later.slice(i, i + 50));
        else a.add(later.slice(i, i + 50));
        const dbs = keywordDbs(a.index.store);
        for (const name of ['words', 'prefixes', 'wordParts'] as const) {
          for (const { key, value } of dbs.tails[name].getRange()) {
            sawTails = true;
            // A tail only stands behind a long list, and is folded before it reaches a quarter of it.
            const list = dbs[name].getBinary(key as string)!;
            expect(list.length).toBeGreaterThanOrEqual(2048);
            expect(value.length).toBeLessThan(list.length / 4);
          }
        }
      }
      expect(sawTails).toBe(true);
      const sameSearches = (x: TestIndex, y: TestIndex) => {
        for (const q of ['the', 'the restored', 'star', 'love story', 'john', 'war of the', 'restored cut', 'film', 'american drama']) {
          const query = { q, limit: 400, showRankingScoreDetails: true, attributesToRetrieve: ['id'] };
          const [rx, ry] = [search(x.index, query), search(y.index, query)];
          expect({ q, total: rx.estimatedTotalHits, hits: rx.hits }).toEqual({ q, total: ry.estimatedTotalHits, hits: ry.hits });
        }
      };
      // With the tails in place: the same as one batch of the same documents.
      const c = openTestIndex(settings);
      try {
        c.add([...base, ...later].map((m) => JSON.parse(JSON.stringify(m))));
        expect(dumpKeyword(a)).toEqual(dumpKeyword(c));
        sameSearches(a, c);
      } finally {
        await c.close();
      }
      // Updates and removals touch long lists: their tails fold.
      const updated = base.slice(0, 80).map((m) => ({ ...m, title: `${m.title} the restored cut` }));
      const removed = [...base.slice(100, 140), ...later.slice(0, 30)].map((m) => String(m.id));
      await a.addPrepared(updated, 'update');
      a.remove(removed);
      const gone = new Set(removed);
      const expected = [...base, ...later]
        .filter((m) => !gone.has(String(m.id)))
        .map((m) => updated.find((u) => u.id === m.id) ?? m);
      b.add(expected.map((m) => JSON.parse(JSON.stringify(m))));
      expect(dumpKeyword(a)).toEqual(dumpKeyword(b));
      sameSearches(a, b);
    } finally {
      await a.close();
      await b.close();
    }
  }, 240_000);
  it('re-extracts on settings that need it: stop words, synonyms at query time', async () => {
    const small = openTestIndex({ searchableAttributes: ['title', 'extract'] });
    try {
      small.add(movies.filter((m) => /galaxy|cosmos/i.test(String(m.title))).concat(movies.slice(0, 300)));
      const before = search(small.index, { q: 'cosmos', limit: 100 }).estimatedTotalHits!;
      small.setSettings({ stopWords: ['the'], synonyms: { galaxy: ['cosmos'], cosmos: ['galaxy'] } });
      const r = search(small.index, { q: 'the cosmos', limit: 100, attributesToHighlight: ['title'] });
      expect(r.estimatedTotalHits).toBeGreaterThan(before);
      expect(r.hits.map((h) => h.title)).toContain('Guardians of the Galaxy');
      // Stop words are not indexed any more: alone in a query they still search, and find nothing.
      expect(search(small.index, { q: 'the ', limit: 0 }).estimatedTotalHits).toBe(0);
    } finally {
      await small.close();
    }
  });
});
