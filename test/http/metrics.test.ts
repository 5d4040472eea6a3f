/**
 * `GET /metrics` scraped over real HTTP and parsed as Prometheus text: the experimental gate,
 * the `metrics.get` action on every index, and the values after real traffic (documents, a
 * search, a batch, an embedder that succeeds then fails, a webhook that receives the batch).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedderCallTotals } from '../../src/engine/embedders/call-counts.js';
import { engineMetricsSources, ServerMetrics } from '../../src/http/metrics.js';
import { metricsRoutes } from '../../src/http/routes/metrics.js';
import { startSecured, type SecuredHarness } from '../auth/harness.js';
import { startFakeProvider, type FakeProvider } from '../embedders/fake-provider.js';
import { books } from '../data.js';
import { expectErrorShape } from './harness.js';

const MASTER = 'a-master-key-of-sixteen-bytes-or-more';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format (version 0.0.4): every sample, checked against its # TYPE line. */
function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    // NaN in any case, as Prometheus reads it (prom-client writes `Nan` for a mean with no samples yet)
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (-?[\d.e+-]+|[Nn]a[Nn]|\+Inf|-Inf)$/.exec(line);
    if (!sample) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    const family = sample[1]!.replace(/_(bucket|sum|count)$/, '');
    if (!types.has(sample[1]!) && !types.has(family)) throw new Error(`sample without a # TYPE line: ${line}`);
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { samples, types };
}

function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

// the write side's embedder calls reach the serving thread's totals from a thread and from a process
describe.each(['thread', 'process'] as const)('GET /metrics (write side: a %s)', (writeHost) => {
  let h: SecuredHarness;
  let enabled = false;
  let provider: FakeProvider;
  let receiver: Server;
  let received = 0;

  let before = { calls: 0, failures: 0 };

  beforeAll(async () => {
    before = { ...(embedderCallTotals().ollama ?? before) };
    provider = await startFakeProvider(8);
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    h = await startSecured({
      writeHost,
      masterKey: MASTER,
      realSearch: true,
      allowedIpNetworks: '127.0.0.0/8',
      taskWebhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      routes: (engine, security) => [metricsRoutes(new ServerMetrics(engineMetricsSources(engine, security.notifier)), () => enabled)],
    });
  });

  afterAll(async () => {
    await h?.stop();
    await provider?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const wait = async (reply: Promise<{ status: number; body: any }>) => {
    const { body } = await reply;
    const task = (await h.engine.waitForTask(body.taskUid, { timeoutMs: 60_000 })) as { status: string; error: unknown };
    expect(task.error ?? null).toBeNull();
  };

  it('answers feature_not_enabled (400) while the experimental feature is off', async () => {
    const reply = await h.request('GET', '/metrics', { key: MASTER });
    expect(reply.status).toBe(400);
    expectErrorShape(reply.body, 'feature_not_enabled');
  });

  it('needs a key with metrics.get on every index', async () => {
    enabled = true;
    const missing = await h.request('GET', '/metrics');
    expect(missing.status).toBe(401);
    expectErrorShape(missing.body, 'missing_authorization_header');

    const create = (actions: string[], indexes: string[]) =>
      h.request('POST', '/keys', { key: MASTER, json: { actions, indexes, expiresAt: null } }).then((r) => r.body.key as string);
    const searchOnly = await create(['search'], ['*']);
    const oneIndex = await create(['metrics.get'], ['books']);
    const everywhere = await create(['metrics.get'], ['*']);

    for (const key of [searchOnly, oneIndex]) {
      const refused = await h.request('GET', '/metrics', { key });
      expect(refused.status).toBe(403);
      expectErrorShape(refused.body, 'invalid_api_key');
    }
    const allowed = await h.request('GET', '/metrics', { key: everywhere });
    expect(allowed.status).toBe(200);
    expect(() => parsePrometheus(allowed.text)).not.toThrow();
  });

  it('reports requests, searches, tasks, batches, sizes, embedder calls and webhook deliveries', async () => {
    enabled = true;
    await wait(h.request('POST', '/indexes/books/documents', { key: MASTER, json: books().slice(0, 50) }));
    await wait(
      h.request('PATCH', '/indexes/books/settings', {
        key: MASTER,
        json: { embedders: { toy: { source: 'ollama', url: `${provider.url}/api/embed`, model: 'toy', documentTemplate: '{{doc.title}}' } } },
      }),
    );
    const search = await h.request('POST', '/indexes/books/search', { key: MASTER, json: { q: 'harry', hybrid: { embedder: 'toy', semanticRatio: 0.5 } } });
    expect(search.status).toBe(200);
    provider.failures.push(400); // a query embedding refused by the provider: the search falls back to keywords
    expect((await h.request('POST', '/indexes/books/search', { key: MASTER, json: { q: 'potter', hybrid: { embedder: 'toy', semanticRatio: 0.5 } } })).status).toBe(200);
    await expect.poll(() => received, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);

    const reply = await h.request('GET', '/metrics', { key: MASTER });
    expect(reply.status).toBe(200);
    const { samples, types } = parsePrometheus(reply.text);
    expect(types.get('meilisearch_http_requests_total')).toBe('counter');
    expect(types.get('search_search_duration_seconds')).toBe('histogram');

    expect(valueOf(samples, 'meilisearch_http_requests_total', { method: 'POST', path: '/indexes/:indexUid/documents', status: '202' })).toBe(1);
    expect(valueOf(samples, 'meilisearch_http_requests_total', { method: 'GET', path: '/metrics', status: '403' })).toBe(2);
    expect(valueOf(samples, 'search_search_duration_seconds_count', { route: '/indexes/:indexUid/search' })).toBe(2);
    expect(valueOf(samples, 'meilisearch_nb_tasks', { kind: 'statuses', value: 'succeeded' })).toBe(2);
    expect(valueOf(samples, 'meilisearch_nb_tasks', { kind: 'types', value: 'settingsUpdate' })).toBe(1);
    expect(valueOf(samples, 'meilisearch_nb_tasks', { kind: 'indexes', value: 'books' })).toBe(2);
    expect(valueOf(samples, 'meilisearch_nb_tasks', { kind: 'statuses', value: 'enqueued' })).toBe(0);
    expect(valueOf(samples, 'meilisearch_index_docs_count', { index: 'books' })).toBe(50);
    expect(valueOf(samples, 'meilisearch_index_count')).toBe(1);
    expect(valueOf(samples, 'search_index_db_size_bytes', { index: 'books' })).toBeGreaterThan(0);
    expect(valueOf(samples, 'meilisearch_db_size_bytes')).toBeGreaterThanOrEqual(valueOf(samples, 'search_index_db_size_bytes', { index: 'books' })!);
    expect(valueOf(samples, 'search_batch_duration_seconds_count')).toBe(2);
    // the settings batch embedded the 50 documents; the two searches embedded their query, the second one failing
    // (the totals are the process's: the first describe's calls are counted in the second's)
    expect(valueOf(samples, 'search_embedder_requests_total', { source: 'ollama' })).toBeGreaterThanOrEqual(before.calls + 3);
    expect(valueOf(samples, 'search_embedder_request_failures_total', { source: 'ollama' })).toBe(before.failures + 1);
    expect(valueOf(samples, 'search_webhook_deliveries_total', { outcome: 'delivered' })).toBe(received);
    expect(valueOf(samples, 'search_webhook_deliveries_total', { outcome: 'failed' })).toBe(0);
    expect(valueOf(samples, 'meilisearch_is_indexing')).toBe(0);
    // the serving process itself
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
  });

  it('counts the searches answered from the answer cache', async () => {
    enabled = true;
    const hits = async () => {
      const { samples, types } = parsePrometheus((await h.request('GET', '/metrics', { key: MASTER })).text);
      expect(types.get('search_result_cache_hits_total')).toBe('counter');
      return valueOf(samples, 'search_result_cache_hits_total') ?? 0;
    };
    const before = await hits();
    // the same search four times: each search thread computes it once at most, then answers from its cache
    for (let i = 0; i < 4; i++) expect((await h.request('POST', '/indexes/books/search', { key: MASTER, json: { q: 'the cache' } })).status).toBe(200);
    expect(await hits()).toBeGreaterThanOrEqual(before + 2);
    // a write to the index: the next identical search is computed again
    await wait(h.request('POST', '/indexes/books/documents', { key: MASTER, json: [{ id: 'cache-1', title: 'the cache' }] }));
    const afterWrite = await hits();
    const found = await h.request('POST', '/indexes/books/search', { key: MASTER, json: { q: 'the cache' } });
    expect(found.body.hits.some((hit: { id: unknown }) => hit.id === 'cache-1')).toBe(true);
    expect(await hits()).toBe(afterWrite);
  });
});
