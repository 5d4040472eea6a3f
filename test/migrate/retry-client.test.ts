import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SearchClient } from '../../src/client/index.js';
import { MigrationError } from '../../src/migrate/errors.js';
import { RemoteTarget } from '../../src/migrate/remote-target.js';
import { backoffDelay, parseRetryAfter } from '../../src/migrate/retry.js';

describe('Retry-After and backoff', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('parses delta-seconds, fractional seconds and HTTP dates; ignores garbage', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('backs off exponentially with jitter, and lets the server decide when it says so', () => {
    const p = { retries: 5, baseDelayMs: 100, maxDelayMs: 1000, random: () => 1 };
    expect([0, 1, 2, 3, 4].map((a) => backoffDelay(p, a))).toEqual([100, 200, 400, 800, 1000]);
    expect(backoffDelay({ ...p, random: () => 0 }, 2)).toBe(200);
    expect(backoffDelay(p, 0, 5000)).toBe(5000);
    expect(backoffDelay({ ...p, maxRetryAfterMs: 2000 }, 0, 5000)).toBe(2000);
  });
});

describe('client and remote target against a fake server', () => {
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    close = null;
  });

  async function fake(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const s = createServer(handler);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    close = () => new Promise((r) => s.close(() => r()));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  it('retries 429 and 503 honouring Retry-After, then succeeds', async () => {
    let calls = 0;
    const url = await fake((_req, res) => {
      calls++;
      if (calls === 1) res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"message":"slow down","code":"too_many_requests"}');
      else if (calls === 2) res.writeHead(503).end('busy');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"available"}');
    });
    const slept: number[] = [];
    const client = new SearchClient({ url, retry: { baseDelayMs: 10, sleep: async (ms) => void slept.push(ms) } });
    expect(await client.health()).toEqual({ status: 'available' });
    expect(calls).toBe(3);
    expect(slept[0]).toBe(1000);
  });

  it('maps Meilisearch error bodies; the remote target reports auth failures as auth', async () => {
    const url = await fake((req, res) => {
      if (req.url === '/health') res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"available"}');
      else res.writeHead(403, { 'content-type': 'application/json' }).end('{"message":"The provided API key is invalid.","code":"invalid_api_key","type":"auth","link":""}');
    });
    const err = await new RemoteTarget(url, 'bad').check().catch((e: MigrationError) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect(err).toMatchObject({ kind: 'auth' });
    expect(err.message).toMatch(/refused to list indexes.*403 invalid_api_key.*--api-key/);
  });
});
