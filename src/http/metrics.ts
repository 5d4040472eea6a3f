/**
 * The metrics behind `GET /metrics`, in a prom-client registry of their own (one per server).
 *
 * Everything is gathered where the serving thread can see it: requests through a fastify hook,
 * batches through the `batchFinished` events the write thread already sends, sizes and task
 * counts read from the stores at scrape time, embedder calls as counted by embedders/call-counts
 * (worker threads report theirs), answers given from the answer cache (search threads report
 * theirs, search/result-cache.ts), webhook outcomes from the notifier. Names shared with the
 * reference (`meilisearch_*`) keep their meaning, so existing dashboards work; what the
 * reference lacks is named `search_*`; prom-client's standard `process_*` and `nodejs_*` metrics
 * describe the serving process.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { embedderCallTotals } from '../engine/embedders/call-counts.js';
import { cacheHitTotal } from '../engine/search/result-cache.js';
import type { Engine } from '../engine/engine.js';
import type { BatchFinished } from '../engine/tasks/scheduler.js';
import { TASK_STATUSES, TASK_TYPES, type GlobalStats, type Task, type TaskFilter } from '../engine/types.js';

/** What the metrics read, at scrape time or as events. */
export interface MetricsSources {
  stats(): GlobalStats;
  countTasks(filter: TaskFilter): number;
  /** The oldest task not finished yet (enqueued or processing), if any. */
  oldestUnfinishedTask(): Task | null;
  isIndexing(): boolean;
  /** Bytes on disk of one index's environment. */
  indexDatabaseSize(uid: string): number;
  onBatchFinished(listener: (event: BatchFinished) => void): void;
  webhookOutcomes(): { delivered: number; failed: number };
}

/** The route patterns whose latency is the search latency. */
const SEARCH_ROUTES = new Set(['/indexes/:indexUid/search', '/multi-search', '/indexes/:indexUid/facet-search', '/indexes/:indexUid/similar']);

/** Allocated bytes of the files under `dir` (LMDB data files are sparse: blocks, not lengths). */
function allocatedBytes(dir: string): number {
  let total = 0;
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) total += allocatedBytes(full);
      else if (entry.isFile()) total += statSync(full).blocks * 512;
    }
  } catch {
    // deleted meanwhile: counts as empty
  }
  return total;
}

export function engineMetricsSources(engine: Engine, webhooks: { outcomes: { delivered: number; failed: number } }): MetricsSources {
  return {
    stats: () => engine.stats(),
    countTasks: (filter) => engine.tasks.match(filter).size,
    oldestUnfinishedTask: () => engine.getTasks({ statuses: ['enqueued', 'processing'], reverse: true, limit: 1 }).results[0] ?? null,
    isIndexing: () => engine.scheduler.processingIndexUids().size > 0,
    indexDatabaseSize: (uid) => allocatedBytes(engine.indexes.get(uid).store.path),
    onBatchFinished: (listener) => engine.onBatchFinished(listener),
    webhookOutcomes: () => webhooks.outcomes,
  };
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'path' | 'status'>;
  private readonly responseTime: Histogram<'method' | 'path'>;
  private readonly searchLatency: Histogram<'route'>;

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'meilisearch_http_requests_total',
      help: 'HTTP requests, by method, route and status',
      labelNames: ['method', 'path', 'status'],
      registers,
    });
    this.responseTime = new Histogram({
      name: 'meilisearch_http_response_time_seconds',
      help: 'HTTP response times, by method and route',
      labelNames: ['method', 'path'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
      registers,
    });
    this.searchLatency = new Histogram({
      name: 'search_search_duration_seconds',
      help: 'Time to answer search requests (search, multi-search, facet search, similar), by route',
      labelNames: ['route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    // the process's own: memory, CPU, event-loop delay (what a slow HTTP thread shows first), GC
    collectDefaultMetrics({ register: this.registry });
    this.taskGauges(registers);
    this.storeGauges(registers);
    this.batchHistogram(registers);
    this.embedderCounters(registers);
    this.resultCacheCounter(registers);
    this.webhookCounters(registers);
  }

  /** Count every response of `app` (route patterns, not concrete paths, keep the label set bounded). */
  instrument(app: FastifyInstance): void {
    // a callback hook, not an async one: it runs on every request, and a promise per request costs
    app.addHook('onResponse', (request, reply, done) => {
      const path = request.routeOptions.url ?? 'unmatched';
      const seconds = reply.elapsedTime / 1000;
      this.requests.inc({ method: request.method, path, status: String(reply.statusCode) });
      this.responseTime.observe({ method: request.method, path }, seconds);
      if (SEARCH_ROUTES.has(path)) this.searchLatency.observe({ route: path }, seconds);
      done();
    });
  }

  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string> {
    this.scrapeNo++;
    return this.registry.metrics();
  }

  /** Counts scrapes: the store gauges read the engine's stats once per scrape. */
  private scrapeNo = 0;

  get contentType(): string {
    return this.registry.contentType;
  }

  private taskGauges(registers: Registry[]): void {
    const sources = this.sources;
    new Gauge({
      name: 'meilisearch_nb_tasks',
      help: 'Tasks in the queue, by status (kind="statuses"), type (kind="types") and index (kind="indexes")',
      labelNames: ['kind', 'value'],
      registers,
      collect() {
        this.reset();
        for (const status of TASK_STATUSES) this.set({ kind: 'statuses', value: status }, sources.countTasks({ statuses: [status] }));
        for (const type of TASK_TYPES) this.set({ kind: 'types', value: type }, sources.countTasks({ types: [type] }));
        for (const uid of Object.keys(sources.stats().indexes)) this.set({ kind: 'indexes', value: uid }, sources.countTasks({ indexUids: [uid] }));
      },
    });
    new Gauge({
      name: 'meilisearch_task_queue_latency_seconds',
      help: 'Age of the oldest task not finished yet (0 when the queue is empty)',
      registers,
      collect() {
        const oldest = sources.oldestUnfinishedTask();
        this.set(oldest ? Math.max(0, (Date.now() - Date.parse(oldest.enqueuedAt)) / 1000) : 0);
      },
    });
    new Gauge({
      name: 'meilisearch_is_indexing',
      help: '1 while a batch of tasks is being processed',
      registers,
      collect() {
        this.set(sources.isIndexing() ? 1 : 0);
      },
    });
  }

  private storeGauges(registers: Registry[]): void {
    const sources = this.sources;
    // one stats() per scrape, shared by the gauges below (each collect runs in the same scrape);
    // a time-based cache served a scrape the indexes of the one before
    let cached: { scrape: number; stats: GlobalStats } | null = null;
    const stats = () => {
      if (!cached || cached.scrape !== this.scrapeNo) cached = { scrape: this.scrapeNo, stats: sources.stats() };
      return cached.stats;
    };
    const gauge = (name: string, help: string, value: (s: GlobalStats) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value(stats()));
        },
      });
    gauge('meilisearch_db_size_bytes', 'Bytes on disk of the whole database', (s) => s.databaseSize);
    gauge('meilisearch_used_db_size_bytes', 'Bytes of the database in use', (s) => s.usedDatabaseSize);
    gauge('meilisearch_index_count', 'Indexes', (s) => Object.keys(s.indexes).length);
    gauge('meilisearch_last_update', 'Time of the last index change, in seconds since the epoch', (s) =>
      s.lastUpdate ? Math.floor(Date.parse(s.lastUpdate) / 1000) : 0,
    );
    new Gauge({
      name: 'meilisearch_index_docs_count',
      help: 'Documents per index',
      labelNames: ['index'],
      registers,
      collect() {
        this.reset();
        for (const [uid, index] of Object.entries(stats().indexes)) this.set({ index: uid }, index.numberOfDocuments);
      },
    });
    new Gauge({
      name: 'search_index_db_size_bytes',
      help: 'Bytes on disk of each index (its own LMDB environment)',
      labelNames: ['index'],
      registers,
      collect() {
        this.reset();
        for (const uid of Object.keys(stats().indexes)) this.set({ index: uid }, sources.indexDatabaseSize(uid));
      },
    });
  }

  private batchHistogram(registers: Registry[]): void {
    const durations = new Histogram({
      name: 'search_batch_duration_seconds',
      help: 'Time to process a batch of tasks, from its start to its commit',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    });
    this.sources.onBatchFinished(({ batch }) => {
      if (!batch.finishedAt) return;
      durations.observe(Math.max(0, (Date.parse(batch.finishedAt) - Date.parse(batch.startedAt)) / 1000));
    });
  }

  private embedderCounters(registers: Registry[]): void {
    // Counters whose totals live elsewhere: each scrape sets them to the current totals.
    const mirror = (name: string, help: string, pick: (c: { calls: number; failures: number }) => number) =>
      new Counter({
        name,
        help,
        labelNames: ['source'],
        registers,
        collect() {
          this.reset();
          for (const [source, counts] of Object.entries(embedderCallTotals())) this.inc({ source }, pick(counts));
        },
      });
    mirror('search_embedder_requests_total', 'Calls to embedders (one per batch of texts), by embedder source', (c) => c.calls);
    mirror('search_embedder_request_failures_total', 'Failed calls to embedders, by embedder source', (c) => c.failures);
  }

  private resultCacheCounter(registers: Registry[]): void {
    new Counter({
      name: 'search_result_cache_hits_total',
      help: 'Searches answered from the answer cache (a repeated search on an unchanged index; see README "Repeated searches")',
      registers,
      collect() {
        this.reset();
        this.inc(cacheHitTotal());
      },
    });
  }

  private webhookCounters(registers: Registry[]): void {
    const sources = this.sources;
    new Counter({
      name: 'search_webhook_deliveries_total',
      help: 'Batch notifications sent to task webhooks, by outcome (failed: given up after the retries)',
      labelNames: ['outcome'],
      registers,
      collect() {
        this.reset();
        const outcomes = sources.webhookOutcomes();
        this.inc({ outcome: 'delivered' }, outcomes.delivered);
        this.inc({ outcome: 'failed' }, outcomes.failed);
      },
    });
  }
}
