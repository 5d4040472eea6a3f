/**
 * A small typed client for a running server with the Meilisearch v1 API (ours or Meilisearch).
 * Commands use it for their `--url/--api-key` remote mode. It retries 429 and 5xx answers and
 * network failures with backoff (honouring `Retry-After`), and turns error bodies
 * (`{message, code, type, link}`) into `ClientError`.
 */
import type { Document, IndexInfo, IndexStats, SummarizedTask, Task } from '../engine/types.js';
import { backoffDelay, DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, sleep, type RetryPolicy } from '../migrate/retry.js';
import { ClientError } from './errors.js';

export interface ClientOptions {
  url: string;
  apiKey?: string;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Raw body with its content type (NDJSON uploads). */
  raw?: { data: string | Buffer; contentType: string };
}

export class SearchClient {
  readonly baseUrl: string;
  private readonly policy: RetryPolicy;

  constructor(private readonly o: ClientOptions) {
    this.baseUrl = o.url.replace(/\/+$/, '');
    this.policy = { ...DEFAULT_RETRY, ...o.retry };
  }

  async request<T>(method: string, path: string, r: RequestOptions = {}): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(r.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.o.apiKey) headers.authorization = `Bearer ${this.o.apiKey}`;
    let body: string | Buffer | undefined;
    if (r.raw) {
      headers['content-type'] = r.raw.contentType;
      body = r.raw.data;
    } else if (r.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(r.body);
    }
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.o.timeoutMs ?? 120_000) });
      } catch (e) {
        if (attempt < Math.min(this.policy.retries, 3)) {
          await (this.policy.sleep ?? sleep)(backoffDelay(this.policy, attempt));
          continue;
        }
        const err = e as { cause?: { code?: string }; message?: string };
        throw new ClientError(`cannot reach ${this.baseUrl} (${err.cause?.code ?? err.message ?? String(e)})`, 0, null);
      }
      const text = await res.text();
      if (res.ok) return (text ? JSON.parse(text) : undefined) as T;
      if (isRetryableStatus(res.status) && attempt < this.policy.retries) {
        await (this.policy.sleep ?? sleep)(backoffDelay(this.policy, attempt, parseRetryAfter(res.headers.get('retry-after'))));
        continue;
      }
      let code: string | null = null;
      let message = text.slice(0, 500);
      try {
        const e = JSON.parse(text) as { message?: string; code?: string };
        if (e.message) message = e.message;
        code = e.code ?? null;
      } catch {
        // not JSON
      }
      throw new ClientError(`${method} ${path} answered ${res.status}: ${message}`, res.status, code);
    }
  }

  health(): Promise<{ status: string }> {
    return this.request('GET', '/health');
  }

  getIndex(uid: string): Promise<IndexInfo> {
    return this.request('GET', `/indexes/${encodeURIComponent(uid)}`);
  }

  createIndex(uid: string, primaryKey?: string): Promise<SummarizedTask> {
    return this.request('POST', '/indexes', { body: { uid, primaryKey } });
  }

  deleteIndex(uid: string): Promise<SummarizedTask> {
    return this.request('DELETE', `/indexes/${encodeURIComponent(uid)}`);
  }

  swapIndexes(pairs: Array<[string, string]>): Promise<SummarizedTask> {
    return this.request('POST', '/swap-indexes', { body: pairs.map((indexes) => ({ indexes })) });
  }

  indexStats(uid: string): Promise<IndexStats> {
    return this.request('GET', `/indexes/${encodeURIComponent(uid)}/stats`);
  }

  getSettings(uid: string): Promise<Record<string, unknown>> {
    return this.request('GET', `/indexes/${encodeURIComponent(uid)}/settings`);
  }

  updateSettings(uid: string, patch: unknown): Promise<SummarizedTask> {
    return this.request('PATCH', `/indexes/${encodeURIComponent(uid)}/settings`, { body: patch });
  }

  addDocumentsNdjson(uid: string, ndjson: string, primaryKey?: string): Promise<SummarizedTask> {
    return this.request('POST', `/indexes/${encodeURIComponent(uid)}/documents`, {
      query: { primaryKey },
      raw: { data: ndjson, contentType: 'application/x-ndjson' },
    });
  }

  /** `POST /indexes/{uid}/documents/fetch` with ids (Meilisearch >= 1.14). */
  fetchDocuments(uid: string, body: { ids?: string[]; filter?: unknown; limit?: number; offset?: number; retrieveVectors?: boolean }): Promise<{ results: Document[]; total: number }> {
    return this.request('POST', `/indexes/${encodeURIComponent(uid)}/documents/fetch`, { body });
  }

  search(uid: string, body: unknown): Promise<{ hits: Document[]; [k: string]: unknown }> {
    return this.request('POST', `/indexes/${encodeURIComponent(uid)}/search`, { body });
  }

  getTask(uid: number): Promise<Task> {
    return this.request('GET', `/tasks/${uid}`);
  }

  /** Polls until the task is finished; the interval grows to 250 ms so long batches cost few requests. */
  async waitForTask(uid: number, o: { timeoutMs?: number } = {}): Promise<Task> {
    const deadline = Date.now() + (o.timeoutMs ?? 60 * 60 * 1000);
    let interval = 25;
    for (;;) {
      const task = await this.getTask(uid);
      if (task.status === 'succeeded' || task.status === 'failed' || task.status === 'canceled') return task;
      if (Date.now() > deadline) throw new ClientError(`timed out waiting for task ${uid}`, 0, null);
      await sleep(interval);
      interval = Math.min(250, interval * 2);
    }
  }
}
