/**
 * Bad input through real HTTP: each case answers the reference's code and status with a
 * well-formed error body, and nothing is written (the task list and the data are unchanged).
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectErrorShape, startHarness, type Harness, type RequestOptions } from './harness.js';

let h: Harness;
let small: Harness;
beforeAll(async () => {
  h = await startHarness();
  small = await startHarness({ payloadSizeLimit: 1024 });
  const created = await h.request('POST', '/indexes/films/documents', { json: [{ id: 1, title: 'Alien' }] });
  await h.wait(created.body.taskUid);
});
afterAll(async () => {
  await h.stop();
  await small.stop();
});

interface Case {
  name: string;
  method: string;
  path: string;
  options?: RequestOptions;
  status: number;
  code: string;
  message?: string | RegExp;
}

const JSON_ROUTES_BODY = { contentType: 'application/json' } as const;

const CASES: Case[] = [
  // malformed and missing payloads
  { name: 'malformed JSON on index creation', method: 'POST', path: '/indexes', options: { raw: '{"uid": ', ...JSON_ROUTES_BODY }, status: 400, code: 'malformed_payload', message: /^The json payload provided is malformed\. `.+`\.$/ },
  { name: 'empty JSON body', method: 'POST', path: '/indexes', options: { raw: '', ...JSON_ROUTES_BODY }, status: 400, code: 'missing_payload', message: 'A json payload is missing.' },
  { name: 'malformed JSON documents', method: 'POST', path: '/indexes/films/documents', options: { raw: '[{"id": 2,', ...JSON_ROUTES_BODY }, status: 400, code: 'malformed_payload' },
  { name: 'malformed NDJSON documents', method: 'POST', path: '/indexes/films/documents', options: { raw: '{"id": 2}\n{oops}\n', contentType: 'application/x-ndjson' }, status: 400, code: 'malformed_payload' },
  { name: 'malformed JSON settings', method: 'PATCH', path: '/indexes/films/settings', options: { raw: '{"stopWords": [}', ...JSON_ROUTES_BODY }, status: 400, code: 'malformed_payload' },
  // content types
  { name: 'documents without Content-Type', method: 'POST', path: '/indexes/films/documents', options: { raw: '[{"id":2}]', contentType: null }, status: 415, code: 'missing_content_type', message: 'A Content-Type header is missing. Accepted values for the Content-Type header are: `application/json`, `application/x-ndjson`, `text/csv`' },
  { name: 'documents as text/plain', method: 'POST', path: '/indexes/films/documents', options: { raw: '[{"id":2}]', contentType: 'text/plain' }, status: 415, code: 'invalid_content_type', message: 'The Content-Type `text/plain` is invalid. Accepted values for the Content-Type header are: `application/json`, `application/x-ndjson`, `text/csv`' },
  { name: 'csvDelimiter with JSON', method: 'POST', path: '/indexes/films/documents?csvDelimiter=;', options: { raw: '[{"id":2}]', ...JSON_ROUTES_BODY }, status: 415, code: 'invalid_content_type' },
  { name: 'two-character csvDelimiter', method: 'POST', path: '/indexes/films/documents?csvDelimiter=ab', options: { raw: 'id\n2\n', contentType: 'text/csv' }, status: 400, code: 'invalid_document_csv_delimiter' },
  { name: 'index creation as form data', method: 'POST', path: '/indexes', options: { raw: 'uid=x', contentType: 'application/x-www-form-urlencoded' }, status: 415, code: 'invalid_content_type' },
  { name: 'index creation without Content-Type', method: 'POST', path: '/indexes', options: { raw: '{"uid":"x"}', contentType: null }, status: 415, code: 'missing_content_type' },
  // wrong types and unknown fields
  { name: 'uid of the wrong type', method: 'POST', path: '/indexes', options: { json: { uid: 12 } }, status: 400, code: 'invalid_index_uid', message: 'Invalid value type at `.uid`: expected a string, but found a positive integer: `12`' },
  { name: 'missing uid', method: 'POST', path: '/indexes', options: { json: { primaryKey: 'id' } }, status: 400, code: 'missing_index_uid', message: 'Missing field `uid`' },
  { name: 'invalid uid', method: 'POST', path: '/indexes', options: { json: { uid: 'hé llo' } }, status: 400, code: 'invalid_index_uid' },
  { name: 'primaryKey of the wrong type', method: 'POST', path: '/indexes', options: { json: { uid: 'ok', primaryKey: ['id'] } }, status: 400, code: 'invalid_index_primary_key' },
  { name: 'unknown field on index creation', method: 'POST', path: '/indexes', options: { json: { uid: 'ok', color: 'red' } }, status: 400, code: 'bad_request', message: 'Unknown field `color`: expected one of `uid`, `primaryKey`' },
  { name: 'body that is not an object', method: 'POST', path: '/indexes', options: { json: ['ok'] }, status: 400, code: 'bad_request', message: 'Invalid value type: expected an object, but found an array: `["ok"]`' },
  { name: 'invalid new uid in index rename', method: 'PATCH', path: '/indexes/films', options: { json: { uid: 'no spaces allowed' } }, status: 400, code: 'invalid_index_uid' },
  { name: 'unknown field in documents fetch', method: 'POST', path: '/indexes/films/documents/fetch', options: { json: { limit: 1, page: 2 } }, status: 400, code: 'bad_request' },
  { name: 'negative limit in documents fetch', method: 'POST', path: '/indexes/films/documents/fetch', options: { json: { limit: -1 } }, status: 400, code: 'invalid_document_limit' },
  { name: 'delete-batch body not an array', method: 'POST', path: '/indexes/films/documents/delete-batch', options: { json: { ids: [1] } }, status: 400, code: 'bad_request' },
  { name: 'delete by filter without filter', method: 'POST', path: '/indexes/films/documents/delete', options: { json: {} }, status: 400, code: 'missing_document_filter' },
  { name: 'delete by filter with a number', method: 'POST', path: '/indexes/films/documents/delete', options: { json: { filter: 3 } }, status: 400, code: 'invalid_document_filter' },
  { name: 'swap with one index', method: 'POST', path: '/swap-indexes', options: { json: [{ indexes: ['films'] }] }, status: 400, code: 'invalid_swap_indexes', message: 'Two indexes must be given for each swap. The list `["films"]` contains 1 indexes.' },
  { name: 'swap without indexes', method: 'POST', path: '/swap-indexes', options: { json: [{}] }, status: 400, code: 'missing_swap_indexes' },
  { name: 'settings value of the wrong type', method: 'PATCH', path: '/indexes/films/settings', options: { json: { stopWords: 5 } }, status: 400, code: 'invalid_settings_stop_words' },
  { name: 'unknown setting', method: 'PATCH', path: '/indexes/films/settings', options: { json: { stopWord: ['a'] } }, status: 400, code: 'bad_request' },
  { name: 'settings body not an object', method: 'PATCH', path: '/indexes/films/settings', options: { json: ['a'] }, status: 400, code: 'bad_request' },
  { name: 'sub-route value of the wrong type', method: 'PUT', path: '/indexes/films/settings/ranking-rules', options: { json: 'words' }, status: 400, code: 'invalid_settings_ranking_rules' },
  { name: 'sub-route unknown object field', method: 'PATCH', path: '/indexes/films/settings/typo-tolerance', options: { json: { enable: false } }, status: 400, code: 'invalid_settings_typo_tolerance' },
  // query strings
  { name: 'index offset not a number', method: 'GET', path: '/indexes?offset=abc', status: 400, code: 'invalid_index_offset', message: 'Invalid value in parameter `offset`: could not parse `abc` as a positive integer' },
  { name: 'index limit negative', method: 'GET', path: '/indexes?limit=-3', status: 400, code: 'invalid_index_limit' },
  { name: 'unknown parameter on index list', method: 'GET', path: '/indexes?page=2', status: 400, code: 'bad_request', message: 'Unknown parameter `page`: expected one of `offset`, `limit`' },
  { name: 'document limit not a number', method: 'GET', path: '/indexes/films/documents?limit=ten', status: 400, code: 'invalid_document_limit' },
  { name: 'retrieveVectors not a boolean', method: 'GET', path: '/indexes/films/documents?retrieveVectors=yes', status: 400, code: 'invalid_document_retrieve_vectors' },
  { name: 'task uids not integers', method: 'GET', path: '/tasks?uids=1,cat', status: 400, code: 'invalid_task_uids', message: 'Invalid value in parameter `uids[1]`: could not parse `cat` as a positive integer' },
  { name: 'unknown task status', method: 'GET', path: '/tasks?statuses=finished', status: 400, code: 'invalid_task_statuses' },
  { name: 'unknown task type', method: 'GET', path: '/tasks?types=createIndex', status: 400, code: 'invalid_task_types' },
  { name: 'bad task date', method: 'GET', path: '/tasks?afterFinishedAt=2021', status: 400, code: 'invalid_task_after_finished_at', message: 'Invalid value in parameter `afterFinishedAt`: `2021` is an invalid date-time. It should follow the YYYY-MM-DD or RFC 3339 date-time format.' },
  { name: 'task from star', method: 'GET', path: '/tasks?from=*', status: 400, code: 'invalid_task_from' },
  { name: 'task reverse not boolean', method: 'GET', path: '/tasks?reverse=1', status: 400, code: 'invalid_task_reverse' },
  { name: 'bad index uid in task filter', method: 'GET', path: '/tasks?indexUids=h%C3%A9', status: 400, code: 'invalid_index_uid' },
  { name: 'cancel without filters', method: 'POST', path: '/tasks/cancel', status: 400, code: 'missing_task_filters', message: /^Query parameters to filter the tasks to cancel are missing\./ },
  { name: 'delete tasks without filters', method: 'DELETE', path: '/tasks', status: 400, code: 'missing_task_filters', message: /^Query parameters to filter the tasks to delete are missing\./ },
  { name: 'limit on task deletion', method: 'DELETE', path: '/tasks?limit=2', status: 400, code: 'bad_request' },
  { name: 'batch filter bad uids', method: 'GET', path: '/batches?batchUids=x', status: 400, code: 'invalid_batch_uids' },
  // identifiers and missing resources
  { name: 'invalid index uid in the path', method: 'GET', path: '/indexes/bad%20uid', status: 400, code: 'invalid_index_uid' },
  { name: 'task uid not a number', method: 'GET', path: '/tasks/abc', status: 400, code: 'invalid_task_uid', message: 'Invalid value in parameter `taskUid`: could not parse `abc` as a positive integer' },
  { name: 'batch uid not a number', method: 'GET', path: '/batches/-1', status: 400, code: 'invalid_batch_uid' },
  { name: 'missing index', method: 'GET', path: '/indexes/ghost', status: 404, code: 'index_not_found', message: 'Index `ghost` not found.' },
  { name: 'documents of a missing index', method: 'GET', path: '/indexes/ghost/documents', status: 404, code: 'index_not_found' },
  { name: 'settings of a missing index', method: 'GET', path: '/indexes/ghost/settings', status: 404, code: 'index_not_found' },
  { name: 'stats of a missing index', method: 'GET', path: '/indexes/ghost/stats', status: 404, code: 'index_not_found' },
  { name: 'missing document', method: 'GET', path: '/indexes/films/documents/404', status: 404, code: 'document_not_found', message: 'Document `404` not found.' },
  { name: 'missing task', method: 'GET', path: '/tasks/999999', status: 404, code: 'task_not_found' },
  { name: 'missing batch', method: 'GET', path: '/batches/999999', status: 404, code: 'batch_not_found' },
  { name: 'unknown route', method: 'GET', path: '/nowhere', status: 404, code: 'not_found' },
];

describe('bad input gets the exact code and status, and writes nothing', () => {
  test.each(CASES)('$name → $status $code', async (c) => {
    const before = await h.request('GET', '/tasks?limit=1000');
    const reply = await h.request(c.method, c.path, c.options);
    expect(reply.status, reply.text).toBe(c.status);
    expectErrorShape(reply.body, c.code);
    if (typeof c.message === 'string') expect(reply.body.message).toBe(c.message);
    else if (c.message) expect(reply.body.message).toMatch(c.message);
    const after = await h.request('GET', '/tasks?limit=1000');
    expect(after.body.total).toBe(before.body.total);
  });

  test('a body over --http-payload-size-limit is refused with 413 payload_too_large', async () => {
    const big = JSON.stringify(Array.from({ length: 100 }, (_, id) => ({ id, text: 'x'.repeat(20) })));
    const reply = await small.request('POST', '/indexes/big/documents', { raw: big, contentType: 'application/json' });
    expect(reply.status).toBe(413);
    expectErrorShape(reply.body, 'payload_too_large');
    expect(reply.body.message).toBe('The provided payload reached the size limit. The maximum accepted payload size is 1 KiB.');
    expect((await small.request('GET', '/tasks')).body.total).toBe(0);
  });

  test('a compressed body that expands past the limit is refused with 413; unknown encodings with 400', async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify([{ id: 1, text: ' '.repeat(100_000) }])));
    expect(bomb.length).toBeLessThan(1024);
    const reply = await small.request('POST', '/indexes/big/documents', {
      raw: bomb,
      contentType: 'application/json',
      headers: { 'content-encoding': 'gzip' },
    });
    expect(reply.status).toBe(413);
    expectErrorShape(reply.body, 'payload_too_large');
    const unknown = await h.request('POST', '/indexes/films/documents', {
      raw: '[{"id":3}]',
      contentType: 'application/json',
      headers: { 'content-encoding': 'zstd-ish' },
    });
    expect(unknown.status).toBe(400);
    expectErrorShape(unknown.body, 'bad_request');
    const corrupt = await h.request('POST', '/indexes/films/documents', {
      raw: 'definitely not gzip',
      contentType: 'application/json',
      headers: { 'content-encoding': 'gzip' },
    });
    expect(corrupt.status).toBe(400);
    expectErrorShape(corrupt.body, 'bad_request');
    expect((await small.request('GET', '/tasks')).body.total).toBe(0);
  });

  test('the default limit is 100 MB, printed in binary units like the reference', async () => {
    const { payloadTooLarge } = await import('../../src/http/error-mapping.js');
    expect(payloadTooLarge(100_000_000).message).toBe(
      'The provided payload reached the size limit. The maximum accepted payload size is 95.367431640625 MiB.',
    );
  });

  test('a document import with one invalid id fails as a whole: no document of it is stored', async () => {
    const reply = await h.request('POST', '/indexes/films/documents', {
      json: [
        { id: 10, title: 'Ok' },
        { id: 'not valid!', title: 'Bad' },
      ],
    });
    expect(reply.status).toBe(202);
    const task = await h.wait(reply.body.taskUid);
    expect(task.status).toBe('failed');
    expect((task.error as { code: string }).code).toBe('invalid_document_id');
    const docs = await h.request('GET', '/indexes/films/documents');
    expect(docs.body.results).toEqual([{ id: 1, title: 'Alien' }]);
  });

  test('an internal failure answers 500 internal without leaking the cause', async () => {
    const original = h.engine.stats.bind(h.engine);
    h.engine.stats = () => {
      throw new Error('/secret/path/lmdb exploded\n    at Foo (file.js:1:1)');
    };
    try {
      const reply = await h.request('GET', '/stats');
      expect(reply.status).toBe(500);
      expectErrorShape(reply.body, 'internal');
      expect(reply.text).not.toContain('secret');
      expect(reply.text).not.toContain('file.js');
    } finally {
      h.engine.stats = original;
    }
  });
});
