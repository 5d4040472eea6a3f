import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthEnv } from '../../src/engine/auth/auth-env.js';
import { SearchError } from '../../src/engine/errors.js';
import { AddressPolicy } from '../../src/engine/net/address-policy.js';
import type { Task } from '../../src/engine/types.js';
import { open, type RootDatabase } from 'lmdb';
import { toNdjson, WebhookNotifier, type NotifierOptions } from '../../src/engine/webhooks/notifier.js';
import { WebhookOutbox } from '../../src/engine/webhooks/outbox.js';
import { INSTANCE_WEBHOOK_UUID, WebhookStore } from '../../src/engine/webhooks/webhook-store.js';
import { Receiver } from './receiver.js';

const LOOPBACK = AddressPolicy.parse('127.0.0.0/8,::1/128');

function task(uid: number, batchUid: number, indexUid = 'movies'): Task {
  return {
    uid,
    batchUid,
    indexUid,
    status: 'succeeded',
    type: 'documentAdditionOrUpdate',
    canceledBy: null,
    details: { receivedDocuments: 2, indexedDocuments: 2 },
    error: null,
    duration: 'PT0.01S',
    enqueuedAt: '2026-01-01T00:00:00Z',
    startedAt: '2026-01-01T00:00:01Z',
    finishedAt: '2026-01-01T00:00:02Z',
  };
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof SearchError) return e.code;
    throw e;
  }
  return 'ok';
}

describe('WebhookStore', () => {
  let dir: string;
  let env: AuthEnv;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hooks-'));
    env = AuthEnv.open(dir);
  });
  afterEach(async () => {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the instance webhook as not editable, with its Authorization redacted', () => {
    const store = new WebhookStore(env, { url: 'http://example.com/cli', authorizationHeader: 'Bearer cli-secret-value-1234' });
    const { results } = store.list();
    expect(results).toEqual([
      { uuid: INSTANCE_WEBHOOK_UUID, isEditable: false, url: 'http://example.com/cli', headers: { Authorization: 'Bearer cliXXXXX...' } },
    ]);
    expect(codeOf(() => store.update(INSTANCE_WEBHOOK_UUID, { url: 'http://x.y/' }))).toBe('immutable_webhook');
    expect(codeOf(() => store.delete(INSTANCE_WEBHOOK_UUID))).toBe('immutable_webhook');
    // delivery still uses the real value
    expect(store.targets()[0]!.headers.Authorization).toBe('Bearer cli-secret-value-1234');
  });

  it('creates, patches and deletes with the reference semantics', () => {
    const store = new WebhookStore(env);
    const created = store.create({ url: 'https://example.com/a', headers: { authorization: 'Bearer abcdefghijklmnopqrstuvwxyz', 'X-Tenant': 'one' } });
    expect(created.isEditable).toBe(true);
    expect(created.headers).toEqual({ authorization: 'Bearer abcXXXXX...', 'X-Tenant': 'one' });
    expect(JSON.stringify(store.list())).not.toContain('fghijklmnop');
    expect(store.get(created.uuid).url).toBe('https://example.com/a');

    // one header removed, one added, url kept
    const p1 = store.update(created.uuid, { headers: { 'X-Tenant': null, 'X-New': 'v' } });
    expect(Object.keys(p1.headers).sort()).toEqual(['X-New', 'authorization']);
    expect(p1.url).toBe('https://example.com/a');
    // all headers cleared
    expect(store.update(created.uuid, { headers: null }).headers).toEqual({});
    expect(store.update(created.uuid, { url: 'https://example.com/b' }).url).toBe('https://example.com/b');

    expect(codeOf(() => store.update(created.uuid, { url: null }))).toBe('invalid_webhook_url');
    expect(codeOf(() => store.update(created.uuid, { url: 'not a url' }))).toBe('invalid_webhook_url');
    expect(codeOf(() => store.update(created.uuid, { uuid: created.uuid }))).toBe('immutable_webhook_uuid');
    expect(codeOf(() => store.update(created.uuid, { isEditable: false }))).toBe('immutable_webhook_is_editable');
    expect(codeOf(() => store.update(created.uuid, { color: 1 }))).toBe('bad_request');
    expect(codeOf(() => store.update(created.uuid, { headers: { 'bad name': 'x' } }))).toBe('invalid_webhook_headers');
    expect(codeOf(() => store.update(created.uuid, { headers: 'x' }))).toBe('invalid_webhook_headers');
    expect(codeOf(() => store.create({}))).toBe('invalid_webhook_url');
    expect(codeOf(() => store.get('nope'))).toBe('invalid_webhook_uuid');
    expect(codeOf(() => store.get('5b3c2a35-8a8e-4b53-9a53-5a3e7a1f0001'))).toBe('webhook_not_found');

    store.delete(created.uuid);
    expect(codeOf(() => store.get(created.uuid))).toBe('webhook_not_found');
    expect(codeOf(() => store.delete(created.uuid))).toBe('webhook_not_found');
  });

  it('keeps at most 20 runtime webhooks, the instance one aside', () => {
    const store = new WebhookStore(env, { url: 'http://example.com/cli' });
    for (let i = 0; i < 20; i++) store.create({ url: `https://example.com/${i}` });
    expect(codeOf(() => store.create({ url: 'https://example.com/21' }))).toBe('invalid_webhooks');
    expect(store.list().results).toHaveLength(21);
  });
});

describe('WebhookNotifier', () => {
  let receiver: Receiver;
  let logs: string[];
  let dir: string;
  let env: RootDatabase;
  let outbox: WebhookOutbox;
  beforeEach(async () => {
    receiver = new Receiver();
    await receiver.start();
    logs = [];
    dir = mkdtempSync(join(tmpdir(), 'search-outbox-'));
    env = open({ path: dir, maxDbs: 4 });
    outbox = new WebhookOutbox(env);
  });
  afterEach(async () => {
    await receiver.stop();
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const targets = (url: string, headers: Record<string, string> = {}) => ({ targets: () => [{ uuid: 'u', url, headers }] });
  const notifier = (o: Omit<NotifierOptions, 'outbox' | 'log'>) => new WebhookNotifier({ ...o, outbox, log: (l, m) => logs.push(`${l} ${m}`) });
  /** A batch finished: its notification is recorded (as the write thread does) and the notifier told. */
  const finish = (n: WebhookNotifier, batchUid: number, tasks: Task[] = [task(batchUid, batchUid)], at = Date.now()) => {
    env.transactionSync(() => outbox.record(batchUid, tasks, at));
    n.kick();
  };

  it('posts one gzip NDJSON call per batch, one line per task, with the webhook headers', async () => {
    const n = notifier({ store: targets(receiver.url, { Authorization: 'Bearer hook-secret', 'X-Extra': 'yes' }), policy: LOOPBACK });
    n.kick();
    const batch = [task(1, 7), task(2, 7), task(3, 7)];
    finish(n, 7, batch);
    await n.idle();
    expect(receiver.calls).toHaveLength(1);
    const call = receiver.calls[0]!;
    expect(call.method).toBe('POST');
    expect(call.path).toBe('/hook');
    expect(call.headers['content-encoding']).toBe('gzip');
    expect(call.headers['content-type']).toBe('application/x-ndjson');
    expect(call.headers.authorization).toBe('Bearer hook-secret');
    expect(call.headers['x-extra']).toBe('yes');
    expect(call.raw).toBe(toNdjson(batch));
    expect(call.lines).toEqual(batch);
    // delivered to every webhook: nothing is kept
    expect(outbox.size).toBe(0);
    await n.close();
  });

  it('records nothing while no webhook is configured', async () => {
    const n = notifier({ store: { targets: () => [] } });
    n.kick();
    finish(n, 1);
    expect(outbox.size).toBe(0);
    await n.close();
  });

  it('refuses loopback receivers unless the network is allowed, without retrying, and counts the drop', async () => {
    const n = notifier({ store: targets(receiver.url), policy: AddressPolicy.publicOnly(), retryDelayMs: 1 });
    n.kick();
    finish(n, 1);
    await n.idle();
    expect(receiver.calls).toHaveLength(0);
    expect(logs.join('\n')).toMatch(/private, loopback and link-local/);
    expect(logs.filter((l) => l.startsWith('debug'))).toHaveLength(0);
    expect(n.dropped).toBe(1);
  });

  it('retries failures with backoff until the receiver answers, and logs without secrets', async () => {
    receiver.status = 503;
    const n = notifier({ store: targets(`${receiver.url}?token=query-secret`, { Authorization: 'Bearer header-secret' }), policy: LOOPBACK, retryDelayMs: 10 });
    n.kick();
    finish(n, 1);
    await receiver.waitForCalls(4);
    receiver.status = 200;
    await n.idle();
    const text = logs.join('\n');
    expect(text).toMatch(/batch 1: attempt 1 failed \(HTTP 503\)/);
    expect(text).not.toContain('query-secret');
    expect(text).not.toContain('header-secret');
    expect(receiver.calls.at(-1)!.lines.map((l) => l.uid)).toEqual([1]);
    expect(n.dropped).toBe(0);
    await n.close();
  });

  it('a receiver refusing a call for good (4xx) drops that notification for it, and the next ones still go', async () => {
    receiver.status = 400;
    const n = notifier({ store: targets(receiver.url), policy: LOOPBACK, retryDelayMs: 1 });
    n.kick();
    finish(n, 1);
    await n.idle();
    receiver.status = 200;
    finish(n, 2);
    await n.idle();
    expect(receiver.calls.map((c) => c.lines[0]!.batchUid)).toEqual([1, 2]);
    expect(n.dropped).toBe(1);
    expect(logs.join('\n')).toMatch(/could not deliver batch 1: HTTP 400/);
  });

  it('drops undelivered notifications past the age and count limits, logging and counting each', async () => {
    await receiver.stop(); // down
    const n = notifier({ store: targets(receiver.url), policy: LOOPBACK, retryDelayMs: 5, maxRetryDelayMs: 20, maxPending: 3, maxAgeMs: 60_000 });
    n.kick();
    finish(n, 0, undefined, Date.now() - 120_000); // already too old
    for (let b = 1; b <= 5; b++) finish(n, b);
    await new Promise((r) => setTimeout(r, 50));
    // batch 0 by age, 1 and 2 by count: the newest three are kept
    expect(n.dropped).toBe(3);
    expect(outbox.oldest(10).map((e) => e.batchUid)).toEqual([3, 4, 5]);
    expect(logs.filter((l) => /dropped undelivered/.test(l))).toHaveLength(3);
    await receiver.start();
    await n.idle();
    expect(receiver.calls.map((c) => c.lines[0]!.batchUid)).toEqual([3, 4, 5]);
    await n.close();
  });

  it('delivers the batches to one webhook in order, even when an earlier call is slow', async () => {
    const { createServer } = await import('node:http');
    const order: number[] = [];
    const slowFirst = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const uid = Number(JSON.parse(gunzipSync(Buffer.concat(chunks)).toString().split('\n')[0]!).batchUid);
        setTimeout(() => {
          order.push(uid);
          res.end();
        }, uid === 0 ? 150 : 0);
      });
    });
    await new Promise<void>((r) => slowFirst.listen(0, '127.0.0.1', r));
    const port = (slowFirst.address() as { port: number }).port;
    const n = notifier({ store: targets(`http://127.0.0.1:${port}/`), policy: LOOPBACK });
    n.kick();
    for (let b = 0; b < 5; b++) finish(n, b);
    await n.idle();
    expect(order).toEqual([0, 1, 2, 3, 4]);
    await n.close();
    await new Promise<void>((r) => slowFirst.close(() => r()));
  });

  it('never blocks the caller, and closing keeps what is undelivered for the next start', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => undefined); // accepts, never responds
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const n = notifier({ store: targets(`http://127.0.0.1:${port}/`), policy: LOOPBACK, timeoutMs: 200 });
    n.kick();
    const started = performance.now();
    for (let b = 0; b < 50; b++) finish(n, b);
    expect(performance.now() - started).toBeLessThan(1000);
    await n.close();
    expect(outbox.size).toBe(50);
    silent.closeAllConnections();
    await new Promise<void>((r) => silent.close(() => r()));

    // a new notifier (a restart) delivers them all, in order
    const again = notifier({ store: targets(receiver.url), policy: LOOPBACK });
    again.kick();
    await again.idle();
    expect(receiver.calls.map((c) => c.lines[0]!.batchUid)).toEqual([...Array(50).keys()]);
    expect(outbox.size).toBe(0);
    await again.close();
  });
});
