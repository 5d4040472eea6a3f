/**
 * Gaps found by running the official `meilisearch` JavaScript client's own test suite against our
 * server (issue #16), each checked against the reference's documented behaviour, through real HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
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
