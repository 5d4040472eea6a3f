/**
 * The HTTP side of reading Qdrant. Requests go through plain `fetch` rather than
 * `@qdrant/js-client-rest` because the client parses responses with `JSON.parse` (ids above 2^53
 * rounded), does not honour `Retry-After`, and hides Qdrant's plain-text 401 body. Responses are
 * parsed with `parseLossless`, so integers beyond 2^53 arrive as `bigint`.
 */
import { MigrationError } from '../errors.js';
import { backoffDelay, DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, sleep, type RetryPolicy } from '../retry.js';
import { parseLossless, stringifyLossless } from './json.js';

export interface QdrantHttpOptions {
  url: string;
  apiKey?: string;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
  /** Told about every retry, so the command can show it. */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

export class QdrantHttp {
  readonly baseUrl: string;
  private readonly policy: RetryPolicy;

  constructor(private readonly o: QdrantHttpOptions) {
    this.baseUrl = o.url.replace(/\/+$/, '');
    this.policy = { ...DEFAULT_RETRY, ...o.retry };
  }

  /**
   * The options as plain data, for a reader on another thread (see background-scroll.ts); null
   * when they hold functions (a test's injected sleep or random), which cannot cross threads.
   * Retries there are reported back through `reportRetry`.
   */
  portableOptions(): Omit<QdrantHttpOptions, 'onRetry'> | null {
    const { onRetry: _onRetry, ...rest } = this.o;
    if (rest.retry && Object.values(rest.retry).some((v) => typeof v === 'function')) return null;
    return rest;
  }

  reportRetry(info: { attempt: number; delayMs: number; reason: string }): void {
    this.o.onRetry?.(info);
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  /** Returns `result` of Qdrant's `{result, status, time}` envelope. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.requestSized<T>(method, path, body)).result;
  }

  /**
   * `request`, also giving the size of the response body in UTF-16 units: a cheap size estimate
   * for batching, per request (several may be in flight).
   */
  async requestSized<T>(method: string, path: string, body?: unknown): Promise<{ result: T; length: number }> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.o.apiKey) headers['api-key'] = this.o.apiKey;
    const payload = body === undefined ? undefined : stringifyLossless(body);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { method, headers, body: payload, signal: AbortSignal.timeout(this.o.timeoutMs ?? 60_000) });
      } catch (e) {
        const reason = networkReason(e);
        if (attempt < Math.min(this.policy.retries, 3)) {
          await this.wait(attempt, undefined, reason);
          continue;
        }
        throw new MigrationError('unreachable', `cannot reach Qdrant at ${this.baseUrl} (${reason})`, { url: this.baseUrl });
      }
      const text = await res.text();
      if (res.ok) {
        const envelope = parseLossless(text) as { result: T };
        return { result: envelope.result, length: text.length };
      }
      const message = errorText(text);
      if (res.status === 401 || res.status === 403) {
        const hint = this.o.apiKey ? 'check --qdrant-api-key' : 'this Qdrant needs --qdrant-api-key';
        throw new MigrationError('auth', `Qdrant refused the request (${res.status} ${message}); ${hint}`, { status: res.status });
      }
      if (isRetryableStatus(res.status) && attempt < this.policy.retries) {
        await this.wait(attempt, parseRetryAfter(res.headers.get('retry-after')), `${res.status} ${message}`);
        continue;
      }
      throw new MigrationError(res.status === 404 ? 'not_found' : 'http', `Qdrant answered ${res.status} to ${method} ${path}: ${message}`, {
        status: res.status,
      });
    }
  }

  private async wait(attempt: number, retryAfterMs: number | undefined, reason: string): Promise<void> {
    const delayMs = backoffDelay(this.policy, attempt, retryAfterMs);
    this.reportRetry({ attempt: attempt + 1, delayMs, reason });
    await (this.policy.sleep ?? sleep)(delayMs);
  }
}

/** Qdrant errors are `{status: {error}}` JSON, except auth failures which are plain text. */
function errorText(text: string): string {
  try {
    const v = JSON.parse(text) as { status?: { error?: string } | string };
    if (v && typeof v.status === 'object' && v.status?.error) return v.status.error;
  } catch {
    // plain text body
  }
  return text.trim().slice(0, 500) || '(empty body)';
}

function networkReason(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError') return 'request timed out';
  return err.cause?.code ?? err.cause?.message ?? err.message ?? String(e);
}
