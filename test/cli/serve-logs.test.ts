/**
 * `search serve --experimental-enable-logs-route`: `POST /logs/stderr` changes, at run time, what
 * the built server writes on its stderr; `--experimental-logs-mode json` writes it as JSON lines.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { json, killAll, serve, type Served } from './serve-process.js';

afterEach(killAll);

const env = { PATH: process.env.PATH ?? '' };

async function health(url: string, agent: string): Promise<void> {
  expect((await fetch(`${url}/health`, { headers: { 'user-agent': agent } })).status).toBe(200);
}

/** Wait until the server's output holds `text` (stderr is written as the requests end). */
async function outputHolds(served: Served, text: string): Promise<void> {
  for (let attempt = 0; !served.output().includes(text); attempt++) {
    if (attempt > 200) throw new Error(`never written: ${text}\n${served.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test('POST /logs/stderr turns request lines on at run time, in the human format', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-cli-logs-'));
  const served = await serve(['--db-path', join(dir, 'data.ms'), '--log-level', 'info', '--experimental-enable-logs-route'], env);
  await health(served.url, 'before-the-change');
  const changed = await json(`${served.url}/logs/stderr`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ target: 'search::http=info' }),
  });
  expect(changed.status).toBe(204);
  await health(served.url, 'after-the-change');
  await outputHolds(served, 'user_agent=after-the-change');
  expect(served.output()).toMatch(/Z {2}INFO HTTP request\{method=GET host=\S+ route=\/health path=\/health query_parameters= user_agent=after-the-change status_code=200\}: search::http: close time\.busy=/);
  // at info, request lines were off until the change
  expect(served.output()).not.toContain('before-the-change');
  served.process.kill('SIGTERM');
  await served.process;
  rmSync(dir, { recursive: true, force: true });
});

test('--experimental-logs-mode json writes stderr as JSON lines', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-cli-logs-'));
  const served = await serve(['--db-path', join(dir, 'data.ms'), '--log-level', 'debug', '--experimental-logs-mode', 'json'], env);
  await health(served.url, 'json-mode');
  await outputHolds(served, '"user_agent":"json-mode"');
  const line = served
    .output()
    .split('\n')
    .find((l) => l.includes('"user_agent":"json-mode"'))!;
  expect(JSON.parse(line)).toMatchObject({ level: 'INFO', target: 'search::http', fields: { message: 'close' }, span: { name: 'HTTP request', route: '/health', status_code: 200 } });
  served.process.kill('SIGTERM');
  await served.process;
  rmSync(dir, { recursive: true, force: true });
});
