/**
 * JSON over HTTP for remote embedders, with bounded retries.
 *
 * Rate limits (429), server errors (5xx) and network failures are retried with exponential
 * backoff and jitter, honouring `Retry-After` when it is short; other 4xx answers are the
 * caller's mistake (bad key, bad model) and fail at once. Every failure surfaces as an
 * `EmbeddingFailure` whose message says what the provider answered. Requests go through the
 * outbound address policy (`--experimental-allowed-ip-networks`): a provider on a private or
 * loopback address must be allowed by the operator.
 */
import { OutboundAddressError, outboundRequest, type OutboundResponse } from '../net/index.js';
import { EmbeddingFailure } from './types.js';

export interface RetryPolicy {
  /** Attempts in total, first one included. */
  attempts: number;
  /** First backoff delay; doubles each retry. */
  baseDelayMs: number;
  maxDelayMs: number;
  timeoutMs: number;
}

/** Defaults can be tightened through the environment (tests use short delays). */
export function defaultRetryPolicy(): RetryPolicy {
  const env = process.env;
  return {
    attempts: positiveInt(env.SEARCH_EMBEDDER_MAX_ATTEMPTS) ?? 5,
    baseDelayMs: positiveInt(env.SEARCH_EMBEDDER_RETRY_BASE_MS) ?? 250,
    maxDelayMs: 10_000,
    timeoutMs: positiveInt(env.SEARCH_EMBEDDER_TIMEOUT_MS) ?? 60_000,
  };
}

/** Embedding a search query: one retry at most, and a short deadline (the reference uses 3 s). */
export function searchRetryPolicy(): RetryPolicy {
  const env = process.env;
  return {
    attempts: Math.min(2, positiveInt(env.SEARCH_EMBEDDER_MAX_ATTEMPTS) ?? 2),
    baseDelayMs: Math.min(100, positiveInt(env.SEARCH_EMBEDDER_RETRY_BASE_MS) ?? 100),
    maxDelayMs: 500,
    timeoutMs: positiveInt(env.SEARCH_EMBEDDER_SEARCH_TIMEOUT_MS) ?? 3_000,
  };
}

function positiveInt(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number(value);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class RetryableFailure extends EmbeddingFailure {
  constructor(message: string, readonly retryAfterMs?: number) {
    super(message);
  }
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  policy: RetryPolicy = defaultRetryPolicy(),
): Promise<unknown> {
  let lastError: EmbeddingFailure | undefined;
  for (let attempt = 0; attempt < policy.attempts; attempt++) {
    if (attempt > 0) {
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      const hinted = lastError instanceof RetryableFailure ? lastError.retryAfterMs : undefined;
      const delay = hinted !== undefined ? Math.min(policy.maxDelayMs, hinted) : backoff * (0.5 + Math.random() / 2);
      await sleep(delay);
    }
    try {
      return await attemptPost(url, body, headers, policy.timeoutMs);
    } catch (error) {
      if (!(error instanceof RetryableFailure)) throw error;
      lastError = error;
    }
  }
  throw new EmbeddingFailure(`${lastError!.message} (gave up after ${policy.attempts} attempts)`);
}

async function attemptPost(url: string, body: unknown, headers: Record<string, string>, timeoutMs: number): Promise<unknown> {
  let response: OutboundResponse;
  try {
    response = await outboundRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      timeoutMs,
    });
  } catch (error) {
    // the address policy refusing the host is a configuration matter: retrying cannot help
    if (error instanceof OutboundAddressError) throw new EmbeddingFailure(error.message, { cause: error });
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new RetryableFailure(`could not reach the embedding server at \`${url}\`: ${reason}`);
  }
  const text = response.body.toString('utf8');
  if (response.status >= 200 && response.status < 300) {
    try {
      return JSON.parse(text);
    } catch {
      throw new EmbeddingFailure(`the embedding server at \`${url}\` answered with invalid JSON: \`${snippet(text)}\``);
    }
  }
  const message = `the embedding server at \`${url}\` answered ${response.status}: \`${snippet(text)}\``;
  if (response.status === 429 || response.status >= 500) throw new RetryableFailure(message, retryAfter(response));
  if (response.status === 401 || response.status === 403)
    throw new EmbeddingFailure(`${message} (could not authenticate: check the embedder's \`apiKey\`)`);
  throw new EmbeddingFailure(message);
}

function retryAfter(response: OutboundResponse): number | undefined {
  const raw = response.headers['retry-after'];
  const header = Array.isArray(raw) ? raw[0] : raw;
  if (!header) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

function snippet(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** Split `items` into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Check a provider's vector: numbers only, expected length when known. */
export function toVector(value: unknown, expected: number | undefined, where: string): Float32Array {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'number'))
    throw new EmbeddingFailure(`${where}: expected an array of numbers as the embedding, got \`${snippet(JSON.stringify(value) ?? String(value))}\``);
  if (expected !== undefined && value.length !== expected)
    throw new EmbeddingFailure(`${where}: the embedding has ${value.length} dimensions, but the embedder is configured with ${expected}`);
  return Float32Array.from(value as number[]);
}
