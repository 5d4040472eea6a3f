/**
 * Document payloads are parsed, checked and written to their update file in a worker thread
 * (intake.worker.ts): parsing a 10 MB JSON body and encoding and fsyncing its update file take
 * the best part of 100 ms, which the thread answering searches must not spend. The request still
 * waits for it, as in the reference: a malformed payload is refused at once (400), and a 202 means
 * the documents are on disk.
 *
 * One worker per process, started on first use and never keeping the process alive; requests
 * are answered in order. If it dies (a payload too large for its memory), the pending requests
 * fail with an internal error and the next one starts a new worker. Under a memory limit (see
 * thread-heaps.ts) it ends once it has had nothing to do for IDLE_END_MS: its heap goes back to
 * the system whole, and starting another costs some 30-50 ms on the next upload.
 */
import type { Worker } from 'node:worker_threads';
import { fromWireError, SearchError, type WireError } from '../errors.js';
import type { DocumentPayload } from '../types.js';
import { startWorker, workerScriptUrl } from '../worker-script.js';
import { workerHeapLimits } from '../thread-heaps.js';

/** How long an idle intake thread is kept under a memory limit. */
const IDLE_END_MS = 1000;

export interface IntakeRequest {
  id: number;
  payload: DocumentPayload;
  path: string;
}

export type IntakeReply = { id: number; count: number } | { id: number; error: WireError };

const SCRIPT = workerScriptUrl(import.meta.url, './intake.worker.js');

let worker: Worker | null = null;
let nextId = 0;
const pending = new Map<number, { resolve: (count: number) => void; reject: (error: Error) => void }>();

function intakeWorker(): Worker {
  if (worker) return worker;
  const limits = workerHeapLimits('intake');
  const started = startWorker(SCRIPT, { resourceLimits: limits });
  started.unref();
  started.on('message', (reply: IntakeReply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (pending.size === 0) {
      started.unref();
      if (limits) endWhenIdle(started);
    }
    if ('error' in reply) waiter.reject(fromWireError(reply.error));
    else waiter.resolve(reply.count);
  });
  const fail = (why: string) => {
    if (worker === started) worker = null;
    for (const [id, waiter] of pending) {
      pending.delete(id);
      waiter.reject(new SearchError('internal', `The payload could not be read: ${why}.`));
    }
  };
  started.on('error', (error) => fail(error.message));
  started.on('exit', (code) => fail(`the intake thread exited (code ${code})`));
  worker = started;
  return started;
}

let idleTimer: NodeJS.Timeout | null = null;

/** End `idle` (and forget it) unless a request comes within IDLE_END_MS. */
function endWhenIdle(idle: Worker): void {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    idleTimer = null;
    if (worker !== idle || pending.size > 0) return;
    worker = null;
    void idle.terminate();
  }, IDLE_END_MS);
  idleTimer.unref();
}

/** Parse `payload`, write its documents to the update file at `path` (fsynced), and return how many there are. */
export function persistPayload(payload: DocumentPayload, path: string): Promise<number> {
  if (idleTimer) {
    clearTimeout(idleTimer);
    idleTimer = null;
  }
  const target = intakeWorker();
  const id = nextId++;
  return new Promise<number>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    // while a request is pending the worker must keep the process alive to answer it
    target.ref();
    target.postMessage({ id, payload, path } satisfies IntakeRequest);
  });
}
