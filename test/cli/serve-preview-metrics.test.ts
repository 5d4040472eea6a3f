/**
 * `search serve` as operators run it: the preview page at `/` and when it is off, and
 * `/metrics` behind its experimental option (flag or environment), with searches answered by a
 * search thread whose query embeddings reach the metrics of the serving thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../embedders/fake-provider.js';
import { books } from '../data.js';
import { json, killAll, serve, waitTask } from './serve-process.js';

const RUNNING = { status: 'Meilisearch is running' };

describe('serve: the preview page and /metrics', () => {
  let dir: string;
  let n = 0;
  const dbPath = () => join(dir, `db${n++}`);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'search-serve-ui-'));
  });
  afterEach(() => killAll());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the page and its files at / in development, and /metrics says the feature is off', async () => {
    const { url } = await serve(['--db-path', dbPath()]);
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // the page runs nothing but its own files and talks to this server only
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    for (const asset of ['preview.js', 'preview.css', 'licenses.txt']) {
      expect(html).toContain(`"${asset}"`);
      const file = await fetch(`${url}/${asset}`);
      expect(file.status).toBe(200);
      expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const metrics = await json(`${url}/metrics`);
    expect(metrics.status).toBe(400);
    expect(metrics.body.code).toBe('feature_not_enabled');
    // the runtime flag turns it on, as the reference's PATCH /experimental-features does
    const patched = await json(`${url}/experimental-features`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metrics: true }) });
    expect(patched.body.metrics).toBe(true);
    const scrape = await fetch(`${url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toMatch(/^# HELP /m);
  });

  it('answers the running status at / with --no-preview-page and in production, and leaves the page files unserved', async () => {
    for (const args of [['--no-preview-page'], ['--env', 'production', '--master-key', 'a-master-key-of-sixteen-bytes-or-more']]) {
      const { url } = await serve(['--db-path', dbPath(), ...args]);
      expect(await json(`${url}/`)).toEqual({ status: 200, body: RUNNING });
      expect((await json(`${url}/preview.js`)).status).toBe(404);
      killAll();
    }
  });

  describe('with MEILI_EXPERIMENTAL_ENABLE_METRICS and a search thread', () => {
    let provider: FakeProvider;
    beforeAll(async () => {
      provider = await startFakeProvider(8);
    });
    afterAll(() => provider.close());

    it('counts the query embeddings made in the search thread', async () => {
      const { url } = await serve(
        ['--db-path', dbPath(), '--search-threads', '1', '--experimental-allowed-ip-networks', '127.0.0.0/8'],
        { MEILI_EXPERIMENTAL_ENABLE_METRICS: 'true' },
      );
      const post = (path: string, body: unknown, method = 'POST') =>
        json(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await waitTask(url, (await post('/indexes/books/documents', books().slice(0, 20))).body.taskUid)).status).toBe('succeeded');
      const settings = await post('/indexes/books/settings', { embedders: { toy: { source: 'ollama', url: `${provider.url}/api/embed`, model: 'toy' } } }, 'PATCH');
      expect((await waitTask(url, settings.body.taskUid)).status).toBe('succeeded');

      const embedderCalls = async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return Number(/^search_embedder_requests_total\{source="ollama"\} (\d+)$/m.exec(text)?.[1] ?? 0);
      };
      const before = await embedderCalls();
      expect(before).toBeGreaterThan(0); // the documents, embedded in the write thread
      const search = await post('/indexes/books/search', { q: 'harry', hybrid: { embedder: 'toy', semanticRatio: 0.9 } });
      expect(search.status).toBe(200);
      expect(await embedderCalls()).toBe(before + 1);
    });
  });
});
