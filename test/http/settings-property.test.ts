/**
 * Property: an accepted setting never makes a search fail. Random settings (plausible values,
 * extremes and lists of every length up to the limits) are sent; whatever the server accepts and
 * applies, the searches a client then sends (plain, placeholder, highlighted and cropped,
 * faceted, sorted, filtered, federated) answer 200, and random search parameters never a 5xx.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
const serverErrors: string[] = [];
beforeAll(async () => {
  h = await startHarness({ logServerError: (line) => serverErrors.push(line) });
  const docs = Array.from({ length: 40 }, (_, i) => ({
    id: i,
    title: `the alien ${i % 7} heat`,
    genre: ['drama', 'sci-fi', 'crime'][i % 3],
    year: 1970 + i,
    nested: { rating: i % 5, tags: ['a', `t${i % 4}`] },
    _geo: { lat: 48 + i / 100, lng: 2 + i / 100 },
  }));
  await h.wait((await h.request('POST', '/indexes/p/documents', { json: docs })).body.taskUid);
});
afterAll(async () => {
  await h.stop();
});

const FIELDS = ['title', 'genre', 'year', 'nested', 'nested.rating', 'nested.tags', '_geo', 'id', 'missing', '*'];
const field = fc.constantFrom(...FIELDS);
const word = fc.oneof(fc.constantFrom('the', 'alien', 'heat', 'drama', 'a', '-', '_', ''), fc.string({ maxLength: 8 }));
const customRule = fc.tuple(fc.oneof(field, fc.string({ minLength: 1, maxLength: 6 })), fc.constantFrom('asc', 'desc')).map(([f, o]) => `${f}:${o}`);
const builtin = fc.constantFrom('words', 'typo', 'proximity', 'attribute', 'attributeRank', 'wordPosition', 'sort', 'exactness');
const listOf = <T>(arb: fc.Arbitrary<T>) => fc.oneof(fc.array(arb, { maxLength: 6 }), fc.array(arb, { minLength: 50, maxLength: 70 }));

const settingValue: Record<string, fc.Arbitrary<unknown>> = {
  rankingRules: fc.oneof(listOf(fc.oneof(builtin, customRule)), fc.constant(['words', ...Array.from({ length: 10_000 }, (_, i) => `f${i}:asc`)]), fc.constant(Array.from({ length: 64 }, (_, i) => (i < 8 ? ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'year:asc', 'id:desc'][i]! : `f${i}:asc`)))),
  searchableAttributes: listOf(field),
  displayedAttributes: listOf(field),
  filterableAttributes: listOf(field),
  sortableAttributes: listOf(field),
  distinctAttribute: fc.oneof(field, fc.constant(null)),
  stopWords: listOf(word),
  separatorTokens: listOf(fc.string({ minLength: 1, maxLength: 3 })),
  nonSeparatorTokens: listOf(fc.string({ minLength: 1, maxLength: 3 })),
  dictionary: listOf(word),
  synonyms: fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.array(word, { maxLength: 4 }), { maxKeys: 5 }),
  proximityPrecision: fc.constantFrom('byWord', 'byAttribute'),
  typoTolerance: fc.record(
    {
      enabled: fc.boolean(),
      minWordSizeForTypos: fc.record({ oneTypo: fc.integer({ min: 0, max: 255 }), twoTypos: fc.integer({ min: 0, max: 255 }) }),
      disableOnWords: listOf(word),
      disableOnAttributes: listOf(field),
      disableOnNumbers: fc.boolean(),
    },
    { requiredKeys: [] },
  ),
  faceting: fc.record({ maxValuesPerFacet: fc.nat({ max: 5000 }), sortFacetValuesBy: fc.dictionary(field, fc.constantFrom('alpha', 'count'), { maxKeys: 3 }) }, { requiredKeys: [] }),
  pagination: fc.record({ maxTotalHits: fc.oneof(fc.nat({ max: 10 }), fc.nat({ max: 100_000 })) }),
  searchCutoffMs: fc.oneof(fc.constant(null), fc.nat({ max: 2000 })),
  facetSearch: fc.boolean(),
  prefixSearch: fc.constantFrom('indexingTime', 'disabled'),
  localizedAttributes: fc.oneof(fc.constant(null), fc.array(fc.record({ attributePatterns: fc.array(field, { minLength: 1, maxLength: 3 }), locales: fc.array(fc.constantFrom('eng', 'fra', 'jpn'), { maxLength: 2 }) }), { maxLength: 2 })),
};
const patch = fc.dictionary(fc.constantFrom(...Object.keys(settingValue)), fc.constant(null), { minKeys: 1, maxKeys: 4 }).chain((keys) =>
  fc.record(Object.fromEntries(Object.keys(keys).map((k) => [k, settingValue[k]!])) as Record<string, fc.Arbitrary<unknown>>),
);

const randomSearch = fc.record(
  {
    q: word,
    sort: fc.array(fc.oneof(customRule, fc.constant('_geoPoint(48,2):asc')), { maxLength: 3 }),
    filter: fc.constantFrom('year > 1980', 'genre = drama', 'nested.rating IN [1, 2]', '_geoRadius(48, 2, 100000)', 'missing EXISTS'),
    facets: fc.array(field, { maxLength: 3 }),
    attributesToHighlight: fc.array(field, { maxLength: 3 }),
    attributesToCrop: fc.array(field, { maxLength: 3 }),
    cropLength: fc.nat({ max: 50 }),
    distinct: field,
    matchingStrategy: fc.constantFrom('last', 'all', 'frequency'),
    showRankingScoreDetails: fc.boolean(),
    attributesToSearchOn: fc.array(field, { maxLength: 2 }),
    limit: fc.nat({ max: 100 }),
  },
  { requiredKeys: [] },
);

/** Searches any client sends, valid whatever the settings: each must answer 200. */
const ALWAYS_VALID = [
  { q: 'alien' },
  {},
  { q: 'the heat', attributesToHighlight: ['*'], attributesToCrop: ['*'], cropLength: 3, showMatchesPosition: true, showRankingScoreDetails: true },
  { q: 'alein', matchingStrategy: 'all', page: 2, hitsPerPage: 5 },
];

test('random accepted settings, then searches: all answer 200, random parameters never 5xx', async () => {
  let applied = 0;
  await fc.assert(
    fc.asyncProperty(patch, fc.array(randomSearch, { maxLength: 4 }), async (settings, searches) => {
      const reply = await h.request('PATCH', '/indexes/p/settings', { json: settings });
      expect(reply.status, reply.text).toBeLessThan(500);
      if (reply.status === 202) {
        const task = await h.wait(reply.body.taskUid);
        if (task.status === 'succeeded') applied++;
      }
      for (const body of ALWAYS_VALID) {
        const searched = await h.request('POST', '/indexes/p/search', { json: body });
        expect(searched.status, `${JSON.stringify(settings)} then ${JSON.stringify(body)}: ${searched.text.slice(0, 300)}`).toBe(200);
      }
      const multi = await h.request('POST', '/multi-search', { json: { federation: {}, queries: [{ indexUid: 'p', q: 'alien' }, { indexUid: 'p' }] } });
      expect(multi.status, multi.text.slice(0, 300)).toBe(200);
      for (const body of searches) {
        const searched = await h.request('POST', '/indexes/p/search', { json: body });
        expect(searched.status, `${JSON.stringify(settings)} then ${JSON.stringify(body)}: ${searched.text.slice(0, 300)}`).toBeLessThan(500);
      }
    }),
    { numRuns: 60, seed: Number(process.env.FUZZ_SEED ?? 0x5e771) },
  );
  expect(applied).toBeGreaterThan(20);
  expect(serverErrors).toEqual([]);
}, 240_000);
