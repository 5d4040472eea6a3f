/**
 * What dynamic search rules do to searches, through real HTTP: scale actions (boost, demote,
 * hide; by ids and by filter), the filter condition, and pins in hybrid and federated search.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;

/** Ten shirts: `blue 1` ... `blue 10`; the more "blue" words, the better the match for `blue`. */
const SHIRTS = Array.from({ length: 10 }, (_, i) => ({
  id: i + 1,
  title: `${'blue '.repeat(10 - i)}shirt ${i + 1}`,
  color: i % 2 === 0 ? 'red' : 'green',
  category: i < 5 ? 'shirt' : 'jeans',
  price: (i + 1) * 10,
  _vectors: { manual: [1, i / 10, 0] },
}));

async function settled(method: string, path: string, json?: unknown) {
  const reply = await h.request(method, path, json === undefined ? {} : { json });
  expect(reply.status, JSON.stringify(reply.body)).toBe(202);
  const task = await h.wait(reply.body.taskUid);
  expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
  return task;
}

const rule = (uid: string, body: unknown) => settled('PATCH', `/dynamic-search-rules/${uid}`, body);

async function search(body: Record<string, unknown>) {
  const reply = await h.request('POST', '/indexes/shirts/search', { json: body });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}
const ids = async (body: Record<string, unknown>) => (await search(body)).hits.map((hit: { id: number }) => hit.id);

beforeAll(async () => {
  h = await startHarness();
  await settled('PATCH', '/indexes/shirts/settings', {
    filterableAttributes: ['color', 'category', 'price'],
    embedders: { manual: { source: 'userProvided', dimensions: 3 } },
  });
  await settled('POST', '/indexes/shirts/documents?primaryKey=id', SHIRTS);
  await settled('PATCH', '/indexes/other/settings', { filterableAttributes: ['color'] });
  await settled('POST', '/indexes/other/documents?primaryKey=id', [{ id: 100, title: 'blue scarf', color: 'red' }]);
  expect((await h.request('PATCH', '/experimental-features', { json: { dynamicSearchRules: true } })).status).toBe(200);
});
afterAll(async () => {
  await h.stop();
});

describe('scale actions', () => {
  test('without rules, more "blue" ranks first', async () => {
    expect(await ids({ q: 'blue', limit: 10 })).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  test('a boost by ids lifts a weak match above stronger ones; a demotion sinks a strong one', async () => {
    await rule('boost', { conditions: { query: { words: 'blue' } }, actions: { scale: [{ indexUid: 'shirts', ids: ['9'], weight: 4 }] } });
    const boosted = await ids({ q: 'blue', limit: 10 });
    expect(boosted[0]).toBe(9);
    expect([...boosted].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // the others keep their order
    expect(boosted.filter((id: number) => id !== 9)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 10]);
    const details = await search({ q: 'blue', limit: 1, showRankingScoreDetails: true });
    expect(details.hits[0]._rankingScoreDetails.scale).toEqual({ weight: 4 });

    await rule('boost', { actions: { scale: [{ ids: ['1'], weight: 0.01 }] } });
    const demoted = await ids({ q: 'blue', limit: 10 });
    expect(demoted[demoted.length - 1]).toBe(1);
    expect(demoted.slice(0, 3)).toEqual([2, 3, 4]);
    // the rule's conditions still apply: another query is untouched
    expect((await ids({ q: 'shirt', limit: 10 })).length).toBe(10);
  });

  test('weight 0 hides the selected documents from hits and counts; a filter selects; overlapping weights multiply', async () => {
    await rule('boost', { actions: { scale: [{ filter: 'color = red', weight: 0 }] } });
    const body = await search({ q: 'blue', limit: 10 });
    expect(body.hits.map((hit: { id: number }) => hit.id)).toEqual([2, 4, 6, 8, 10]);
    expect(body.estimatedTotalHits).toBe(5);
    // facets count what is shown
    expect((await search({ q: 'blue', facets: ['color'] })).facetDistribution).toEqual({ color: { green: 5 } });

    // filter and ids together: documents in both; two actions on one document multiply
    await rule('boost', {
      actions: {
        scale: [
          { filter: 'category = jeans', ids: ['10', '1'], weight: 2 },
          { ids: ['10'], weight: 50 },
        ],
      },
    });
    const combined = await search({ q: 'blue', limit: 10, showRankingScoreDetails: true });
    expect(combined.hits[0].id).toBe(10);
    expect(combined.hits[0]._rankingScoreDetails.scale).toEqual({ weight: 100 });
  });

  test('a pinned document shows even where a scale action hides it; an index the action does not name is untouched', async () => {
    await rule('boost', { actions: { scale: [{ filter: 'color = red', weight: 0 }], pin: [{ indexUid: 'shirts', id: '3', position: 0 }] } });
    const shown = await ids({ q: 'blue', limit: 10 });
    expect(shown).toEqual([3, 2, 4, 6, 8, 10]);
    await rule('boost', { actions: { scale: [{ indexUid: 'shirts', filter: 'color = red', weight: 0 }] } });
    expect((await h.request('POST', '/indexes/other/search', { json: { q: 'blue' } })).body.hits).toHaveLength(1);
    // an index where the filter cannot be evaluated: the action selects nothing there
    await rule('boost', { actions: { scale: [{ filter: 'price > 5', weight: 0 }] } });
    expect((await h.request('POST', '/indexes/other/search', { json: { q: 'blue' } })).body.hits).toHaveLength(1);
    expect(await ids({ q: 'blue' })).toEqual([]);
    await settled('DELETE', '/dynamic-search-rules/boost');
  });
});

describe('the filter condition', () => {
  test('a branch of the search filter must resolve every named facet to the rule value', async () => {
    await rule('red-shirts', { conditions: { filter: { values: { category: 'shirt', color: 'red' } } }, actions: { pin: [{ id: '5', position: 0 }] } });
    expect((await h.request('GET', '/dynamic-search-rules/red-shirts')).body.conditions).toEqual({ filter: { values: { category: 'shirt', color: 'red' } } });
    const first = async (filter?: unknown) => (await ids({ q: 'blue', ...(filter === undefined ? {} : { filter }) }))[0];
    expect(await first('category = shirt AND color = red')).toBe(5);
    expect(await first('(category = jeans AND color = green) OR (category = shirt AND color = red AND price > 10)')).toBe(5);
    expect(await first([['category = shirt'], ['color = red', 'color = blue']])).toBe(5);
    expect(await first('category = shirt AND color IN [red, green]')).toBe(5);
    // a branch that names only one of the facets, another value, a negation, or no filter: not active
    expect(await first('category = shirt')).toBe(1);
    expect(await first('category = shirt AND color = green')).toBe(2);
    expect(await first('category = shirt AND NOT color = red')).toBe(2);
    expect(await first('(category = shirt) OR (color = red)')).toBe(1);
    expect(await first()).toBe(1);
    // numbers compare as numbers
    await rule('cheap', { conditions: { filter: { values: { price: 30 } } }, actions: { pin: [{ id: '3', position: 0 }] } });
    expect(await first('price 20 TO 40')).toBe(3);
    expect(await first('price > 30 OR category = shirt')).toBe(1);
    await settled('DELETE', '/dynamic-search-rules');
  });

  test('bad filter conditions and scale filters are refused with the reference codes', async () => {
    const cases: Array<[unknown, string]> = [
      [{ conditions: { filter: { values: { color: ['red'] } } } }, 'invalid_dynamic_search_rule_conditions'],
      [{ conditions: { filter: { values: 'color = red' } } }, 'invalid_dynamic_search_rule_conditions'],
      [{ conditions: { filter: { expression: 'x' } } }, 'invalid_dynamic_search_rule_conditions'],
      [{ actions: { scale: [{ filter: 'color = ', weight: 2 }] } }, 'invalid_dynamic_search_rule_actions'],
      [{ actions: { scale: [{ filter: '', weight: 2 }] } }, 'invalid_dynamic_search_rule_actions'],
    ];
    for (const [body, code] of cases) {
      const reply = await h.request('PATCH', '/dynamic-search-rules/bad', { json: body });
      expect([JSON.stringify(body), reply.status, reply.body.code]).toEqual([JSON.stringify(body), 400, code]);
    }
    const scaleFilter = await h.request('PATCH', '/dynamic-search-rules/bad', { json: { actions: { scale: [{ filter: 'color = ', weight: 2 }] } } });
    expect(scaleFilter.body.message).toMatch(/^invalid `\.actions\.scale\[0\]\.filter`: /);
  });
});

describe('hybrid and federated search', () => {
  beforeAll(async () => {
    await rule('pin-nine', { conditions: { query: { words: 'blue' } }, actions: { pin: [{ indexUid: 'shirts', id: '9', position: 1 }] } });
  });

  test('pins and scales apply to hybrid search', async () => {
    const hybrid = await search({ q: 'blue', vector: [1, 0, 0], hybrid: { embedder: 'manual', semanticRatio: 0.5 }, limit: 4 });
    expect(hybrid.hits[1].id).toBe(9);
    expect(hybrid.hits.filter((hit: { id: number }) => hit.id === 9)).toHaveLength(1);
    const semantic = await search({ q: 'blue', vector: [1, 0, 0], hybrid: { embedder: 'manual', semanticRatio: 1 }, limit: 4 });
    expect(semantic.hits[1].id).toBe(9);
    await rule('hide-one', { conditions: { query: { words: 'blue' } }, actions: { scale: [{ ids: ['1'], weight: 0 }] } });
    const hidden = await search({ q: 'blue', vector: [1, 0, 0], hybrid: { embedder: 'manual', semanticRatio: 0.5 }, limit: 10 });
    expect(hidden.hits.map((hit: { id: number }) => hit.id)).not.toContain(1);
    await settled('DELETE', '/dynamic-search-rules/hide-one');
  });

  test('pins keep their position in the merged list of a federated search; non-federated queries get them too', async () => {
    const federated = await h.request('POST', '/multi-search', {
      json: { federation: { limit: 5 }, queries: [{ indexUid: 'shirts', q: 'blue' }, { indexUid: 'other', q: 'blue' }] },
    });
    expect(federated.status).toBe(200);
    const hits = federated.body.hits as Array<{ id: number; _federation: { indexUid: string } }>;
    expect(hits[1]).toMatchObject({ id: 9, _federation: { indexUid: 'shirts' } });
    expect(hits.filter((hit) => hit.id === 9)).toHaveLength(1);
    const separate = await h.request('POST', '/multi-search', { json: { queries: [{ indexUid: 'shirts', q: 'blue', limit: 3 }] } });
    expect(separate.body.results[0].hits[1].id).toBe(9);
  });
});
