/**
 * Delivery of task notifications: one POST per finished batch per webhook, whose body is the
 * batch's task objects as NDJSON (one task per line), gzip-compressed (`Content-Encoding: gzip`).
 *
 * At least once, in order: notifications wait in the outbox (outbox.ts, written with the batch's
 * results) and each webhook has a cursor there, moved after each delivered call. A failed call
 * (network error, timeout, 408/429/5xx) is retried with exponential backoff, without limit in
 * number: across outages and restarts. A notification is dropped undelivered only when it is older
 * than `maxAgeMs` (default 24 h) or beyond the newest `maxPending` (default 10,000), or for one
 * webhook when its receiver refuses it for good (another 4xx) or the address policy forbids the
 * receiver; each drop is logged and counted (`dropped`).
 *
 * Everything happens in the background: a slow or dead receiver never delays the task queue, and
 * with nothing to deliver no timer runs. Outbound addresses go through the address policy (SSRF
 * protection). Header values and URL queries never reach the logs, since they commonly carry
 * credentials.
 */
import { setMaxListeners } from 'node:events';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Task } from '../types.js';
import type { AddressPolicy } from '../net/address-policy.js';
import { outboundRequest } from '../net/outbound-request.js';
import type { Notification, WebhookOutbox } from './outbox.js';
import type { WebhookStore, WebhookTarget } from './webhook-store.js';
import { log } from '../logs/logger.js';

const gzip = promisify(gzipCallback);

/** How hard delivery tries, and how long undelivered notifications are kept. */
export interface DeliveryLimits {
  /** Timeout of one attempt (default 30 s). */
  timeoutMs?: number;
  /** Delay before the first retry, doubled at each further one (default 500 ms)... */
  retryDelayMs?: number;
  /** ...up to this (default 60 s). */
  maxRetryDelayMs?: number;
  /** Undelivered notifications older than this are dropped (default 24 h). */
  maxAgeMs?: number;
  /** At most this many notifications are kept; the oldest beyond are dropped (default 10,000). */
  maxPending?: number;
}

export interface NotifierOptions extends DeliveryLimits {
  store: Pick<WebhookStore, 'targets'>;
  outbox: WebhookOutbox;
  /** Address policy; default: the process-wide one (see `setOutboundPolicy`). */
  policy?: AddressPolicy;
  log?: (level: 'warn' | 'error' | 'debug', message: string) => void;
}

export const DEFAULT_DELIVERY = {
  timeoutMs: 30_000,
  retryDelayMs: 500,
  maxRetryDelayMs: 60_000,
  maxAgeMs: 24 * 3600_000,
  maxPending: 10_000,
} as const satisfies Required<DeliveryLimits>;

/** Delivery limits from `SEARCH_TASK_WEBHOOK_*` environment variables (milliseconds and counts). */
export function deliveryLimitsFromEnv(env: NodeJS.ProcessEnv): DeliveryLimits {
  const read = (name: string): number | undefined => {
    const text = env[`SEARCH_TASK_WEBHOOK_${name}`];
    const value = text === undefined || text.trim() === '' ? NaN : Number(text);
    return Number.isFinite(value) && value >= 0 ? value : undefined;
  };
  const limits: DeliveryLimits = {};
  const entries: Array<[keyof DeliveryLimits, string]> = [
    ['timeoutMs', 'TIMEOUT_MS'],
    ['retryDelayMs', 'RETRY_DELAY_MS'],
    ['maxRetryDelayMs', 'MAX_RETRY_DELAY_MS'],
    ['maxAgeMs', 'MAX_AGE_MS'],
    ['maxPending', 'MAX_PENDING'],
  ];
  for (const [key, name] of entries) {
    const value = read(name);
    if (value !== undefined) limits[key] = value;
  }
  return limits;
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

type Outcome = 'delivered' | 'refused' | 'gone' | 'closed';

export class WebhookNotifier {
  /** The delivery loop of each webhook that has one running. */
  private readonly pumps = new Map<string, Promise<void>>();
  /** Webhooks whose loop must look at the outbox again before it ends (a batch came meanwhile). */
  private readonly again = new Set<string>();
  private closed = false;
  private readonly limits: Required<DeliveryLimits>;
  private readonly abort = new AbortController();
  /** Notifications delivered and given up (refused or dropped), for /metrics. */
  readonly outcomes = { delivered: 0, failed: 0 };
  private readonly outbox: WebhookOutbox;

  constructor(private readonly options: NotifierOptions) {
    this.outbox = options.outbox;
    const given = Object.fromEntries(Object.entries(options).filter(([k, v]) => k in DEFAULT_DELIVERY && v !== undefined));
    this.limits = { ...DEFAULT_DELIVERY, ...given };
    // every loop (one per webhook, at most 21) listens to the shutdown signal
    setMaxListeners(100, this.abort.signal);
  }

  private log(level: 'warn' | 'error' | 'debug', message: string): void {
    (this.options.log ?? ((l, m) => log('search::webhooks', l, m)))(level, message);
  }

  /** Notifications dropped undelivered (see the module comment), since the database was created. */
  get dropped(): number {
    return this.outbox.dropped;
  }

  /**
   * Look at the outbox: a batch finished, a webhook was added or removed, or the server started.
   * A webhook seen for the first time starts after the newest notification kept. Never throws.
   */
  kick(): void {
    if (this.closed) return;
    try {
      const targets = this.options.store.targets();
      this.outbox.setActive(targets.length > 0);
      const known = this.outbox.knownCursors();
      for (const uuid of known.keys()) if (!targets.some((t) => t.uuid === uuid)) this.outbox.forget(uuid);
      for (const target of targets) {
        if (!known.has(target.uuid)) this.outbox.setCursor(target.uuid, this.outbox.last() ?? -1);
        if (this.pumps.has(target.uuid)) this.again.add(target.uuid);
        else this.startPump(target.uuid);
      }
      this.enforceLimits();
      this.collect();
    } catch (error) {
      this.log('error', `cannot read the webhooks or their outbox: ${(error as Error).message}`);
    }
  }

  private startPump(uuid: string): void {
    const pump = this.pump(uuid)
      .catch((error: Error) => this.log('error', `webhook delivery stopped: ${error.message}`))
      .finally(() => {
        this.pumps.delete(uuid);
        // told about a new batch between the loop's last look and now
        if (this.again.delete(uuid) && !this.closed) this.startPump(uuid);
      });
    this.pumps.set(uuid, pump);
  }

  /** Deliver this webhook's notifications one after the other, until it has them all. */
  private async pump(uuid: string): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const target = this.options.store.targets().find((t) => t.uuid === uuid);
      if (!target) return;
      this.enforceLimits();
      const entry = this.outbox.next(this.outbox.cursor(uuid));
      if (!entry) {
        if (this.again.delete(uuid)) continue;
        return;
      }
      const outcome = await this.deliver(target, entry);
      if (outcome === 'closed') return;
      if (this.options.store.targets().every((t) => t.uuid !== uuid)) return; // removed meanwhile
      this.outbox.setCursor(uuid, entry.batchUid);
      this.collect();
    }
  }

  /** One notification to one webhook, retried with backoff until it is delivered, refused or dropped. */
  private async deliver(target: WebhookTarget, entry: Notification): Promise<Outcome> {
    const where = describeUrl(target.url);
    const payload = await gzip(Buffer.from(toNdjson(entry.tasks)));
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-ndjson',
      'Content-Encoding': 'gzip',
      'Content-Length': String(payload.length),
      ...withoutFraming(target.headers),
    };
    for (let attempt = 1; ; attempt++) {
      if (this.closed) return 'closed';
      if (!this.outbox.has(entry.batchUid)) return 'gone'; // dropped by the limits meanwhile
      let problem: string;
      try {
        const res = await outboundRequest(target.url, {
          method: 'POST',
          headers,
          body: payload,
          timeoutMs: this.limits.timeoutMs,
          policy: this.options.policy,
          signal: this.abort.signal,
        });
        if (res.status < 400) {
          this.outcomes.delivered++;
          return 'delivered';
        }
        problem = `HTTP ${res.status}`;
        if (!retryable(res.status)) return this.refused(where, entry, problem);
      } catch (error) {
        if (this.closed) return 'closed';
        problem = (error as Error).message;
        if ((error as Error).name === 'OutboundAddressError') return this.refused(where, entry, problem); // retrying cannot help
      }
      const delay = Math.min(this.limits.retryDelayMs * 2 ** (attempt - 1), this.limits.maxRetryDelayMs);
      this.log(attempt === 1 ? 'warn' : 'debug', `webhook ${where}, batch ${entry.batchUid}: attempt ${attempt} failed (${problem}), retrying in ${delay} ms`);
      await this.sleep(delay);
    }
  }

  private refused(where: string, entry: Notification, problem: string): Outcome {
    this.outbox.countDropped(1);
    this.outcomes.failed++;
    this.log('warn', `webhook ${where}: could not deliver batch ${entry.batchUid}: ${problem}; notification dropped for this webhook (${this.outbox.dropped} dropped in all)`);
    return 'refused';
  }

  /** Drop what exceeds the documented limits: older than `maxAgeMs`, or beyond the newest `maxPending`. */
  private enforceLimits(): void {
    const excess = this.outbox.size - this.limits.maxPending;
    const tooOld = Date.now() - this.limits.maxAgeMs;
    for (const entry of this.outbox.oldest(Math.max(excess, 0) + 64)) {
      const overCount = this.outbox.size > this.limits.maxPending;
      if (!overCount && entry.at >= tooOld) break;
      this.outbox.drop(entry.batchUid);
      this.outcomes.failed++;
      this.log(
        'warn',
        `webhook notification of batch ${entry.batchUid} dropped undelivered: ${overCount ? `more than ${this.limits.maxPending} kept` : `older than ${this.limits.maxAgeMs} ms`} (${this.outbox.dropped} dropped in all)`,
      );
    }
  }

  /** Remove the notifications every webhook has. */
  private collect(): void {
    const cursors = [...this.outbox.knownCursors().values()];
    if (cursors.length === 0) return;
    const through = Math.min(...cursors);
    if (through >= 0) this.outbox.removeThrough(through);
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

  /** Resolves when every webhook has every notification kept (delivered, refused or dropped). */
  async idle(): Promise<void> {
    // a batch may be committed before its `batchFinished` event arrives here: look now
    this.kick();
    while (this.pumps.size > 0) await Promise.allSettled([...this.pumps.values()]);
  }

  /** Stop delivering; what is undelivered stays in the outbox for the next start. */
  async close(): Promise<void> {
    this.closed = true;
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
