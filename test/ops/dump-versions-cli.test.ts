/**
 * A user moving from Meilisearch 0.2x: `search serve --import-dump` with an old dump (v2), then
 * the data through HTTP, and the enqueued task of the dump processed by the server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { BIN, json, killAll, serve, waitTask } from '../cli/serve-process.js';

const FIXTURES = join(process.cwd(), 'fixtures', 'dumps');
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'dump-versions-cli-'));
});
afterEach(() => killAll());
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

test('serve --import-dump with a Meilisearch 0.22 dump (v2): documents, converted settings and task history over HTTP', async () => {
  const served = await serve(['--db-path', join(root, 'v2.ms'), '--import-dump', join(FIXTURES, 'v2.dump')]);
  expect(served.output()).toMatch(/dump v2, written by version 0\.22\.0/);
  const settings = await json(`${served.url}/indexes/movies/settings`);
  expect(settings.body.rankingRules).toEqual(['words', 'typo', 'proximity', 'attribute', 'sort', 'release_date:asc', 'exactness']);
  const search = await json(`${served.url}/indexes/movies/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ q: 'taxi', filter: 'genres = Drama' }),
  });
  expect(search.body.hits.map((h: { title: string }) => h.title)).toEqual(['Taxi Driver']);
  // the addition that was enqueued when the dump was made runs on the new server
  expect((await waitTask(served.url, 3)).status).toBe('succeeded');
  expect((await json(`${served.url}/indexes/movies/documents/5`)).body).toEqual({ id: 5, title: 'Added Later', genres: ['Drama'] });
  const failed = await json(`${served.url}/tasks/2`);
  expect(failed.body).toMatchObject({ type: 'documentDeletion', status: 'failed', error: { code: 'document_not_found' } });
});

test('search dump import refuses a dump it cannot read, with exit code 1 and no database', async () => {
  const target = join(root, 'nope.ms');
  const result = await execa('node', [BIN, 'dump', 'import', join(FIXTURES, 'make-dumps.mjs'), '--db-path', target], { reject: false });
  expect(result.exitCode).toBe(1);
  // oclif wraps long messages over ` ›`-prefixed lines
  expect(result.stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ')).toMatch(/cannot be imported: the archive (is corrupt or truncated|cannot be read)/);
  expect(existsSync(target)).toBe(false);
});
