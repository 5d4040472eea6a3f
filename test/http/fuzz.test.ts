/**
 * Property: whatever body, query string and headers a client throws at any route, the server
 * answers without a 5xx, every error has the `{message, code, type, link}` shape, and a refused
 * request changes nothing (no task enqueued, documents and settings as they were).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { SETTING_ROUTES, kebabCase } from '../../src/http/routes/settings.js';
import { expectErrorShape, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  const added = await h.request('POST', '/indexes/seed/documents', {
    json: [
      { id: 1, title: 'Alien', tags: ['space'] },
      { id: 2, title: 'Heat', year: 1995 },
    ],
  });
  await h.wait(added.body.taskUid);
  const configured = await h.request('PATCH', '/indexes/seed/settings', { json: { stopWords: ['the'] } });
  await h.wait(configured.body.taskUid);
});
afterAll(async () => {
  await h.stop();
});

const ROUTES: Array<[string, string]> = [
  ['GET', '/health'],
  ['GET', '/version'],
  ['GET', '/stats'],
  ['GET', '/indexes'],
  ['POST', '/indexes'],
  ['GET', '/indexes/:i'],
  ['PATCH', '/indexes/:i'],
  ['DELETE', '/indexes/:i'],
  ['GET', '/indexes/:i/stats'],
  ['POST', '/swap-indexes'],
  ['GET', '/indexes/:i/documents'],
  ['POST', '/indexes/:i/documents'],
  ['PUT', '/indexes/:i/documents'],
  ['DELETE', '/indexes/:i/documents'],
  ['POST', '/indexes/:i/documents/fetch'],
  ['POST', '/indexes/:i/documents/delete-batch'],
  ['POST', '/indexes/:i/documents/delete'],
  ['GET', '/indexes/:i/documents/:d'],
  ['DELETE', '/indexes/:i/documents/:d'],
  ['GET', '/indexes/:i/settings'],
  ['PATCH', '/indexes/:i/settings'],
  ['DELETE', '/indexes/:i/settings'],
  ...SETTING_ROUTES.flatMap(([key, method]): Array<[string, string]> => [
    ['GET', `/indexes/:i/settings/${kebabCase(key)}`],
    [method, `/indexes/:i/settings/${kebabCase(key)}`],
    ['DELETE', `/indexes/:i/settings/${kebabCase(key)}`],
  ]),
  ['GET', '/indexes/:i/search'],
  ['POST', '/indexes/:i/search'],
  ['POST', '/multi-search'],
  ['POST', '/indexes/:i/facet-search'],
  ['GET', '/indexes/:i/similar'],
  ['POST', '/indexes/:i/similar'],
  ['GET', '/tasks'],
  ['GET', '/tasks/:t'],
  ['POST', '/tasks/cancel'],
  ['DELETE', '/tasks'],
  ['GET', '/batches'],
  ['GET', '/batches/:t'],
  ['POST', '/dynamic-search-rules'],
  ['DELETE', '/dynamic-search-rules'],
  ['GET', '/dynamic-search-rules/:d'],
  ['PATCH', '/dynamic-search-rules/:d'],
  ['DELETE', '/dynamic-search-rules/:d'],
  ['GET', '/nowhere/:i'],
];

const PARAM_NAMES = [
  'offset', 'limit', 'fields', 'filter', 'retrieveVectors', 'ids', 'primaryKey', 'csvDelimiter', 'uids', 'batchUids',
  'statuses', 'types', 'indexUids', 'canceledBy', 'from', 'reverse', 'afterEnqueuedAt', 'beforeFinishedAt', 'q', 'sort',
  'showInternalDatabaseSizes', 'sizeFormat',
];
const FIELD_NAMES = ['uid', 'primaryKey', 'indexes', 'filter', 'limit', 'offset', 'fields', 'ids', 'stopWords', 'rankingRules', 'q'];

/** Strings at the lengths where limits sit (index uids, document ids, LMDB keys, URLs). */
const longText = fc.tuple(fc.constantFrom(401, 512, 2000, 4302), fc.constantFrom('x', 'é', '-', '*', ' ')).map(([n, unit]) => unit.repeat(n));
const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), longText);
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.dictionary(fc.constantFrom(...FIELD_NAMES), scalar, { maxKeys: 3 }));
const bodyText = fc.oneof(
  fc.constant(undefined),
  fc.json({ maxDepth: 3 }),
  fc.string({ maxLength: 40 }),
  fc.dictionary(fc.oneof(fc.constantFrom(...FIELD_NAMES), fc.string({ maxLength: 6 })), value, { maxKeys: 4 }).map((o) => JSON.stringify(o)),
  fc.array(fc.dictionary(fc.constantFrom('id', 'title', 'x'), scalar, { maxKeys: 3 }), { maxLength: 3 }).map((a) => JSON.stringify(a)),
  fc.constantFrom('[{"id":', '{"uid":"seed"', 'id,title\n9,x\n', '{"id":9}\n{', '\u0000', '[]', '{}', 'null'),
);
const paramValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.nat().map(String),
  fc.integer({ min: -5, max: 5 }).map(String),
  fc.constantFrom('*', ',', 'true', 'yes', '2021-12-03', '2021-13-45T99:00:00Z', 'succeeded,*', 'seed', 'h%C3%A9'),
  longText,
);
const queryString = fc.oneof(
  fc.constant(''),
  fc.dictionary(fc.oneof(fc.constantFrom(...PARAM_NAMES), fc.string({ maxLength: 6 })), paramValue, { maxKeys: 4 }).map(
    (q) => new URLSearchParams(q).toString(),
  ),
  fc.string({ maxLength: 20 }).map((s) => s.replace(/[#\s]/g, '')),
  fc.constantFrom('%zz=1', 'limit=%', '&&=&', 'a[b]=c', 'limit=1&limit=x'),
);
const segment = (known: string[]) =>
  fc.oneof(fc.constantFrom(...known), fc.string({ maxLength: 10 }).map(encodeURIComponent), fc.constantFrom('%zz', 'a%2Fb', '..', 'x'.repeat(600)));
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer', 'content-type']);
const headers = fc.dictionary(
  fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/).filter((n) => !FORBIDDEN_HEADERS.has(n)),
  fc.stringMatching(/^[\x21-\x7e]{0,20}$/),
  { maxKeys: 3 },
);
const contentType = fc.oneof(
  fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/x-ndjson', 'text/csv', 'text/plain', 'multipart/form-data', ''),
  fc.constant(undefined),
  fc.stringMatching(/^[\x21-\x7e]{1,20}$/),
);

const request = fc.record({
  route: fc.constantFrom(...ROUTES),
  index: segment(['seed', 'seed', 'ghost']),
  doc: segment(['1', '2', '404']),
  task: segment(['0', '1', '99999', '-1']),
  query: queryString,
  body: bodyText,
  contentType,
  headers,
});

function state() {
  const tasks = h.engine.getTasks({ limit: 0 }).total;
  const exists = h.engine.listIndexes({ limit: 1000 }).results.some((i) => i.uid === 'seed');
  return {
    tasks,
    indexes: h.engine.listIndexes({ limit: 1000 }).results.map((i) => [i.uid, i.primaryKey]),
    documents: exists ? h.engine.getDocuments('seed', { limit: 1000 }) : null,
    settings: exists ? h.engine.getSettings('seed') : null,
  };
}

test('random bodies, query strings and headers on every route: no 5xx, well-formed errors, refused requests change nothing', async () => {
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const [method, template] = r.route;
      const path = template.replace(':i', r.index).replace(':d', r.doc).replace(':t', r.task) + (r.query ? `?${r.query}` : '');
      const before = state();
      const reply = await h.request(method, path, {
        // fetch cannot send a body with GET.
        ...(r.body !== undefined && method !== 'GET' ? { raw: r.body } : {}),
        contentType: r.contentType === undefined ? null : r.contentType,
        headers: r.headers,
      });
      expect(reply.status, `${method} ${path} → ${reply.text}`).toBeLessThan(500);
      if (reply.status >= 400) {
        refused++;
        // 405 (a known path under another method, e.g. `PATCH /indexes/` → `/indexes`) has an empty body, as the reference's
        if (reply.status === 405) expect([reply.text, reply.headers.get('allow')]).toEqual(['', expect.stringMatching(/^[A-Z, ]+$/)]);
        else expectErrorShape(reply.body);
        expect(state()).toEqual(before);
      } else if (reply.body && typeof reply.body.taskUid === 'number') {
        // Let an accepted write finish so that the next request starts from a quiet state.
        await h.wait(reply.body.taskUid);
      }
    }),
    { numRuns: 400, seed: Number(process.env.FUZZ_SEED ?? 0x5ea4c4) },
  );
  // The generators must actually exercise the error paths, not only the happy ones.
  expect(refused).toBeGreaterThan(200);
  expect((await h.request('GET', '/health')).status).toBe(200);
}, 120_000);

// --- search bodies: every string parameter, multi-search and federation, lengths up to the payload limit ---

const SMALL_LIMIT = 1024 * 1024;
const LENGTHS = [0, 1, 7, 400, 401, 512, 4302, 65_536, SMALL_LIMIT / 2, SMALL_LIMIT + 1];
/** A string of one of the interesting lengths, of characters that exercise parsers and tokenizers. */
const longString = fc.tuple(fc.constantFrom(...LENGTHS), fc.constantFrom('x', 'é', '"', '\\\\', '(', ' a', '-', '*', '\u0000', '🦀', 'a:asc,', '_geo')).map(([n, unit]) =>
  unit.repeat(Math.max(0, Math.ceil(n / unit.length))).slice(0, n),
);
const str = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('title', '*', 'year', 'seed', 'movies'), longString);
const SEARCH_STRING_PARAMS = ['q', 'filter', 'distinct', 'highlightPreTag', 'highlightPostTag', 'cropMarker', 'matchingStrategy'];
const SEARCH_LIST_PARAMS = ['attributesToRetrieve', 'attributesToHighlight', 'attributesToCrop', 'facets', 'sort', 'attributesToSearchOn', 'locales'];
const searchBody = fc.record(
  {
    ...Object.fromEntries(SEARCH_STRING_PARAMS.map((p) => [p, str])),
    ...Object.fromEntries(SEARCH_LIST_PARAMS.map((p) => [p, fc.array(str, { maxLength: 3 })])),
    hybrid: fc.record({ embedder: str, semanticRatio: fc.double() }, { requiredKeys: [] }),
    limit: fc.nat(),
    offset: fc.nat(),
    cropLength: fc.nat(),
  },
  { requiredKeys: [] },
);
const query = fc.tuple(fc.oneof(str, fc.constant('seed')), searchBody).map(([indexUid, body]) => ({ indexUid, ...body }));
const federation = fc.record(
  {
    limit: fc.nat(),
    offset: fc.nat(),
    facetsByIndex: fc.dictionary(fc.oneof(str, fc.constant('seed')), fc.array(str, { maxLength: 3 }), { maxKeys: 2 }),
    mergeFacets: fc.record({ maxValuesPerFacet: fc.nat() }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const searchRequest = fc.oneof(
  fc.record({ route: fc.constant('multi'), body: fc.record({ queries: fc.array(query, { maxLength: 3 }) }) }),
  fc.record({ route: fc.constant('multi'), body: fc.record({ queries: fc.array(query, { maxLength: 3 }), federation }) }),
  fc.record({ route: fc.constant('search'), body: searchBody }),
  fc.record({ route: fc.constant('facet'), body: fc.record({ facetName: str, facetQuery: str, q: str, filter: str }, { requiredKeys: [] }) }),
  fc.record({ route: fc.constant('similar'), body: fc.record({ id: str, embedder: str, filter: str }, { requiredKeys: [] }) }),
  fc.record({ route: fc.constant('get'), body: fc.dictionary(fc.constantFrom(...SEARCH_STRING_PARAMS, ...SEARCH_LIST_PARAMS), str.filter((s) => s.length <= 4302), { maxKeys: 3 }) }),
);

test('search, multi-search and federation with any string parameter up to the payload limit: no 5xx, nothing logged', async () => {
  const logged: string[] = [];
  const s = await startHarness({ payloadSizeLimit: SMALL_LIMIT, logServerError: (line) => logged.push(line) });
  try {
    await s.wait((await s.request('POST', '/indexes/seed/documents', { json: [{ id: 1, title: 'Alien', year: 1979 }] })).body.taskUid);
    await s.wait((await s.request('PATCH', '/indexes/seed/settings', { json: { filterableAttributes: ['year', 'title'], sortableAttributes: ['year'] } })).body.taskUid);
    let tooLarge = 0;
    await fc.assert(
      fc.asyncProperty(searchRequest, async ({ route, body }) => {
        const reply =
          route === 'multi'
            ? await s.request('POST', '/multi-search', { json: body })
            : route === 'search'
              ? await s.request('POST', '/indexes/seed/search', { json: body })
              : route === 'facet'
                ? await s.request('POST', '/indexes/seed/facet-search', { json: body })
                : route === 'similar'
                  ? await s.request('POST', '/indexes/seed/similar', { json: body })
                  : await s.request('GET', `/indexes/seed/search?${new URLSearchParams(body as Record<string, string>)}`);
        expect(reply.status, `${route} ${JSON.stringify(body).slice(0, 400)} → ${reply.text.slice(0, 300)}`).toBeLessThan(500);
        if (reply.status === 413) tooLarge++;
        if (reply.status >= 400) expectErrorShape(reply.body);
      }),
      { numRuns: 250, seed: Number(process.env.FUZZ_SEED ?? 0x5ea4c5) },
    );
    expect(tooLarge).toBeGreaterThan(0);
    expect(logged).toEqual([]);
    expect((await s.request('GET', '/health')).status).toBe(200);
  } finally {
    await s.stop();
  }
}, 240_000);
