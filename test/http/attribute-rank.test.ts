/**
 * `attributeRank` with the default `searchableAttributes: ["*"]`: every field has the same weight,
 * as in the reference (no field wins for having been seen first); with a list, the list's order ranks.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  const added = await h.request('POST', '/indexes/books/documents?primaryKey=id', {
    json: [
      { id: 1, title: 'Le Petit Prince', comment: 'a french book' },
      { id: 2, title: 'Another book', comment: 'prince of persia' },
    ],
  });
  expect((await h.wait(added.body.taskUid)).status).toBe('succeeded');
});
afterAll(async () => {
  await h.stop();
});

const details = async () =>
  (await h.request('POST', '/indexes/books/search', { json: { q: 'prince', showRankingScoreDetails: true } })).body.hits.map(
    (hit: { id: number; _rankingScoreDetails: { attributeRank: { score: number } } }) => [hit.id, hit._rankingScoreDetails.attributeRank.score],
  );

test('with "*", a match in any field has the best attribute rank', async () => {
  expect(await details()).toEqual(expect.arrayContaining([[1, 1], [2, 1]]));
});

test('with a list, the earlier attribute ranks first', async () => {
  const reply = await h.request('PATCH', '/indexes/books/settings', { json: { searchableAttributes: ['comment', 'title'] } });
  await h.wait(reply.body.taskUid);
  const ranked = await details();
  expect(ranked[0]).toEqual([2, 1]);
  expect(ranked[1]![1]).toBeLessThan(1);
});
