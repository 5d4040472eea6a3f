/** `search serve --experimental-contains-filter`: a launch flag turns its feature on for that run only. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { json, killAll, serve } from './serve-process.js';

afterEach(killAll);

test('the launch flag shows in GET /experimental-features for its run, and not after a restart without it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'search-cli-features-'));
  const db = join(dir, 'data.ms');
  const env = { PATH: process.env.PATH ?? '' };
  const flagged = await serve(['--db-path', db, '--log-level', 'off', '--experimental-contains-filter'], env);
  expect((await json(`${flagged.url}/experimental-features`)).body).toMatchObject({ containsFilter: true, metrics: false });
  flagged.process.kill('SIGTERM');
  await flagged.process;

  const plain = await serve(['--db-path', db, '--log-level', 'off'], env);
  expect((await json(`${plain.url}/experimental-features`)).body.containsFilter).toBe(false);
  plain.process.kill('SIGTERM');
  await plain.process;
  rmSync(dir, { recursive: true, force: true });
});
