/**
 * Bounded requests: hostile sizes and depths answer 4xx with the reference's codes (never a 500),
 * every limit documented in README "Limits" holds, and one huge request does not hold the server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectErrorShape, startHarness, type Harness } from './harness.js';
import { MAX_JSON_DEPTH } from '../../src/engine/wire/json-depth.js';
import { MAX_LIST_ENTRIES, MAX_MARKER_LENGTH } from '../../src/engine/search/params.js';
import { MAX_SORT_CRITERIA } from '../../src/engine/search/sort/parse.js';
import { MAX_RANKING_RULES } from '../../src/engine/settings/validate.js';

let h: Harness;
const logged: string[] = [];
beforeAll(async () => {
  h = await startHarness({ limits: { maxMultiSearchQueries: 3000 }, logServerError: (line) => logged.push(line) });
  const docs = Array.from({ length: 50 }, (_, i) => ({ id: i, title: `alien heat ${i}`, year: 1970 + i }));
  await h.wait((await h.request('POST', '/indexes/m/documents', { json: docs })).body.taskUid);
  const settings = { filterableAttributes: ['year'], sortableAttributes: ['year', 'title'] };
  await h.wait((await h.request('PATCH', '/indexes/m/settings', { json: settings })).body.taskUid);
});
afterAll(async () => {
  await h.stop();
});

/** `{"a":{"a":…1…}}` nested `depth` levels, as text (JSON.stringify itself cannot build it). */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

async function expectRefused(reply: { status: number; body: any; text: string }, status: number, code: string): Promise<void> {
  expect(reply.status, reply.text.slice(0, 300)).toBe(status);
  expectErrorShape(reply.body, code);
}

async function documentCount(): Promise<number> {
  return (await h.request('GET', '/indexes/m/documents?limit=0')).body.total;
}

describe('nesting depth', () => {
  test('a document nested 10,000 levels deep is a malformed payload, in JSON and NDJSON, and nothing is enqueued', async () => {
    const tasks = h.engine.getTasks({ limit: 0 }).total;
    const json = await h.request('POST', '/indexes/m/documents', { raw: `[{"id":900,"x":${nested(10_000)}}]`, contentType: 'application/json' });
    await expectRefused(json, 400, 'malformed_payload');
    expect(json.body.message).toMatch(/recursion limit exceeded: nested deeper than 128 levels/);
    const ndjson = await h.request('POST', '/indexes/m/documents', {
      raw: `{"id":901}\n{"id":902,"x":${nested(10_000)}}\n`,
      contentType: 'application/x-ndjson',
    });
    await expectRefused(ndjson, 400, 'malformed_payload');
    expect(ndjson.body.message).toMatch(/line 2/);
    expect(h.engine.getTasks({ limit: 0 }).total).toBe(tasks);
  });

  test(`documents up to ${MAX_JSON_DEPTH} levels are accepted and indexed`, async () => {
    const reply = await h.request('POST', '/indexes/m/documents', { raw: `[{"id":903,"x":${nested(MAX_JSON_DEPTH - 2)}}]`, contentType: 'application/json' });
    expect(reply.status).toBe(202);
    expect((await h.wait(reply.body.taskUid)).status).toBe('succeeded');
    expect((await h.request('GET', '/indexes/m/documents/903')).status).toBe(200);
    await h.wait((await h.request('DELETE', '/indexes/m/documents/903')).body.taskUid);
  });

  test('a filter of 10,000 nested arrays, and a deep body on every JSON route, answer 400', async () => {
    const filter = '['.repeat(10_000) + '"year = 1"' + ']'.repeat(10_000);
    await expectRefused(await h.request('POST', '/indexes/m/search', { raw: `{"filter":${filter}}`, contentType: 'application/json' }), 400, 'malformed_payload');
    await expectRefused(
      await h.request('POST', '/multi-search', { raw: `{"queries":[{"indexUid":"m","filter":${filter}}]}`, contentType: 'application/json' }),
      400,
      'malformed_payload',
    );
    await expectRefused(await h.request('PATCH', '/indexes/m/settings', { raw: `{"rankingRules":${filter}}`, contentType: 'application/json' }), 400, 'malformed_payload');
    // within the depth limit, the filter's own grammar refuses arrays nested deeper than two
    let shallow: unknown = 'year = 1';
    for (let i = 0; i < 100; i++) shallow = [shallow];
    await expectRefused(await h.request('POST', '/indexes/m/search', { json: { filter: shallow } }), 400, 'invalid_search_filter');
    const strFilter = '('.repeat(10_000) + 'year = 1' + ')'.repeat(10_000);
    await expectRefused(await h.request('POST', '/indexes/m/search', { json: { filter: strFilter } }), 400, 'invalid_search_filter');
  });
});

describe('list entries', () => {
  test(`sort takes at most ${MAX_SORT_CRITERIA} criteria: 10,000 answer invalid_search_sort`, async () => {
    await expectRefused(await h.request('POST', '/indexes/m/search', { json: { sort: Array(10_000).fill('year:asc') } }), 400, 'invalid_search_sort');
    await expectRefused(await h.request('GET', `/indexes/m/search?sort=${Array(MAX_SORT_CRITERIA + 1).fill('year:asc').join(',')}`), 400, 'invalid_search_sort');
    const ok = await h.request('POST', '/indexes/m/search', { json: { sort: Array(MAX_SORT_CRITERIA).fill(0).map((_, i) => (i % 2 ? 'year:asc' : 'title:desc')) } });
    expect(ok.status, ok.text).toBe(200);
  });

  test(`ranking rules take at most ${MAX_RANKING_RULES} entries: 10,000 are refused at once, the most allowed still search`, async () => {
    const tasks = h.engine.getTasks({ limit: 0 }).total;
    const many = Array.from({ length: 10_000 }, (_, i) => `f${i}:asc`);
    await expectRefused(await h.request('PUT', '/indexes/m/settings/ranking-rules', { json: many }), 400, 'invalid_settings_ranking_rules');
    expect(h.engine.getTasks({ limit: 0 }).total).toBe(tasks);
    const most = ['words', 'typo', 'sort', ...Array.from({ length: MAX_RANKING_RULES - 3 }, (_, i) => `f${i}:asc`)];
    const accepted = await h.request('PUT', '/indexes/m/settings/ranking-rules', { json: most });
    expect((await h.wait(accepted.body.taskUid)).status).toBe('succeeded');
    const searched = await h.request('POST', '/indexes/m/search', { json: { q: 'alien', sort: ['year:desc'] } });
    expect(searched.status, searched.text).toBe(200);
    expect(searched.body.hits[0].year).toBe(2019);
    await h.wait((await h.request('DELETE', '/indexes/m/settings/ranking-rules')).body.taskUid);
  });

  test(`search lists take at most ${MAX_LIST_ENTRIES} entries`, async () => {
    const reply = await h.request('POST', '/indexes/m/search', { json: { attributesToRetrieve: Array(MAX_LIST_ENTRIES + 1).fill('title') } });
    await expectRefused(reply, 400, 'invalid_search_attributes_to_retrieve');
    expect(reply.body.message).toBe(`Invalid value at \`.attributesToRetrieve\`: expected at most ${MAX_LIST_ENTRIES} entries, but found ${MAX_LIST_ENTRIES + 1}.`);
  });
});

describe('string parameters', () => {
  test('a 1 MB highlightPreTag is refused; the longest allowed tag is served', async () => {
    const big = 'x'.repeat(1_000_000);
    for (const field of ['highlightPreTag', 'highlightPostTag', 'cropMarker']) {
      const code = `invalid_search_${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
      await expectRefused(await h.request('POST', '/indexes/m/search', { json: { q: 'alien', [field]: big } }), 400, code);
    }
    const tag = '<'.repeat(MAX_MARKER_LENGTH);
    const ok = await h.request('POST', '/indexes/m/search', { json: { q: 'alien', highlightPreTag: tag, attributesToHighlight: ['title'], limit: 1 } });
    expect(ok.status).toBe(200);
    expect(ok.body.hits[0]._formatted.title.startsWith(tag + 'alien')).toBe(true);
  });

  test('an index uid or a document id longer than any stored one is a 4xx, not a lookup that fails', async () => {
    const uid = 'x'.repeat(4302);
    const multi = await h.request('POST', '/multi-search', { json: { queries: [{ indexUid: uid, q: 'a', highlightPreTag: 'y'.repeat(4302) }] } });
    await expectRefused(multi, 400, 'invalid_index_uid');
    expect(multi.body.message.startsWith('Inside `.queries[0]`: ')).toBe(true);
    const federated = await h.request('POST', '/multi-search', { json: { federation: { facetsByIndex: { [uid]: ['year'] } }, queries: [{ indexUid: 'm' }] } });
    await expectRefused(federated, 400, 'invalid_multi_search_facets_by_index');
    await expectRefused(await h.request('GET', `/indexes/m/documents/${'d'.repeat(3000)}`), 404, 'document_not_found');
    expect(h.engine.getTasks({ limit: 0 }).total).toBeGreaterThan(0);
  });
});

test('a URL over the 16 KiB the HTTP parser takes answers 431 in the error format', async () => {
  const reply = await h.request('GET', `/indexes/m/search?q=${'é'.repeat(4302)}`);
  await expectRefused(reply, 431, 'bad_request');
});

describe('multi-search size', () => {
  test('more queries than --max-multi-search-queries answer bad_request', async () => {
    const queries = Array.from({ length: 3001 }, () => ({ indexUid: 'm', q: 'alien' }));
    const reply = await h.request('POST', '/multi-search', { json: { queries } });
    await expectRefused(reply, 400, 'bad_request');
    expect(reply.body.message).toMatch(/at most 3000 queries, but found 3001/);
  });

  test('a 3,000-query federated multi-search on the HTTP thread lets /health through while it runs', async () => {
    // federated: its searches are synchronous, so only the engine's yielding lets /health in (5.8 s blocked without it)
    const queries = Array.from({ length: 3000 }, (_, i) => ({ indexUid: 'm', q: `alien ${i % 50}` }));
    const order: string[] = [];
    const multi = h.request('POST', '/multi-search', { json: { queries, federation: { limit: 5 } } }).then((r) => {
      order.push('multi');
      return r;
    });
    // let the request reach the server and start searching
    await new Promise((resolve) => setTimeout(resolve, 150));
    const health = await h.request('GET', '/health');
    order.push('health');
    expect(health.status).toBe(200);
    const answered = await multi;
    expect(answered.status).toBe(200);
    expect(answered.body.hits).toHaveLength(5);
    expect(order).toEqual(['health', 'multi']);
  }, 60_000);
});

test('none of the above produced a 5xx', () => {
  expect(logged).toEqual([]);
});
