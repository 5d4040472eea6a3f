/**
 * Search threads: a pool of worker threads that answer searches, so that a server uses more than
 * one core for them. The thread that serves HTTP parses requests and writes responses; a search
 * (keyword ranking, hybrid merge, formatting of the hits) and the serialization of its answer
 * run in one of these threads, each with a read-only engine over the same database. On the
 * 2-core machine, `star wars` at 32 connections: two search threads answer 1.33-1.46x the
 * searches per second of none, one thread 1.12-1.19x (bench/README.md).
 *
 * A search thread reads LMDB's last commit like the serving thread; when the write thread
 * commits a batch, the engine tells every search thread (`noteCommit`) so that their caches
 * follow (see IndexStore.sync). Each request goes to the thread with the fewest pending.
 *
 * Requests and answers travel in batches: those handed to a thread in one turn of the event loop
 * leave in one message (at `setImmediate`), and a thread posts the answers of a batch together.
 * Under load (32 connections) a message each way per search cost the HTTP thread 13% of its
 * time in `postMessage` alone, and as much again in wake-ups on both sides. The bodies of a
 * batch travel in one transferred buffer: transferring a buffer per answer cost more than
 * copying its 22 KB (6-8 µs per `star wars` answer between the two threads, against 2-4).
 */
import { SHARE_ENV, type Worker } from 'node:worker_threads';
import { addEmbedderCalls, type EmbedderCallCounts } from '../embedders/call-counts.js';
import { addCacheHits } from './result-cache.js';
import { fromWireError, SearchError, type WireError } from '../errors.js';
import { onOutboundPolicyChange, outboundPolicy } from '../net/address-policy.js';
import { startWorker, workerScriptUrl } from '../worker-script.js';
import { workerHeapLimits } from '../thread-heaps.js';

/** A read request a search thread answers, as the HTTP routes name them. */
export type SearchRequest = (
  | { kind: 'search' | 'facetSearch' | 'similar'; uid: string; body: unknown }
  | { kind: 'multiSearch'; body: unknown }
) & {
  /** When the request was handed to the pool (`sharedClock`), for the `wait in queue` stage. */
  queuedAt?: number;
  /** The foreign-key indexes whose documents the caller may receive in hits (see foreign-keys.ts); undefined: all. */
  foreignIndexes?: string[];
  /** Answer each query's `metadata` (search and multi-search; see search/metadata.ts). */
  includeMetadata?: boolean;
};

export interface SearchThreadData {
  dbPath: string;
  outboundPolicy: string;
}

export type ToSearchThread =
  | { type: 'requests'; batch: Array<{ id: number; request: SearchRequest }> }
  | { type: 'commit' }
  | { type: 'outboundPolicy'; spec: string }
  | { type: 'close' };

export type FromSearchThread =
  | { type: 'ready' }
  /**
   * The answers of a batch: each response body as UTF-8 JSON, one after the other in `bodies`
   * (transferred, not copied; an answer gives where its body ends), or the error; `cacheHits`:
   * the answers the thread gave from its cache since its last post (result-cache.ts).
   */
  | { type: 'answers'; batch: SearchAnswer[]; bodies: Uint8Array; cacheHits: number }
  /** Query embeddings made since the last report, for /metrics (see embedders/call-counts.ts). */
  | { type: 'embedderCalls'; counts: EmbedderCallCounts }
  | { type: 'closed' };

export type SearchAnswer = { id: number; end: number } | ({ id: number; end?: undefined } & WireError);

const SCRIPT = workerScriptUrl(import.meta.url, './search-thread.worker.js');

interface Pending {
  resolve(body: Buffer): void;
  reject(error: Error): void;
}

class SearchThread {
  readonly pending = new Map<number, Pending>();
  readonly ready: Promise<void>;
  private closed = false;

  constructor(
    readonly worker: Worker,
    private readonly onExit: (thread: SearchThread) => void,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromSearchThread) => {
        if (message.type === 'ready') {
          this.isReady = true;
          resolve();
        } else if (message.type === 'answers') {
          if (message.cacheHits > 0) addCacheHits(message.cacheHits);
          const { buffer, byteOffset } = message.bodies;
          let start = 0;
          for (const answer of message.batch) {
            const waiter = this.settle(answer.id);
            if (answer.end === undefined) waiter?.reject(fromWireError(answer));
            else {
              // a view: the batch's bytes stay alive until its last response is written
              waiter?.resolve(Buffer.from(buffer, byteOffset + start, answer.end - start));
              start = answer.end;
            }
          }
        } else if (message.type === 'embedderCalls') addEmbedderCalls(message.counts);
      });
      worker.on('error', reject);
      worker.on('exit', (code) => {
        reject(new SearchError('internal', `The search thread exited (code ${code}) before it was ready.`));
        for (const [id, waiter] of this.pending) {
          this.pending.delete(id);
          waiter.reject(new SearchError('internal', `The search thread stopped (code ${code}) while answering.`));
        }
        if (!this.closed) this.onExit(this);
      });
    });
    // a thread that fails to start fails the requests that wait for it (see `run`), nothing else
    this.ready.catch(() => undefined);
  }

  /** The worker answered its first message: requests go to it at once. */
  isReady = false;

  /** Fail request `id` (its thread could not start). */
  fail(id: number, error: Error): void {
    this.settle(id)?.reject(error);
  }

  private settle(id: number): Pending | undefined {
    const waiter = this.pending.get(id);
    this.pending.delete(id);
    return waiter;
  }

  post(message: ToSearchThread): void {
    this.worker.postMessage(message);
  }

  /** Requests waiting for the end of this turn of the event loop. */
  private outbox: Array<{ id: number; request: SearchRequest }> = [];

  /** Send `request` with the others of this turn (see the module's comment). */
  send(id: number, request: SearchRequest): void {
    if (this.outbox.push({ id, request }) > 1) return;
    setImmediate(() => {
      const batch = this.outbox;
      this.outbox = [];
      this.post({ type: 'requests', batch });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await new Promise<void>((resolve) => {
      this.worker.on('message', (message: FromSearchThread) => message.type === 'closed' && resolve());
      this.worker.once('exit', () => resolve());
      this.post({ type: 'close' });
    });
    await this.worker.terminate();
  }
}

export class SearchThreads {
  private readonly threads: SearchThread[] = [];
  private nextId = 0;
  private readonly unfollowPolicy: () => void;

  private constructor(private readonly dbPath: string) {
    this.unfollowPolicy = onOutboundPolicyChange((policy) => {
      for (const thread of this.threads) thread.post({ type: 'outboundPolicy', spec: policy.spec });
    });
  }

  /** Start `count` threads and wait until each has its engine open. */
  static async start(dbPath: string, count: number): Promise<SearchThreads> {
    const pool = new SearchThreads(dbPath);
    try {
      await Promise.all(Array.from({ length: count }, () => pool.spawn().ready));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  private spawn(): SearchThread {
    const data: SearchThreadData = { dbPath: this.dbPath, outboundPolicy: outboundPolicy().spec };
    const worker = startWorker(SCRIPT, { workerData: data, env: SHARE_ENV, resourceLimits: workerHeapLimits('search') });
    // a thread that died (out of memory on one huge request) is replaced; its requests failed
    const thread = new SearchThread(worker, (dead) => {
      const at = this.threads.indexOf(dead);
      if (at !== -1) this.threads[at] = this.spawn();
    });
    this.threads.push(thread);
    return thread;
  }

  /**
   * Answer `request` in the least busy thread: the response body, serialized as UTF-8 JSON.
   * The request counts as pending from this call on, so that requests made together (32
   * concurrent `Engine.answer` calls, a turn's HTTP requests) spread over the threads: counted
   * only once the thread was known ready (a microtask later), they all went to the same one.
   */
  run(request: SearchRequest): Promise<Buffer> {
    let thread = this.threads[0]!;
    for (const other of this.threads) if (other.pending.size < thread.pending.size) thread = other;
    const id = this.nextId++;
    return new Promise<Buffer>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      if (thread.isReady) thread.send(id, request);
      else
        thread.ready.then(
          () => thread.send(id, request),
          (error: unknown) => thread.fail(id, error as Error),
        );
    });
  }

  /** The write thread committed a batch: the threads' caches must follow. */
  noteCommit(): void {
    for (const thread of this.threads) thread.post({ type: 'commit' });
  }

  async close(): Promise<void> {
    this.unfollowPolicy();
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((thread) => thread.close()));
  }
}
