/** `POST /indexes/:uid/documents/edit` (edit documents by function) through real HTTP. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectErrorShape, startHarness, type Harness } from './harness.js';

let h: Harness;
const PRODUCTS = [
  { id: 1, name: 'phone', category: 'electronics', price: 100, stock: 0 },
  { id: 42, name: 'laptop', category: 'electronics', price: 1000, stock: 3 },
  { id: 7, name: 'chair', category: 'furniture', price: 50, stock: 10 },
];

beforeAll(async () => {
  h = await startHarness();
  await h.wait((await h.request('POST', '/indexes/products/documents', { json: PRODUCTS })).body.taskUid);
  await h.wait((await h.engine.updateSettings('products', { filterableAttributes: ['category', 'id'] })).taskUid);
});
afterAll(async () => {
  await h.stop();
});

async function edit(json: unknown, path = '/indexes/products/documents/edit') {
  return h.request('POST', path, { json });
}

async function documents() {
  const reply = await h.request('GET', '/indexes/products/documents?limit=100');
  return Object.fromEntries(reply.body.results.map((d: { id: number }) => [d.id, d]));
}

describe('gate', () => {
  test('refused with feature_not_enabled until editDocumentsByFunction is on', async () => {
    const reply = await edit({ function: 'doc.x = 1' });
    expect(reply.status).toBe(400);
    expectErrorShape(reply.body, 'feature_not_enabled');
    expect(reply.body.message).toBe(
      'Using the documents edit route requires enabling the `edit documents by function` experimental feature. See https://github.com/orgs/meilisearch/discussions/762',
    );
    await h.request('PATCH', '/experimental-features', { json: { editDocumentsByFunction: true } });
  });
});

describe('edition', () => {
  test('the context example: a filtered discount, with the documented task details', async () => {
    const fn = 'if context.discounted_ids.contains(doc.id) { doc.price = doc.price * 0.8 }';
    const reply = await edit({ function: fn, context: { discounted_ids: [1, 42, 99] }, filter: 'category = "electronics"' });
    expect(reply.status, reply.text).toBe(202);
    expect(reply.body.type).toBe('documentEdition');
    const task = await h.wait(reply.body.taskUid);
    expect(task.status).toBe('succeeded');
    expect(task.details).toEqual({
      editedDocuments: 2,
      deletedDocuments: 0,
      originalFilter: '"category = \\"electronics\\""',
      context: { discounted_ids: [1, 42, 99] },
      function: fn,
    });
    const docs = await documents();
    expect(docs[1].price).toBe(80);
    expect(docs[42].price).toBe(800);
    expect(docs[7].price).toBe(50);
  });

  test('unchanged documents are not counted; the result is searchable', async () => {
    const task = await h.wait((await edit({ function: 'if doc.stock == 0 { doc.availability = "out_of_stock" }' })).body.taskUid);
    expect(task.details).toMatchObject({ editedDocuments: 1, deletedDocuments: 0, originalFilter: null, context: null });
    const search = await h.request('POST', '/indexes/products/search', { json: { q: 'out_of_stock' } });
    expect(search.body.hits.map((hit: { id: number }) => hit.id)).toEqual([1]);
  });

  test('`doc = ()` deletes documents', async () => {
    const task = await h.wait((await edit({ function: 'doc = ()', filter: 'id = 7' })).body.taskUid);
    expect(task.details).toMatchObject({ editedDocuments: 0, deletedDocuments: 1 });
    expect((await h.request('GET', '/indexes/products/documents/7')).status).toBe(404);
  });

  test('a runtime error fails the task and changes nothing', async () => {
    const before = await documents();
    const task = await h.wait((await edit({ function: 'doc.name = doc.name.to_upper(); if doc.id == 42 { doc.x = doc.price.nope() }' })).body.taskUid);
    expect(task.status).toBe('failed');
    expect(task.error).toMatchObject({ code: 'edit_documents_by_function_error', type: 'invalid_request' });
    expect((task.error as { message: string }).message).toMatch(/^Document edition runtime error encountered while running the function: Function not found: nope/);
    expect(task.details).toMatchObject({ editedDocuments: 0, deletedDocuments: 0 });
    expect(await documents()).toEqual(before);
  });

  test('changing the primary key or leaving a non-object fails the task', async () => {
    const pk = await h.wait((await edit({ function: 'doc.id = 1000' })).body.taskUid);
    expect((pk.error as { message: string }).message).toBe("Document editions cannot modify a document's primary key");
    const notObject = await h.wait((await edit({ function: 'doc = 5' })).body.taskUid);
    expect((notObject.error as { message: string }).message).toBe('Document editions must keep documents as objects');
  });

  test('an endless function is stopped by the budget and fails its task', async () => {
    const task = await h.wait((await edit({ function: 'loop { doc.n = 1 }' })).body.taskUid);
    expect(task.status).toBe('failed');
    expect((task.error as { message: string }).message).toMatch(/Too many operations|took longer than/);
  });

  test('editing a missing index fails with index_not_found', async () => {
    const task = await h.wait((await edit({ function: 'doc.x = 1' }, '/indexes/nowhere/documents/edit')).body.taskUid);
    expect((task.error as { code: string }).code).toBe('index_not_found');
  });
});

describe('bad requests', () => {
  test.each([
    [{}, 'missing_document_edition_function'],
    [{ function: 5 }, 'invalid_document_edition_function_filter'],
    [{ function: 'doc.x = 1', context: [1] }, 'invalid_document_edition_context'],
    [{ function: 'doc.x = 1', filter: 5 }, 'invalid_document_filter'],
    [{ function: 'doc.x = 1', filter: 'price > 1' }, 'invalid_document_filter'],
    [{ function: 'doc.x = 1', filter: '' }, 'invalid_document_filter'],
    [{ function: 'doc.x = 1', extra: 1 }, 'bad_request'],
    [{ function: 'fn f() {}' }, 'bad_request'],
    [{ function: 'doc.x = ' }, 'bad_request'],
  ])('%j is refused with %s, registering no task', async (json, code) => {
    const before = (await h.request('GET', '/tasks')).body.total;
    const reply = await edit(json);
    expect(reply.status).toBe(400);
    expectErrorShape(reply.body, code);
    expect((await h.request('GET', '/tasks')).body.total).toBe(before);
  });
});
