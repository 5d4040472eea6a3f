/**
 * A document's ranking score is its own: the same whether the search matched thousands of other
 * documents or a filter left it nearly alone. The rules rank a large bucket from posting lists and
 * a small one by reading each document (BITMAP_PATH_MIN in ranking/rules.ts); both must give every
 * document the same rank: a typo, a word split in two ("bevery" as "be very"), a document
 * starting with the query or holding it as a whole value, a short prefix of the last word that
 * stands for more words than the rules enumerate (its record, kw-prefix-parts, stands for them).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { movies } from '../data.js';
import { tempEngine } from '../engine/helpers.js';

let engine: Engine;
let cleanup: () => Promise<void>;

async function settled(task: Promise<{ taskUid: number }>): Promise<void> {
  const done = await engine.waitForTask((await task).taskUid, { timeoutMs: 120_000 });
  expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
}

/**
 * The default ranking rules, and the position-based ones right after `words`, where they split the
 * large buckets of the whole index (posting lists) against the few documents a filter leaves.
 */
const INDEXES = {
  movies: {},
  early: { rankingRules: ['words', 'exactness', 'attribute', 'wordPosition', 'typo', 'proximity'] },
};

beforeAll(async () => {
  ({ engine, cleanup } = await tempEngine({ searchThreads: 0 }));
  for (const [uid, settings] of Object.entries(INDEXES)) {
    await settled(engine.updateSettings(uid, { searchableAttributes: ['title', 'cast', 'genres', 'extract'], filterableAttributes: ['id'], ...settings }));
    await settled(engine.addDocuments(uid, movies(), { primaryKey: 'id' }));
  }
  // Hundreds of documents found only through a split of the query word ("bevery" as "be very"),
  // which has no posting list of its own, at different places.
  const splits = Array.from({ length: 300 }, (_, i) => ({ id: i, title: i % 2 ? `How to Be Very Happy ${i}` : `Happy ${i}`, extract: i % 2 ? 'A comedy.' : `A comedy on how to be very happy, part ${i}.` }));
  await settled(engine.updateSettings('splits', { searchableAttributes: ['title', 'extract'], filterableAttributes: ['id'] }));
  await settled(engine.addDocuments('splits', splits, { primaryKey: 'id' }));
}, 180_000);
afterAll(async () => {
  await cleanup();
});

type Hit = { id: number; _rankingScore: number; _rankingScoreDetails: Record<string, unknown> };

async function hits(uid: string, q: string, extra: Record<string, unknown> = {}): Promise<Hit[]> {
  const response = await engine.search(uid, { q, showRankingScore: true, showRankingScoreDetails: true, attributesToRetrieve: ['id'], ...extra });
  return response.hits as unknown as Hit[];
}

describe('ranking scores', () => {
  // Frequent words and names, typos, splits, whole titles.
  const queries = ['john', 'james', 'love', 'the', 'man', 'star wars', 'the lord of the rings', 'bevery hills', 'how to be very', 'new york', 'harry potter', 'wild', 'king kong', 'north shore', 'don look back', 'mister universe'];
  // As someone types: a short last word whose prefix stands for hundreds of words.
  const typed = ['the g', 'through t', 'star w', 'the c', 'harry p', 'lo', 'john s'];
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ...Object.keys(INDEXES).flatMap((uid) => [...queries, ...typed].map((q): [string, string, Record<string, unknown>] => [uid, q, {}])),
    ['splits', 'bevery', {}],
    ['splits', 'bevery happy', {}],
    // searching some attributes only: word positions are read from the documents, the rest is not
    ...['john', 'love', 'harry potter'].map((q): [string, string, Record<string, unknown>] => ['early', q, { attributesToSearchOn: ['cast', 'title'] }]),
  ];

  test.each(cases)('in %s, of %j (%o), are the same when a filter leaves the hits nearly alone', async (uid, q, params) => {
    const wide = await hits(uid, q, { limit: 200, ...params });
    expect(wide.length).toBeGreaterThanOrEqual(10);
    // a handful at a time: well under the size from which buckets are ranked from posting lists
    for (let at = 0; at < wide.length; at += 16) {
      const some = wide.slice(at, at + 16);
      const alone = await hits(uid, q, { ...params, filter: `id IN [${some.map((h) => h.id).join(', ')}]` });
      const byId = new Map(alone.map((h) => [h.id, h]));
      for (const hit of some) {
        const same = byId.get(hit.id);
        expect(same?._rankingScoreDetails, `${q}: document ${hit.id}`).toEqual(hit._rankingScoreDetails);
        expect(same?._rankingScore).toBe(hit._rankingScore);
      }
    }
  });
});
