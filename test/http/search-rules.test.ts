/**
 * Dynamic search rules (`/dynamic-search-rules`, the `dynamicSearchRules` experimental feature),
 * through real HTTP: the routes with their bodies, tasks and error codes, the pins' effect on
 * search (conditions on the query words, an empty query, time windows; positions, precedence,
 * filters, pagination), and the rules kept by dumps and snapshots.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { importDump } from '../../src/engine/ops/dump/import.js';
import { importSnapshot } from '../../src/engine/ops/snapshot/snapshot.js';
import { Ops } from '../../src/engine/ops/service.js';
import { movies } from '../data.js';
import { startHarness, type Harness } from './harness.js';

const FILMS = movies().slice(0, 300);
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
  const settings = await h.request('PATCH', '/indexes/films/settings', { json: { filterableAttributes: ['genres', 'year'] } });
  await h.wait(settings.body.taskUid);
  const added = await h.request('POST', '/indexes/films/documents?primaryKey=id', { json: FILMS });
  expect((await h.wait(added.body.taskUid)).status).toBe('succeeded');
});
afterAll(async () => {
  await h.stop();
});

async function rule(uid: string, body: unknown) {
  const reply = await h.request('PATCH', `/dynamic-search-rules/${uid}`, { json: body });
  expect(reply.status).toBe(202);
  return h.wait(reply.body.taskUid);
}
const ids = async (search: Record<string, unknown>, index = 'films') =>
  (await h.request('POST', `/indexes/${index}/search`, { json: search })).body.hits.map((hit: { id: number }) => hit.id);

/** A film whose title has none of the words searched below. */
const unrelated = FILMS.find((f) => !/\b(love|the)\b/i.test(f.title) && f.genres.length > 0)!;
const another = FILMS.filter((f) => f.id !== unrelated.id && !/\blove\b/i.test(f.title))[5]!;

describe('the feature gate', () => {
  test('every route answers feature_not_enabled while the flag is off', async () => {
    for (const [method, path, json] of [
      ['POST', '/dynamic-search-rules', {}],
      ['DELETE', '/dynamic-search-rules', undefined],
      ['GET', '/dynamic-search-rules/promo', undefined],
      ['PATCH', '/dynamic-search-rules/promo', { actions: {} }],
      ['DELETE', '/dynamic-search-rules/promo', undefined],
    ] as const) {
      const reply = await h.request(method, path, json === undefined ? {} : { json });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        message: 'Using the `/dynamic-search-rules` routes requires enabling the `dynamic search rules` experimental feature. See https://github.com/orgs/meilisearch/discussions/884',
        code: 'feature_not_enabled',
        type: 'invalid_request',
        link: 'https://docs.meilisearch.com/errors#feature_not_enabled',
      });
    }
    expect((await h.request('PATCH', '/experimental-features', { json: { dynamicSearchRules: true } })).body.dynamicSearchRules).toBe(true);
  });
});

describe('rules', () => {
  test('PATCH creates a rule through a dsrUpdate task; GET reads it back', async () => {
    const reply = await h.request('PATCH', '/dynamic-search-rules/love-promo', {
      json: { description: 'Promote a film for love searches', conditions: { query: { words: 'Love' } }, actions: { pin: [{ indexUid: 'films', id: String(unrelated.id), position: 0 }] } },
    });
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({ taskUid: expect.any(Number), indexUid: null, status: 'enqueued', type: 'dsrUpdate', enqueuedAt: expect.any(String) });
    expect(await h.wait(reply.body.taskUid)).toMatchObject({ status: 'succeeded', type: 'dsrUpdate', indexUid: null });
    const got = await h.request('GET', '/dynamic-search-rules/love-promo');
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      uid: 'love-promo',
      description: 'Promote a film for love searches',
      active: true,
      conditions: { query: { words: 'Love' } },
      actions: { pin: [{ indexUid: 'films', id: String(unrelated.id), position: 0 }] },
      lastUpdatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  test('a matching query gets the pinned document first, once; other queries and other indexes do not', async () => {
    const pinned = await ids({ q: 'love', limit: 5 });
    expect(pinned[0]).toBe(unrelated.id);
    expect(pinned.filter((id: number) => id === unrelated.id)).toHaveLength(1);
    expect((await ids({ q: 'love story', limit: 5 }))[0]).toBe(unrelated.id);
    expect(await ids({ q: 'the', limit: 50 })).not.toContain(unrelated.id);
    // the pin needs the document to pass the filter: a filter that hides it hides it
    const genre = unrelated.genres[0]!;
    expect((await ids({ q: 'love', filter: `genres = "${genre}"`, limit: 3 }))[0]).toBe(unrelated.id);
    expect(await ids({ q: 'love', filter: `NOT genres = "${genre}"`, limit: 300 })).not.toContain(unrelated.id);
    // counted among the hits
    const all = await h.request('POST', '/indexes/films/search', { json: { q: 'love', limit: 0 } });
    const organic = FILMS.filter((f) => /\blove/i.test(`${f.title} ${f.extract ?? ''} ${f.cast.join(' ')} ${f.genres.join(' ')}`)).length;
    expect(all.body.estimatedTotalHits).toBeGreaterThanOrEqual(Math.min(organic, 1) + 1);
  });

  test('positions, pagination, precedence, empty queries, time windows and inactive rules', async () => {
    await rule('love-promo', { actions: { pin: [{ id: String(unrelated.id), position: 2 }] } });
    const page = await ids({ q: 'love', limit: 5 });
    expect(page[2]).toBe(unrelated.id);
    expect(await ids({ q: 'love', offset: 2, limit: 1 })).toEqual([unrelated.id]);
    // two rules pin at the same position: the lower precedence comes first
    await rule('love-second', { precedence: 5, conditions: { query: { words: 'love' } }, actions: { pin: [{ id: String(another.id), position: 2 }] } });
    await rule('love-promo', { precedence: 1 });
    expect((await ids({ q: 'love', limit: 5 })).slice(2, 4)).toEqual([unrelated.id, another.id]);
    await rule('love-promo', { precedence: 9 });
    expect((await ids({ q: 'love', limit: 5 })).slice(2, 4)).toEqual([another.id, unrelated.id]);
    // the browse state (empty query)
    await rule('browse', { conditions: { query: { isEmpty: true } }, actions: { pin: [{ id: String(another.id), position: 0 }] } });
    expect((await ids({ q: '', limit: 3 }))[0]).toBe(another.id);
    expect(await ids({ q: 'qqqzzz', limit: 3 })).toEqual([]);
    // a window in the past, then an inactive rule: no pin
    await rule('browse', { conditions: { query: { isEmpty: true }, time: { start: '2020-01-01T00:00:00Z', end: '2020-12-31T23:59:59Z' } } });
    expect((await ids({ q: '', limit: 3 }))[0]).not.toBe(another.id);
    await rule('browse', { conditions: { query: { isEmpty: true }, time: { start: '2020-01-01T00:00:00Z' } }, active: false });
    expect((await ids({ q: '', limit: 3 }))[0]).not.toBe(another.id);
    await rule('browse', { active: true });
    expect((await ids({ q: '', limit: 3 }))[0]).toBe(another.id);
  });

  test('POST /dynamic-search-rules lists the rules, most recently updated first, with filters and pagination', async () => {
    const list = await h.request('POST', '/dynamic-search-rules', { json: {} });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ offset: 0, limit: 20, total: 3 });
    expect(list.body.results.map((r: { uid: string }) => r.uid)).toEqual(['browse', 'love-promo', 'love-second']);
    const page = await h.request('POST', '/dynamic-search-rules', { json: { offset: 1, limit: 1 } });
    expect(page.body).toMatchObject({ offset: 1, limit: 1, total: 3, results: [{ uid: 'love-promo' }] });
    const found = await h.request('POST', '/dynamic-search-rules', { json: { filter: { query: 'promote' } } });
    expect(found.body.results.map((r: { uid: string }) => r.uid)).toEqual(['love-promo']);
    await rule('love-second', { active: false });
    const inactive = await h.request('POST', '/dynamic-search-rules', { json: { filter: { active: false } } });
    expect(inactive.body).toMatchObject({ total: 1, results: [{ uid: 'love-second', active: false }] });
  });

  test('errors have the reference codes', async () => {
    const cases: Array<[string, string, unknown, number, string]> = [
      ['GET', '/dynamic-search-rules/nope', undefined, 404, 'dynamic_search_rule_not_found'],
      ['PATCH', '/dynamic-search-rules/bad%20uid', { actions: {} }, 400, 'invalid_dynamic_search_rule_uid'],
      ['PATCH', '/dynamic-search-rules/r', { conditions: { query: { isEmpty: true, words: 'x' } } }, 400, 'invalid_dynamic_search_rule_conditions'],
      ['PATCH', '/dynamic-search-rules/r', { conditions: { time: { start: 'yesterday' } } }, 400, 'invalid_dynamic_search_rule_conditions'],
      ['PATCH', '/dynamic-search-rules/r', { actions: { scale: [{ weight: 2 }] } }, 400, 'invalid_dynamic_search_rule_actions'],
      ['PATCH', '/dynamic-search-rules/r', { actions: { pin: [{ position: 1 }] } }, 400, 'invalid_dynamic_search_rule_actions'],
      ['PATCH', '/dynamic-search-rules/r', { precedence: -1 }, 400, 'invalid_dynamic_search_rule_precedence'],
      ['PATCH', '/dynamic-search-rules/r', { active: 'yes' }, 400, 'invalid_dynamic_search_rule_active'],
      ['PATCH', '/dynamic-search-rules/r', { priority: 1 }, 400, 'bad_request'],
      ['POST', '/dynamic-search-rules', { limit: -1 }, 400, 'invalid_dynamic_search_rule_limit'],
      ['POST', '/dynamic-search-rules', { filter: { active: 'no' } }, 400, 'invalid_dynamic_search_rule_filter_active'],
    ];
    for (const [method, path, json, status, code] of cases) {
      const reply = await h.request(method, path, json === undefined ? {} : { json });
      expect([path, reply.status, reply.body.code]).toEqual([path, status, code]);
      expect(reply.body.link).toBe(`https://docs.meilisearch.com/errors#${code}`);
    }
    // deleting a rule that does not exist fails its task
    const gone = await h.request('DELETE', '/dynamic-search-rules/nope');
    expect(gone.status).toBe(202);
    expect(await h.wait(gone.body.taskUid)).toMatchObject({ status: 'failed', type: 'dsrUpdate', error: { code: 'dynamic_search_rule_not_found' } });
    expect((await h.request('GET', '/tasks?types=dsrUpdate,dsrClear')).status).toBe(200);
  });

  test('turning the feature off stops the pins but keeps the rules', async () => {
    await h.request('PATCH', '/experimental-features', { json: { dynamicSearchRules: false } });
    expect((await ids({ q: '', limit: 3 }))[0]).not.toBe(another.id);
    await h.request('PATCH', '/experimental-features', { json: { dynamicSearchRules: true } });
    expect((await ids({ q: '', limit: 3 }))[0]).toBe(another.id);
  });

  test('DELETE /dynamic-search-rules removes every rule through a dsrClear task', async () => {
    const reply = await h.request('DELETE', '/dynamic-search-rules');
    expect(reply.status).toBe(202);
    expect(reply.body).toMatchObject({ indexUid: null, status: 'enqueued', type: 'dsrClear' });
    expect(await h.wait(reply.body.taskUid)).toMatchObject({ status: 'succeeded', type: 'dsrClear' });
    expect((await h.request('POST', '/dynamic-search-rules', { json: {} })).body).toEqual({ results: [], offset: 0, limit: 20, total: 0 });
    expect((await ids({ q: '', limit: 3 }))[0]).not.toBe(another.id);
  });
});

test('rules come back from a dump and from a snapshot; DELETE removes them (dsrClear)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'search-rules-persist-'));
  const engine = await Engine.open({ dbPath: join(root, 'source.ms'), logLevel: 'off' });
  const ops = Ops.install(engine, { dumpDir: join(root, 'dumps'), snapshotDir: join(root, 'snapshots') });
  try {
    engine.features.update({ dynamicSearchRules: true });
    await engine.waitForTask((await engine.addDocuments('m', FILMS.slice(0, 20), { primaryKey: 'id' })).taskUid);
    await engine.waitForTask((await engine.updateSearchRule('top', { conditions: { query: { isEmpty: true } }, actions: { pin: [{ id: String(FILMS[7]!.id), position: 0 }] } })).taskUid);
    expect((await engine.search('m', { q: '' })).hits[0]).toMatchObject({ id: FILMS[7]!.id });
    expect((await engine.waitForTask((await ops.createDump()).taskUid)).status).toBe('succeeded');
    expect((await engine.waitForTask((await ops.createSnapshot()).taskUid)).status).toBe('succeeded');
    const clear = await engine.waitForTask((await engine.clearSearchRules()).taskUid);
    expect(clear).toMatchObject({ status: 'succeeded', type: 'dsrClear' });
    expect(engine.listSearchRules({}).total).toBe(0);
  } finally {
    await engine.close();
  }
  const fromDump = join(root, 'from-dump.ms');
  await importDump(join(root, 'dumps', readdirSync(join(root, 'dumps'))[0]!), fromDump);
  const fromSnapshot = join(root, 'from-snapshot.ms');
  await importSnapshot(join(root, 'snapshots', readdirSync(join(root, 'snapshots'))[0]!), fromSnapshot);
  for (const dbPath of [fromDump, fromSnapshot]) {
    const copy = await Engine.open({ dbPath, logLevel: 'off' });
    try {
      expect(copy.features.enabled('dynamicSearchRules')).toBe(true);
      expect(copy.getSearchRule('top')).toMatchObject({ uid: 'top', active: true, actions: { pin: [{ position: 0 }] } });
      expect((await copy.search('m', { q: '' })).hits[0]).toMatchObject({ id: FILMS[7]!.id });
    } finally {
      await copy.close();
    }
  }
});
