/**
 * The destination of an export, reached through its public API as any client would, with
 * `Authorization: Bearer <apiKey>`, under the outbound address policy.
 *
 * Retries follow the reference: a connection failure, a timeout, or a 408, 429, 500, 502, 503
 * or 504 answer is tried again with exponential backoff (0.5 s, x1.5, randomized, at most 60 s
 * apart) until a time budget runs out (15 minutes, as the reference; `SEARCH_EXPORT_RETRY_BUDGET_MS`
 * changes it). Any other answer fails at once: the remote's own error (code and message) becomes
 * the task's. Every wait gives way to the task's abort signal, so a cancelation lands promptly.
 */
import { BatchAborted } from '../tasks/processing.js';
import { SearchError, isKnownErrorCode } from '../errors.js';
import { OutboundAddressError, outboundRequest, type OutboundResponse } from '../net/index.js';

const RETRIED_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 60_000;

export interface RemoteLimits {
  /** Per request; the reference's is 5 s, ours leaves room for a large payload on a busy remote. */
  timeoutMs: number;
  /** Total time spent retrying one request before the export fails. */
  retryBudgetMs: number;
}

export const DEFAULT_REMOTE_LIMITS: RemoteLimits = { timeoutMs: 30_000, retryBudgetMs: 15 * 60_000 };

export function remoteLimitsFromEnv(env: NodeJS.ProcessEnv): RemoteLimits {
  const read = (name: string, fallback: number) => {
    const value = Number(env[name] ?? NaN);
    return env[name]?.trim() && Number.isFinite(value) && value >= 0 ? value : fallback;
  };
  return {
    timeoutMs: read('SEARCH_EXPORT_TIMEOUT_MS', DEFAULT_REMOTE_LIMITS.timeoutMs),
    retryBudgetMs: read('SEARCH_EXPORT_RETRY_BUDGET_MS', DEFAULT_REMOTE_LIMITS.retryBudgetMs),
  };
}

export interface RemoteBody {
  bytes: Buffer;
  contentType: string;
  contentEncoding?: string;
}

/** A request the remote answered with an error that retrying cannot fix. */
export class RemoteAnswer extends SearchError {
  constructor(
    readonly remoteStatus: number,
    readonly remoteCode: string | null,
    code: string,
    message: string,
  ) {
    super(code, message);
  }
}

export class Remote {
  private readonly base: string;
  private readonly authorization: Record<string, string>;

  constructor(
    url: string,
    apiKey: string | null,
    private readonly signal: AbortSignal,
    private readonly limits: RemoteLimits = DEFAULT_REMOTE_LIMITS,
  ) {
    this.base = url.replace(/\/+$/, '');
    this.authorization = apiKey === null ? {} : { Authorization: `Bearer ${apiKey}` };
  }

  get(path: string): Promise<OutboundResponse> {
    return this.send('GET', path);
  }

  json(method: 'POST' | 'PATCH', path: string, value: unknown): Promise<OutboundResponse> {
    return this.send(method, path, { bytes: Buffer.from(JSON.stringify(value)), contentType: 'application/json' });
  }

  /** One request, retried as the reference does; resolves with a 2xx answer only. */
  async send(method: string, path: string, body?: RemoteBody): Promise<OutboundResponse> {
    const started = Date.now();
    let delay = FIRST_DELAY_MS;
    for (let attempt = 1; ; attempt++) {
      if (this.signal.aborted) throw new BatchAborted();
      let failure: string;
      try {
        const response = await outboundRequest(this.base + path, {
          method,
          headers: {
            ...this.authorization,
            ...(body ? { 'Content-Type': body.contentType, ...(body.contentEncoding ? { 'Content-Encoding': body.contentEncoding } : {}) } : {}),
          },
          body: body?.bytes,
          timeoutMs: this.limits.timeoutMs,
          signal: this.signal,
        });
        if (response.status >= 200 && response.status < 300) return response;
        if (!RETRIED_STATUSES.has(response.status)) throw this.answerError(method, path, response);
        failure = this.answerError(method, path, response).message;
      } catch (error) {
        if (this.signal.aborted) throw new BatchAborted();
        if (error instanceof RemoteAnswer) throw error;
        // the address policy refuses the same way every time: no point waiting
        if (error instanceof OutboundAddressError) throw new SearchError('internal', `Could not export to \`${this.base}\`: ${error.message}`);
        failure = `could not reach \`${this.base}\` (${method} ${path}): ${(error as Error).message}`;
      }
      const elapsed = Date.now() - started;
      const wait = delay * (0.5 + Math.random());
      if (elapsed + wait > this.limits.retryBudgetMs)
        throw new SearchError('internal', `Could not export to \`${this.base}\`: ${failure} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'} in ${(elapsed / 1000).toFixed(1)} s).`);
      await sleep(wait, this.signal);
      delay = Math.min(delay * 1.5, MAX_DELAY_MS);
    }
  }

  /** The remote's Meilisearch error keeps its code; anything else is reported with its status. */
  private answerError(method: string, path: string, response: OutboundResponse): RemoteAnswer {
    const where = `\`${this.base}\` answered ${response.status} to ${method} ${path}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const error = parsed as { message?: unknown; code?: unknown } | undefined;
    if (error && typeof error.code === 'string' && typeof error.message === 'string') {
      const code = isKnownErrorCode(error.code) ? error.code : 'internal';
      return new RemoteAnswer(response.status, error.code, code, `Export failed: ${where}: ${error.message}`);
    }
    const text = response.body.toString('utf8').slice(0, 200);
    return new RemoteAnswer(response.status, null, 'internal', `Export failed: ${where}${text ? `: ${text}` : '.'}`);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
