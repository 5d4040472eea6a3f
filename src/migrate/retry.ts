/**
 * Retry policy shared by the Qdrant reader and the remote target: exponential backoff with full
 * jitter, and the server's own `Retry-After` when it sends one (delta-seconds or an HTTP date).
 */

export interface RetryPolicy {
  /** Attempts after the first one. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Upper bound for a server-given Retry-After (the server knows its limits better than our backoff). */
  maxRetryAfterMs?: number;
  /** Injectable for tests. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 6, baseDelayMs: 200, maxDelayMs: 30_000 };

/** Parses a `Retry-After` header into milliseconds from `now`; undefined when absent or unusable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (v === '') return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (/^\d+\.\d+$/.test(v)) return Math.ceil(Number(v) * 1000);
  const date = Date.parse(v);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Delay before retry number `attempt` (0-based). A server-given delay wins (capped at maxRetryAfterMs, default 10 min). */
export function backoffDelay(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs ?? 600_000);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const rand = policy.random ?? Math.random;
  // full jitter, but never below half the ceiling so retries do not fire back to back
  return Math.round(ceiling / 2 + (rand() * ceiling) / 2);
}

export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || (status >= 500 && status <= 599);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
