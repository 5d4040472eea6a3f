/** `search serve` with the security options, run as operators do (the built binary). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, json, serve, waitTask } from '../cli/serve-process.js';
import { Receiver } from '../webhooks/receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'search-serve-auth-'));
const env = { PATH: process.env.PATH ?? '' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function failingServe(args: string[], extraEnv: Record<string, string> = {}) {
  return execa('node', [BIN, 'serve', '--http-addr', '127.0.0.1:0', '--db-path', join(dir, 'refused'), ...args], {
    env: { ...env, ...extraEnv },
    extendEnv: false,
    reject: false,
    all: true,
    timeout: 30_000,
  });
}

describe('search serve security options', () => {
  it('refuses to start in production without a master key of at least 16 bytes', async () => {
    const none = await failingServe(['--env', 'production']);
    expect(none.exitCode).toBe(2);
    expect(none.all).toMatch(/must provide a master key/);
    expect(none.all).not.toMatch(/Server listening/);

    const short = await failingServe(['--env', 'production', '--master-key', 'tiny-secret']);
    expect(short.exitCode).toBe(2);
    expect(short.all).toMatch(/at least 16 bytes/);
    expect(short.all).not.toContain('tiny-secret');

    const badNetwork = await failingServe(['--experimental-allowed-ip-networks', '10.0.0.0/99']);
    expect(badNetwork.exitCode).toBe(2);
    expect(badNetwork.all).toMatch(/not a valid network/);

    const badHook = await failingServe(['--task-webhook-url', 'ftp://example.com/x']);
    expect(badHook.exitCode).toBe(2);
    expect(badHook.all).toMatch(/--task-webhook-url/);
  });

  it('protects every route but /health with the master key (MEILI_* alias accepted)', async () => {
    const master = 'cli-master-key-0123456789abcdef';
    const served = await serve(['--db-path', join(dir, 'prod'), '--env', 'production', '--log-level', 'off'], {
      ...env,
      MEILI_MASTER_KEY: master,
    });
    try {
      expect((await json(`${served.url}/health`)).status).toBe(200);
      const anonymous = await json(`${served.url}/indexes`);
      expect([anonymous.status, anonymous.body.code]).toEqual([401, 'missing_authorization_header']);
      const wrong = await json(`${served.url}/indexes`, { headers: { authorization: 'Bearer nope' } });
      expect([wrong.status, wrong.body.code]).toEqual([403, 'invalid_api_key']);
      const keys = await json(`${served.url}/keys`, { headers: { authorization: `Bearer ${master}` } });
      expect(keys.status).toBe(200);
      const names = keys.body.results.map((k: { name: string }) => k.name).sort();
      expect(names).toEqual(['Default Admin API Key', 'Default Chat API Key', 'Default Read-Only Admin API Key', 'Default Search API Key']);
      const search = keys.body.results.find((k: { name: string }) => k.name === 'Default Search API Key');
      const asSearch = await json(`${served.url}/indexes`, { headers: { authorization: `Bearer ${search.key}` } });
      expect([asSearch.status, asSearch.body.code]).toEqual([403, 'invalid_api_key']);
      expect(served.output()).toMatch(/master key has been set/);
    } finally {
      served.process.kill('SIGTERM');
      await served.process;
    }
    expect(served.output()).not.toContain(master);
  });

  it('sends task webhooks configured through the environment', async () => {
    const receiver = new Receiver();
    await receiver.start();
    const served = await serve(['--db-path', join(dir, 'hooks'), '--log-level', 'off'], {
      ...env,
      SEARCH_TASK_WEBHOOK_URL: receiver.url,
      MEILI_TASK_WEBHOOK_AUTHORIZATION_HEADER: 'Bearer env-hook-secret-value',
      SEARCH_EXPERIMENTAL_ALLOWED_IP_NETWORKS: '127.0.0.0/8',
    });
    try {
      const task = await json(`${served.url}/indexes/movies/documents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([{ id: 1, title: 'x' }]),
      });
      await waitTask(served.url, task.body.taskUid);
      await receiver.waitForCalls(1);
      expect(receiver.calls[0]!.lines.map((l) => l.uid)).toEqual([task.body.taskUid]);
      expect(receiver.calls[0]!.headers.authorization).toBe('Bearer env-hook-secret-value');
      const hooks = await json(`${served.url}/webhooks`);
      expect(hooks.body.results).toHaveLength(1);
      expect(hooks.body.results[0].isEditable).toBe(false);
      expect(JSON.stringify(hooks.body)).not.toContain('env-hook-secret-value');
    } finally {
      served.process.kill('SIGTERM');
      await served.process;
      await receiver.stop();
    }
  });

  it('warns in development without a master key, keeps /keys closed and logs no secret', async () => {
    // debug logs every request: neither header values nor key values in paths may appear
    const served = await serve(['--db-path', join(dir, 'dev'), '--log-level', 'debug'], env);
    try {
      expect((await json(`${served.url}/indexes`, { headers: { authorization: 'Bearer HEADER-SECRET-1' } })).status).toBe(200);
      const keys = await json(`${served.url}/keys/PATH-SECRET-2`);
      expect([keys.status, keys.body.code]).toEqual([401, 'missing_master_key']);
      expect((await json(`${served.url}/indexes?api_key=QUERY-SECRET-3`)).status).toBe(400);
      expect(served.output()).toMatch(/No master key was found/);
    } finally {
      served.process.kill('SIGTERM');
      await served.process;
    }
    expect(served.output()).toMatch(/keys\/\[redacted\]/);
    for (const secret of ['HEADER-SECRET-1', 'PATH-SECRET-2', 'QUERY-SECRET-3']) expect(served.output()).not.toContain(secret);
  });
});
