/**
 * Gaps found by running the official `meilisearch` JavaScript client's own test suite against our
 * server (issue #16), each checked against the reference's documented behaviour, through real HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSecured } from '../auth/harness.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  const first = await h.request('POST', '/indexes/shelf/documents', { json: [{ id: 'a1', colour: 'teal' }] });
  await h.wait(first.body.taskUid);
});
afterAll(async () => {
  await h.stop();
});

describe('task and batch filters', () => {
  test('uids and batchUids that name no task or batch match nothing instead of failing', async () => {
    const tasks = await h.request('GET', '/tasks?uids=4242,777');
    expect(tasks.status, tasks.text).toBe(200);
    expect(tasks.body).toMatchObject({ results: [], total: 0 });
    const mixed = await h.request('GET', '/tasks?uids=0,777');
    expect(mixed.body.results.map((t: { uid: number }) => t.uid)).toEqual([0]);
    const batches = await h.request('GET', '/batches?batchUids=4242,777');
    expect(batches.status, batches.text).toBe(200);
    expect(batches.body).toMatchObject({ results: [], total: 0 });
    const byTask = await h.request('GET', '/batches?uids=4242');
    expect(byTask.body).toMatchObject({ results: [], total: 0 });
  });
});

describe('renderRoute experimental feature', () => {
  const inline = { template: { kind: 'inlineDocumentTemplate', inline: 'shade {{doc.colour}}' }, input: { kind: 'inlineDocument', inline: { colour: 'ochre' } } };

  test('POST /render-template answers feature_not_enabled until renderRoute is turned on', async () => {
    const off = await h.request('POST', '/render-template', { json: inline });
    expect(off.status).toBe(400);
    expect(off.body).toMatchObject({ code: 'feature_not_enabled', type: 'invalid_request' });
    expect(off.body.message).toContain('`render route`');
    const flags = await h.request('PATCH', '/experimental-features', { json: { renderRoute: true } });
    expect(flags.body.renderRoute).toBe(true);
    const on = await h.request('POST', '/render-template', { json: inline });
    expect(on.status, on.text).toBe(200);
    expect(on.body).toEqual({ template: 'shade {{doc.colour}}', rendered: 'shade ochre' });
    await h.request('PATCH', '/experimental-features', { json: { renderRoute: false } });
    expect((await h.request('GET', '/experimental-features')).body.renderRoute).toBe(false);
  });
});

describe('key expiresAt', () => {
  test('a zero fraction (what a JS Date sends) reads back without one; trailing zeros are dropped', async () => {
    const key = 'client-suite-master-key';
    const secured = await startSecured({ masterKey: key });
    try {
      for (const [given, expected] of [
        ['2051-03-09T00:00:00.000Z', '2051-03-09T00:00:00Z'],
        ['2051-03-09T10:20:30.250Z', '2051-03-09T10:20:30.25Z'],
        ['2051-03-09T10:20:30.000700Z', '2051-03-09T10:20:30.0007Z'],
      ]) {
        const created = await secured.request('POST', '/keys', { key, json: { actions: ['search'], indexes: ['shelf'], expiresAt: given } });
        expect(created.status, created.text).toBe(201);
        expect(created.body.expiresAt).toBe(expected);
        expect((await secured.request('GET', `/keys/${created.body.uid}`, { key })).body.expiresAt).toBe(expected);
      }
    } finally {
      await secured.stop();
    }
  });
});

describe('embedder apiKey redaction', () => {
  test('reads back with the prefix and the X padding the reference uses for its length', async () => {
    const embedders = {
      tiny: { source: 'ollama', model: 'nomic-embed-text', apiKey: 'abc123', dimensions: 2 },
      mid: { source: 'openAi', apiKey: 'key-1234567890123', dimensions: 2 },
      long: { source: 'openAi', apiKey: 'key-12345678901234567890', dimensions: 2 },
      longer: { source: 'openAi', apiKey: 'key-1234567890123456789012345678', dimensions: 2 },
    };
    // an index without documents: nothing to embed, so no provider is called
    await h.wait((await h.request('POST', '/indexes', { json: { uid: 'vault' } })).body.taskUid);
    const update = await h.request('PATCH', '/indexes/vault/settings/embedders', { json: embedders });
    const done = await h.wait(update.body.taskUid);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    const read = (await h.request('GET', '/indexes/vault/settings/embedders')).body;
    expect(read.tiny.apiKey).toBe('XXX...');
    expect(read.mid.apiKey).toBe('keXXXX...');
    expect(read.long.apiKey).toBe('keyXXXXX...');
    expect(read.longer.apiKey).toBe('key-1XXXXXX...');
  });
});

describe('delete documents by filter', () => {
  test('an empty filter is refused with invalid_document_filter and deletes nothing', async () => {
    await h.wait((await h.request('POST', '/indexes/crates/documents', { json: [{ id: 1, size: 'big' }, { id: 2, size: 'small' }] })).body.taskUid);
    for (const filter of ['', '   ', [], [[]], ['', ['']]]) {
      const reply = await h.request('POST', '/indexes/crates/documents/delete', { json: { filter } });
      expect(reply.status, JSON.stringify(filter)).toBe(400);
      expect(reply.body).toEqual({
        message: 'Sending an empty filter is forbidden.',
        code: 'invalid_document_filter',
        type: 'invalid_request',
        link: 'https://docs.meilisearch.com/errors#invalid_document_filter',
      });
    }
    expect((await h.request('GET', '/indexes/crates/documents')).body.total).toBe(2);
  });
});
