/**
 * A 5xx is never silent: the server logs it with the request id and the stack of its cause, even
 * with request logging off, and the client gets the generic internal error body.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import type { HttpEngine } from '../../src/http/engine-port.js';
import { createServer, type SearchServer } from '../../src/http/server.js';
import { expectErrorShape } from './harness.js';

let dir: string;
let engine: Engine;
let server: SearchServer;
let url: string;
const logged: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'search-errors-'));
  engine = await Engine.open({ dbPath: join(dir, 'data.ms'), logLevel: 'off', searchThreads: 1 });
  // A fault inside the engine (a bug, a failing disk): stats() throws an error that is no SearchError.
  const faulty: HttpEngine = Object.assign(Object.create(engine) as Engine, {
    stats(): never {
      throw new TypeError('disk went away at stats');
    },
  });
  server = createServer(faulty, { logServerError: (line) => logged.push(line) });
  url = (await server.listen('127.0.0.1:0')).url;
});
afterAll(async () => {
  await server.close();
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

test('an internal error answers the generic 500 body and logs its stack with the request id', async () => {
  const response = await fetch(`${url}/stats`);
  expect(response.status).toBe(500);
  const body = await response.json();
  expectErrorShape(body, 'internal');
  expect(body.message).toBe('An internal error has occurred.');
  expect(logged).toHaveLength(1);
  const [line] = logged;
  expect(line).toMatch(/^500 internal answering GET \/stats \(request req-[\w-]+\): /);
  expect(line).toContain('TypeError: disk went away at stats');
  expect(line).toMatch(/\n\s+at .*server-errors\.test\.ts/); // the stack of the cause, not of the wrapper
});

test('a 4xx is not logged as a server error', async () => {
  logged.length = 0;
  expect((await fetch(`${url}/indexes/nope/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
  expect(logged).toEqual([]);
});
