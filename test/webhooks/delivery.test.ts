/**
 * Task webhooks end to end: a real engine and server, the instance webhook from the command line
 * plus runtime ones, a real local receiver. The NDJSON lines are the batch's tasks exactly as
 * `GET /tasks/:uid` shows them, one call per batch per webhook, and a dead receiver neither fails
 * nor delays tasks, while later batches still arrive once it is back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/engine/types.js';
import { startSecured, type SecuredHarness } from '../auth/harness.js';
import { Receiver } from './receiver.js';
import { movies as moviesData } from '../data.js';

const MASTER = 'webhook-master-key-0123456789';
const movies: Array<Record<string, unknown>> = moviesData();

describe('task webhooks', () => {
  let cli: Receiver;
  let runtime: Receiver;
  let h: SecuredHarness;
  let logs: string[];

  beforeEach(async () => {
    cli = new Receiver();
    runtime = new Receiver();
    await cli.start();
    await runtime.start();
    logs = [];
    h = await startSecured({
      masterKey: MASTER,
      taskWebhookUrl: cli.url,
      taskWebhookAuthorizationHeader: 'Bearer cli-webhook-secret-0123456789',
      allowedIpNetworks: '127.0.0.0/8',
      logs,
    });
  });
  afterEach(async () => {
    await h.stop();
    await cli.stop();
    await runtime.stop();
  });

  const add = async (docs: unknown[]) => {
    const res = await h.request('POST', '/indexes/movies/documents', { key: MASTER, json: docs });
    expect(res.status).toBe(202);
    return res.body.taskUid as number;
  };

  it('posts each batch as gzip NDJSON equal to the task objects, once per webhook', async () => {
    const created = await h.request('POST', '/webhooks', {
      key: MASTER,
      json: { url: runtime.url, headers: { Authorization: 'Bearer runtime-secret-abcdefghijkl', 'X-Source': 'search' } },
    });
    expect(created.status).toBe(201);

    // several tasks enqueued together are autobatched: one call per batch, not per task
    const uids: number[] = [];
    for (let i = 0; i < 5; i++) uids.push(await add(movies.slice(i * 200, (i + 1) * 200)));
    for (const uid of uids) expect((await h.engine.waitForTask(uid)).status).toBe('succeeded');
    const tasks = uids.map((uid) => h.engine.getTask(uid));
    const batches = new Set(tasks.map((t) => t.batchUid));
    await h.security.notifier.idle();

    for (const receiver of [cli, runtime]) {
      expect(receiver.calls).toHaveLength(batches.size);
      const delivered = receiver.calls.flatMap((c) => c.lines);
      expect(delivered).toEqual(tasks.map((t) => JSON.parse(JSON.stringify(t))));
      for (const call of receiver.calls) {
        expect(call.method).toBe('POST');
        expect(call.headers['content-encoding']).toBe('gzip');
        expect(new Set(call.lines.map((l) => l.batchUid)).size).toBe(1);
      }
      // every delivered line is what GET /tasks/:uid answers
      for (const line of delivered) {
        const res = await h.request('GET', `/tasks/${String(line.uid)}`, { key: MASTER });
        expect(res.body).toEqual(line);
      }
    }
    expect(cli.calls[0]!.headers.authorization).toBe('Bearer cli-webhook-secret-0123456789');
    expect(runtime.calls[0]!.headers.authorization).toBe('Bearer runtime-secret-abcdefghijkl');
    expect(runtime.calls[0]!.headers['x-source']).toBe('search');

    // responses redact Authorization values; the instance webhook is listed, not editable
    const list = await h.request('GET', '/webhooks', { key: MASTER });
    expect(list.text).not.toContain('cli-webhook-secret');
    expect(list.text).not.toContain('runtime-secret');
    expect(list.body.results).toEqual([
      { uuid: '00000000-0000-0000-0000-000000000000', isEditable: false, url: cli.url, headers: { Authorization: 'Bearer cliXXXXX...' } },
      { uuid: created.body.uuid, isEditable: true, url: runtime.url, headers: { Authorization: 'Bearer runXXXXX...', 'X-Source': 'search' } },
    ]);
    const one = await h.request('GET', `/webhooks/${created.body.uuid}`, { key: MASTER });
    expect(one.body.headers.Authorization).toBe('Bearer runXXXXX...');
    const immutable = await h.request('PATCH', '/webhooks/00000000-0000-0000-0000-000000000000', { key: MASTER, json: { url: runtime.url } });
    expect([immutable.status, immutable.body.code]).toEqual([400, 'immutable_webhook']);

    // PATCH: drop one header, then all; DELETE stops deliveries
    const p1 = await h.request('PATCH', `/webhooks/${created.body.uuid}`, { key: MASTER, json: { headers: { 'X-Source': null } } });
    expect(Object.keys(p1.body.headers)).toEqual(['Authorization']);
    const p2 = await h.request('PATCH', `/webhooks/${created.body.uuid}`, { key: MASTER, json: { headers: null } });
    expect(p2.body.headers).toEqual({});
    expect((await h.request('DELETE', `/webhooks/${created.body.uuid}`, { key: MASTER })).status).toBe(204);
    const before = runtime.calls.length;
    await h.engine.waitForTask(await add([{ id: 999999, title: 'after delete' }]));
    await h.security.notifier.idle();
    expect(runtime.calls).toHaveLength(before);
    expect(cli.calls.at(-1)!.lines.map((l) => (l.details as Record<string, unknown>).receivedDocuments)).toEqual([1]);
  });

  it('a dead receiver does not fail or delay tasks, and later batches still arrive', async () => {
    await cli.stop(); // down: connections refused
    const started = performance.now();
    const first = await add(movies.slice(0, 50));
    const task = await h.engine.waitForTask(first);
    expect(task.status).toBe('succeeded');
    const elapsed = performance.now() - started;
    // the queue does not wait for the retries (4 attempts with 0.5 s, 1 s, 2 s backoff)
    expect(elapsed).toBeLessThan(1500);
    expect(cli.calls).toHaveLength(0);

    await cli.start(); // back on the same port
    const second = await add(movies.slice(50, 60));
    await h.engine.waitForTask(second);
    // the first batch may also arrive now, through its pending retries; the second one must
    await h.security.notifier.idle();
    const uidsSeen = cli.calls.flatMap((c) => c.lines.map((l) => l.uid));
    expect(uidsSeen).toContain(second);
    expect(uidsSeen.filter((u) => u === second)).toHaveLength(1);
    expect(cli.calls.every((c) => c.lines.every((l) => l.status === 'succeeded'))).toBe(true);
  });

  it('refuses a receiver on loopback unless its network is allowed', async () => {
    const strict = await startSecured({ masterKey: MASTER, taskWebhookUrl: runtime.url, logs });
    try {
      const res = await strict.request('POST', '/indexes/movies/documents', { key: MASTER, json: [{ id: 1 }] });
      expect((await strict.engine.waitForTask(res.body.taskUid)).status).toBe('succeeded');
      await strict.security.notifier.idle();
      expect(runtime.calls).toHaveLength(0);
      expect(logs.join('\n')).toMatch(/not allowed/);
      expect(logs.join('\n')).not.toContain('Bearer');
    } finally {
      await strict.stop();
    }
  });

  it('with the receiver down across a restart, every notification arrives once it is back, in order', async () => {
    await h.stop();
    await cli.stop(); // down from the start
    const dir = mkdtempSync(join(tmpdir(), 'search-outbox-'));
    const options = {
      masterKey: MASTER,
      taskWebhookUrl: cli.url,
      allowedIpNetworks: '127.0.0.0/8',
      logs,
      dir,
      webhookDelivery: { retryDelayMs: 20, maxRetryDelayMs: 100 },
    };
    try {
      h = await startSecured(options);
      const finished: Task[] = [];
      // one batch per task: each waits for the previous one
      const run = async (n: number, from: number) => {
        for (let i = from; i < from + n; i++) finished.push(await h.engine.waitForTask(await add([{ id: i, title: `movie ${i}` }])));
      };
      await run(6, 0);
      await h.stop(); // a restart while the receiver is down
      h = await startSecured(options);
      await run(6, 100);
      expect(cli.calls).toHaveLength(0);
      expect(finished.every((t) => t.status === 'succeeded')).toBe(true);

      await cli.start(); // back on the same port
      await h.security.notifier.idle();
      const delivered = cli.calls.map((c) => c.lines.map((l) => l.uid as number));
      expect(delivered).toEqual(finished.map((t) => [t.uid]));
      expect(cli.calls.map((c) => c.lines[0]!.batchUid)).toEqual(finished.map((t) => t.batchUid));
      expect(h.security.notifier.dropped).toBe(0);
      expect(h.engine.webhookOutbox.size).toBe(0);
    } finally {
      await h.stop();
      rmSync(dir, { recursive: true, force: true });
      h = await startSecured({ masterKey: MASTER, logs }); // for afterEach
    }
  });
});
