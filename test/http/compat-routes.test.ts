/**
 * Routes and parameters of the reference added for compatibility, through real HTTP: index rename
 * (PATCH uid, swap with rename), `customMetadata` on writes, `skipCreation`, `sort` on the
 * documents routes, `GET /tasks/:uid/documents`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { movies } from '../data.js';
import { expectErrorShape, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.stop();
});

async function accepted(method: string, path: string, json?: unknown) {
  const reply = await h.request(method, path, json === undefined ? {} : { json });
  expect(reply.status, reply.text).toBe(202);
  return reply.body as { taskUid: number; customMetadata?: string };
}

async function done(method: string, path: string, json?: unknown) {
  return h.wait((await accepted(method, path, json)).taskUid);
}

describe('index rename', () => {
  test('PATCH /indexes/:uid with uid renames the index, with oldIndexUid/newIndexUid details', async () => {
    await done('POST', '/indexes/old-name/documents', [{ id: 1, title: 'kept' }]);
    const task = await done('PATCH', '/indexes/old-name', { uid: 'new-name' });
    expect(task).toMatchObject({ status: 'succeeded', type: 'indexUpdate', indexUid: 'old-name' });
    expect(task.details).toEqual({ primaryKey: null, oldIndexUid: 'old-name', newIndexUid: 'new-name' });
    expect((await h.request('GET', '/indexes/old-name')).status).toBe(404);
    expect((await h.request('GET', '/indexes/new-name/documents/1')).body).toEqual({ id: 1, title: 'kept' });
    // earlier tasks follow the index to its new uid, as on a swap
    const moved = await h.request('GET', '/tasks?indexUids=new-name&types=documentAdditionOrUpdate');
    expect(moved.body.results.map((t: { indexUid: string }) => t.indexUid)).toEqual(['new-name']);
    expect((await h.request('GET', '/tasks?indexUids=old-name&types=documentAdditionOrUpdate')).body.total).toBe(0);
  });

  test('a swap exchanges the uids of the earlier tasks of both indexes', async () => {
    await done('POST', '/indexes/left/documents', [{ id: 1 }]);
    await done('POST', '/indexes/right/documents', [{ id: 2 }, { id: 3 }]);
    await done('POST', '/swap-indexes', [{ indexes: ['left', 'right'] }]);
    const additions = async (uid: string) =>
      (await h.request('GET', `/tasks?indexUids=${uid}&types=documentAdditionOrUpdate`)).body.results.map((t: { details: { receivedDocuments: number } }) => t.details.receivedDocuments);
    expect(await additions('left')).toEqual([2]);
    expect(await additions('right')).toEqual([1]);
    expect((await h.request('GET', '/indexes/left/documents')).body.total).toBe(2);
  });

  test('renaming onto an existing index fails the task with index_already_exists', async () => {
    await done('POST', '/indexes', { uid: 'taken' });
    const task = await done('PATCH', '/indexes/new-name', { uid: 'taken' });
    expect(task.status).toBe('failed');
    expect((task.error as { code: string }).code).toBe('index_already_exists');
    expect((await h.request('GET', '/indexes/new-name')).status).toBe(200);
  });

  test('POST /swap-indexes with rename: true renames; the target must not exist', async () => {
    const task = await done('POST', '/swap-indexes', [{ indexes: ['new-name', 'renamed-again'], rename: true }]);
    expect(task.status).toBe('succeeded');
    expect(task.details).toEqual({ swaps: [{ indexes: ['new-name', 'renamed-again'], rename: true }] });
    expect((await h.request('GET', '/indexes/renamed-again/documents/1')).status).toBe(200);
    expect((await h.request('GET', '/indexes/new-name')).status).toBe(404);

    const clash = await done('POST', '/swap-indexes', [{ indexes: ['renamed-again', 'taken'], rename: true }]);
    expect(clash.status).toBe('failed');
    expect((clash.error as { code: string; message: string }).code).toBe('index_already_exists');
    const missing = await done('POST', '/swap-indexes', [{ indexes: ['renamed-again', 'nowhere'] }]);
    expect((missing.error as { code: string; message: string }).message).toBe('Index `nowhere` not found.');

    const badRename = await h.request('POST', '/swap-indexes', { json: [{ indexes: ['a', 'b'], rename: 'yes' }] });
    expect(badRename.status).toBe(400);
    expectErrorShape(badRename.body, 'invalid_swap_rename');
  });
});

describe('customMetadata', () => {
  test('every write route carries it onto the summarized task and the task object', async () => {
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/indexes?customMetadata=create', { uid: 'meta' }],
      ['POST', '/indexes/meta/documents?customMetadata=add', [{ id: 1 }, { id: 2 }, { id: 3 }]],
      ['PUT', '/indexes/meta/documents?customMetadata=update', [{ id: 1, a: 1 }]],
      ['DELETE', '/indexes/meta/documents/1?customMetadata=delete-one', undefined],
      ['POST', '/indexes/meta/documents/delete-batch?customMetadata=delete-batch', [2]],
      ['POST', '/indexes/meta/documents/delete?customMetadata=delete-filter', { filter: 'id = 3' }],
      ['DELETE', '/indexes/meta/documents?customMetadata=clear', undefined],
      ['PATCH', '/indexes/meta/settings?customMetadata=settings', { rankingRules: ['words', 'typo'] }],
      ['PUT', '/indexes/meta/settings/stop-words?customMetadata=stop-words', ['the']],
      ['DELETE', '/indexes/meta/settings/stop-words?customMetadata=reset-stop-words', undefined],
      ['DELETE', '/indexes/meta/settings?customMetadata=reset-settings', undefined],
      ['PATCH', '/indexes/meta?customMetadata=update-index', { primaryKey: 'id' }],
      ['DELETE', '/indexes/meta?customMetadata=delete-index', undefined],
    ];
    for (const [method, path, json] of writes) {
      if (path.includes('delete-filter')) await h.wait((await h.engine.updateSettings('meta', { filterableAttributes: ['id'] })).taskUid);
      const expected = new URL(path, 'http://x').searchParams.get('customMetadata');
      const summary = await accepted(method, path, json);
      expect(summary.customMetadata, path).toBe(expected);
      const task = await h.wait(summary.taskUid);
      expect(task.customMetadata, path).toBe(expected);
    }
    const listed = await h.request('GET', '/tasks?indexUids=meta&limit=1');
    expect(listed.body.results[0].customMetadata).toBe('delete-index');
    const plain = await accepted('POST', '/indexes', { uid: 'no-meta' });
    expect('customMetadata' in plain).toBe(false);
  });
});

describe('documents', () => {
  beforeAll(async () => {
    await done('POST', '/indexes/films/documents', movies().slice(0, 30));
    await done('PATCH', '/indexes/films/settings', { sortableAttributes: ['year', 'title'] });
  });

  test('skipCreation=true updates existing documents and creates none', async () => {
    const before = (await h.request('GET', '/indexes/films/documents?limit=0')).body.total;
    const first = movies()[0]!;
    const task = await done('PUT', '/indexes/films/documents?skipCreation=true', [
      { id: first.id, note: 'updated' },
      { id: 999_999, title: 'must not exist' },
    ]);
    expect(task.details).toEqual({ receivedDocuments: 2, indexedDocuments: 1 });
    expect((await h.request('GET', `/indexes/films/documents/${first.id}`)).body).toMatchObject({ title: first.title, note: 'updated' });
    expect((await h.request('GET', '/indexes/films/documents/999999')).status).toBe(404);
    expect((await h.request('GET', '/indexes/films/documents?limit=0')).body.total).toBe(before);
    const bad = await h.request('POST', '/indexes/films/documents?skipCreation=maybe', { json: [] });
    expect(bad.status).toBe(400);
    expectErrorShape(bad.body, 'invalid_skip_creation');
  });

  test('sort orders GET /documents and POST /documents/fetch, with pagination', async () => {
    const want = movies()
      .slice(0, 30)
      .sort((a, b) => b.year - a.year || a.id - b.id);
    const got = await h.request('GET', '/indexes/films/documents?sort=year:desc&limit=5&offset=2&fields=id,year');
    expect(got.status, got.text).toBe(200);
    expect(got.body.results.map((d: { year: number }) => d.year)).toEqual(want.slice(2, 7).map((m) => m.year));
    expect(got.body.total).toBe(30);
    const fetched = await h.request('POST', '/indexes/films/documents/fetch', { json: { sort: ['title:asc'], limit: 3, fields: ['title'] } });
    expect(fetched.status, fetched.text).toBe(200);
    const titles = fetched.body.results.map((d: { title: string }) => d.title);
    expect(titles).toEqual([...titles].sort((a: string, b: string) => a.localeCompare(b)));
  });

  test('sorting on an attribute that is not sortable is invalid_document_sort', async () => {
    const reply = await h.request('GET', '/indexes/films/documents?sort=cast:asc');
    expect(reply.status).toBe(400);
    expectErrorShape(reply.body, 'invalid_document_sort');
    expect(reply.body.message).toBe('Attribute `cast` is not sortable. Available sortable attributes are: `title, year`.');
    const body = await h.request('POST', '/indexes/films/documents/fetch', { json: { sort: 'year:asc' } });
    expectErrorShape(body.body, 'invalid_document_sort');
  });
});

describe('GET /tasks/:uid/documents', () => {
  test('needs getTaskDocumentsRoute, then gives the payload of an enqueued task as NDJSON', async () => {
    await h.engine.scheduler.stop();
    try {
      const docs = [{ id: 'a', n: 1 }, { id: 'b', n: 2 }];
      const { taskUid } = await accepted('POST', '/indexes/pending/documents', docs);
      const refused = await h.request('GET', `/tasks/${taskUid}/documents`);
      expect(refused.status).toBe(400);
      expectErrorShape(refused.body, 'feature_not_enabled');

      await h.request('PATCH', '/experimental-features', { json: { getTaskDocumentsRoute: true } });
      const reply = await h.request('GET', `/tasks/${taskUid}/documents`);
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      expect(reply.text.trim().split('\n').map((line) => JSON.parse(line))).toEqual(docs);

      const missing = await h.request('GET', '/tasks/99999/documents');
      expectErrorShape(missing.body, 'task_not_found');
    } finally {
      h.engine.scheduler.start();
    }
    const finished = (await h.request('GET', '/tasks?indexUids=pending')).body.results[0].uid;
    await h.wait(finished);
    const gone = await h.request('GET', `/tasks/${finished}/documents`);
    expect(gone.status).toBe(404);
    expectErrorShape(gone.body, 'task_file_not_found');
    const notDocuments = await h.request('GET', '/tasks/0/documents');
    expect(notDocuments.status).toBe(404);
  });
});

describe('POST /indexes/:uid/fields', () => {
  beforeAll(async () => {
    await done('POST', '/indexes/catalog/documents', [
      { id: 1, title: 'Dune', genre: 'sf', release_date: '1965', release_year: 1965 },
      { id: 2, title: 'Emma', genre: 'romance', release_date: '1815', release_year: 1815 },
    ]);
    const settings = await h.engine.updateSettings('catalog', {
      searchableAttributes: ['title'],
      filterableAttributes: [{ attributePatterns: ['genre'], features: { facetSearch: true, filter: { equality: true, comparison: false } } }],
      sortableAttributes: ['release_year'],
      rankingRules: ['words', 'release_year:desc'],
      distinctAttribute: 'title',
    });
    await h.wait(settings.taskUid);
  });

  test('lists every field with the reference shape, paginated', async () => {
    const reply = await h.request('POST', '/indexes/catalog/fields', { json: {} });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ offset: 0, limit: 20, total: 5 });
    expect(reply.body.results.map((f: { name: string }) => f.name)).toEqual(['genre', 'id', 'release_date', 'release_year', 'title']);
    const genre = reply.body.results[0];
    expect(genre).toEqual({
      name: 'genre',
      displayed: { enabled: true },
      searchable: { enabled: false },
      sortable: { enabled: false },
      distinct: { enabled: false },
      rankingRule: { enabled: false, order: null },
      filterable: { enabled: true, sortBy: 'alpha', facetSearch: true, equality: true, comparison: false },
      localized: { locales: [] },
    });
    const year = reply.body.results[3];
    expect(year).toMatchObject({ sortable: { enabled: true }, rankingRule: { enabled: true, order: 'desc' } });
    expect(reply.body.results[4]).toMatchObject({ name: 'title', searchable: { enabled: true }, distinct: { enabled: true } });

    const page = await h.request('POST', '/indexes/catalog/fields', { json: { offset: 1, limit: 2 } });
    expect(page.body).toMatchObject({ offset: 1, limit: 2, total: 5 });
    expect(page.body.results.map((f: { name: string }) => f.name)).toEqual(['id', 'release_date']);
  });

  test('filters by name patterns and by properties, ANDed', async () => {
    const byPattern = await h.request('POST', '/indexes/catalog/fields', { json: { filter: { attributePatterns: ['release*'] } } });
    expect(byPattern.body.results.map((f: { name: string }) => f.name)).toEqual(['release_date', 'release_year']);
    const both = await h.request('POST', '/indexes/catalog/fields', { json: { filter: { attributePatterns: ['release*'], sortable: true } } });
    expect(both.body.results.map((f: { name: string }) => f.name)).toEqual(['release_year']);
    expect(both.body.total).toBe(1);
    const notSearchable = await h.request('POST', '/indexes/catalog/fields', { json: { filter: { searchable: false, filterable: false } } });
    expect(notSearchable.body.results.map((f: { name: string }) => f.name)).toEqual(['id', 'release_date', 'release_year']);
  });

  test('bad bodies and unknown indexes get the reference errors', async () => {
    const cases: Array<[unknown, string]> = [
      [{ limit: -1 }, 'invalid_index_limit'],
      [{ offset: 'a' }, 'invalid_index_offset'],
      [{ filter: [] }, 'invalid_index_fields_filter'],
      [{ filter: { color: true } }, 'invalid_index_fields_filter'],
      [{ filter: { sortable: 'yes' } }, 'invalid_index_fields_filter_sortable'],
      [{ filter: { rankingRule: 1 } }, 'invalid_index_fields_filter_ranking_rule'],
      [{ filter: { attributePatterns: 'title' } }, 'invalid_index_fields_filter_attribute_patterns'],
      [{ page: 1 }, 'bad_request'],
    ];
    for (const [json, code] of cases) {
      const reply = await h.request('POST', '/indexes/catalog/fields', { json });
      expect(reply.status, JSON.stringify(json)).toBe(400);
      expectErrorShape(reply.body, code);
    }
    const missing = await h.request('POST', '/indexes/nowhere/fields', { json: {} });
    expect(missing.status).toBe(404);
    expectErrorShape(missing.body, 'index_not_found');
  });
});
