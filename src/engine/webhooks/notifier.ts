/**
 * Delivery of task notifications: after each batch, one POST per webhook whose body is the
 * batch's task objects as NDJSON (one task per line), gzip-compressed (`Content-Encoding: gzip`).
 *
 * Everything happens in the background: `notify` returns at once, so a slow or dead receiver
 * never delays the task queue; each webhook gets its batches in order, one call at a time. A failed call (network error, timeout, 408/429/5xx) is retried a
 * bounded number of times with exponential backoff, then logged and dropped. Outbound addresses
 * go through the address policy (SSRF protection). Header values and URL queries never reach
 * the logs, since they commonly carry credentials.
 */
import { setMaxListeners } from 'node:events';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Task } from '../types.js';
import type { AddressPolicy } from '../net/address-policy.js';
import { outboundRequest } from '../net/outbound-request.js';
import type { WebhookStore, WebhookTarget } from './webhook-store.js';

const gzip = promisify(gzipCallback);

export interface NotifierOptions {
  store: Pick<WebhookStore, 'targets'>;
  /** Address policy; default: the process-wide one (see `setOutboundPolicy`). */
  policy?: AddressPolicy;
  log?: (level: 'warn' | 'error' | 'debug', message: string) => void;
  /** Attempts per call, first one included (default 4). */
  maxAttempts?: number;
  /** Delay before the first retry, doubled at each further one (default 500 ms). */
  retryDelayMs?: number;
  /** Timeout of one attempt (default 30 s). */
  timeoutMs?: number;
  /** Deliveries kept in flight at most; beyond, new ones are dropped with a warning (default 256). */
  maxPending?: number;
}

/** One task per line, each line a complete JSON object, newline-terminated. */
export function toNdjson(tasks: readonly Task[]): string {
  return tasks.map((t) => `${JSON.stringify(t)}\n`).join('');
}

/** `https://host/path` without credentials or query, safe to log. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '<invalid url>';
  }
}

function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

export class WebhookNotifier {
  private readonly pending = new Set<Promise<void>>();
  /** The latest delivery queued per webhook uuid, so that the next one starts after it. */
  private readonly lastDelivery = new Map<string, Promise<void>>();
  private closed = false;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  private readonly abort = new AbortController();
  /** Notifications delivered and given up (after every attempt, or dropped), for /metrics. */
  readonly outcomes = { delivered: 0, failed: 0 };

  constructor(private readonly options: NotifierOptions) {
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 4);
    this.retryDelayMs = options.retryDelayMs ?? 500;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxPending = options.maxPending ?? 256;
    // every delivery in flight listens to the shutdown signal: up to `maxPending` of them at once
    setMaxListeners(this.maxPending * 2 + 10, this.abort.signal);
  }

  private log(level: 'warn' | 'error' | 'debug', message: string): void {
    (this.options.log ?? ((l, m) => process.stderr.write(`[webhooks ${l}] ${m}\n`)))(level, message);
  }

  /** Send `tasks` (one finished batch) to every webhook, in the background. Never throws. */
  notify(tasks: readonly Task[]): void {
    if (this.closed || tasks.length === 0) return;
    let targets: WebhookTarget[];
    try {
      targets = this.options.store.targets();
    } catch (error) {
      this.log('error', `cannot read the webhooks: ${(error as Error).message}`);
      return;
    }
    if (targets.length === 0) return;
    const body = gzip(Buffer.from(toNdjson(tasks)));
    body.catch(() => undefined); // awaited below; avoids an unhandled rejection when there is no target left
    const batchUid = tasks[0]?.batchUid ?? null;
    for (const target of targets) {
      if (this.pending.size >= this.maxPending) {
        this.log('warn', `too many webhook calls in flight; batch ${batchUid} not sent to ${describeUrl(target.url)}`);
        this.outcomes.failed++;
        continue;
      }
      // One webhook receives its batches in order: each call waits for the previous one to it.
      const previous = this.lastDelivery.get(target.uuid) ?? Promise.resolve();
      const delivery: Promise<void> = previous
        .then(() => this.deliver(target, body, batchUid))
        .finally(() => {
          this.pending.delete(delivery);
          if (this.lastDelivery.get(target.uuid) === delivery) this.lastDelivery.delete(target.uuid);
        });
      this.lastDelivery.set(target.uuid, delivery);
      this.pending.add(delivery);
    }
  }

  private async deliver(target: WebhookTarget, body: Promise<Buffer>, batchUid: number | null): Promise<void> {
    const where = describeUrl(target.url);
    let payload: Buffer;
    try {
      payload = await body;
    } catch (error) {
      this.log('error', `cannot compress the notification of batch ${batchUid}: ${(error as Error).message}`);
      this.outcomes.failed++;
      return;
    }
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-ndjson',
      'Content-Encoding': 'gzip',
      'Content-Length': String(payload.length),
      ...withoutFraming(target.headers),
    };
    let lastProblem = '';
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      if (this.abort.signal.aborted) return;
      try {
        const res = await outboundRequest(target.url, {
          method: 'POST',
          headers,
          body: payload,
          timeoutMs: this.timeoutMs,
          policy: this.options.policy,
          signal: this.abort.signal,
        });
        if (res.status < 400) {
          this.outcomes.delivered++;
          return;
        }
        lastProblem = `HTTP ${res.status}`;
        if (!retryable(res.status)) break;
      } catch (error) {
        if (this.abort.signal.aborted) return;
        lastProblem = (error as Error).message;
        if ((error as Error).name === 'OutboundAddressError') break; // retrying cannot help
      }
      if (attempt < this.maxAttempts) {
        this.log('debug', `webhook ${where}, batch ${batchUid}: attempt ${attempt} failed (${lastProblem}), retrying`);
        await this.sleep(this.retryDelayMs * 2 ** (attempt - 1));
      }
    }
    this.log('warn', `webhook ${where}: could not deliver batch ${batchUid}: ${lastProblem}`);
    this.outcomes.failed++;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.abort.signal;
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Resolves when every delivery started so far has finished (delivered or given up). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * Stop: wait up to `graceMs` for deliveries in flight, then abandon the rest (a shutdown must
   * not hang on a dead receiver).
   */
  async close(graceMs = 2_000): Promise<void> {
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    this.abort.abort();
    await this.idle();
  }
}

/** User headers must not override the framing of the body we send. */
function withoutFraming(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'content-encoding' || lower === 'transfer-encoding') continue;
    out[name] = value;
  }
  return out;
}
