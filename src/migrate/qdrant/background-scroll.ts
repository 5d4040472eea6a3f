/**
 * Reading a collection's pages on a worker thread.
 *
 * With an embedded target, this thread spends seconds at a time inside a batch's write
 * transaction, during which it cannot receive pages: reading here left the engine waiting for
 * the next batch after nearly every one it wrote (4.5 s idle, and more spent reading while the
 * engine had nothing to do, in a 42 s migration of 200k points).
 * The worker fetches and parses pages meanwhile, up to READ_AHEAD (points and bytes of page
 * text) ahead of what this thread has taken, so memory stays bounded whatever the collection's
 * size and however large its payloads.
 *
 * Without the compiled worker script (the TypeScript test runner) or with options that cannot
 * cross threads, pages are read on this thread, one ahead (QdrantSource.scroll).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startWorker } from '../../engine/worker-script.js';
import { MigrationError, type MigrationErrorKind } from '../errors.js';
import type { QdrantHttp, QdrantHttpOptions } from './http.js';
import { QdrantSource, type ScrollOptions, type ScrollPage } from './source.js';

/**
 * How far the worker may read ahead of the caller: about a write transaction's time at Qdrant's
 * pace for 100-d points (32k points, 36 MB of page text), and no more than 64 MiB of page text
 * for points with large payloads. A single larger page still goes through.
 */
export const READ_AHEAD = { points: 32_768, bytes: 64 * 1024 * 1024 };

const SCRIPT = new URL('./scroll-thread.js', import.meta.url);

/** What the worker is given. */
export interface ScrollThreadData {
  http: Omit<QdrantHttpOptions, 'onRetry'>;
  collection: string;
  scroll: ScrollOptions;
  /** Pages it may send before the caller has taken them. */
  pagesAhead: number;
  /** Page text (UTF-16 units, `ScrollPage.length`) it may send before the caller has taken it. */
  bytesAhead: number;
}

/** What the worker sends: pages in order, retries as they happen, then the end or an error. */
export type ScrollThreadMessage =
  | { type: 'page'; page: ScrollPage }
  | { type: 'retry'; info: { attempt: number; delayMs: number; reason: string } }
  | { type: 'end' }
  | { type: 'error'; kind: MigrationErrorKind; message: string; details?: Record<string, unknown> };

export function scrollInBackground(http: QdrantHttp, collection: string, o: ScrollOptions, ahead = READ_AHEAD): AsyncGenerator<ScrollPage> {
  const options = http.portableOptions();
  if (!options || !workerScriptExists()) return new QdrantSource(http).scroll(collection, o);
  const pagesAhead = Math.max(2, Math.ceil(ahead.points / o.pageSize));
  return readFromWorker(http, { http: options, collection, scroll: o, pagesAhead, bytesAhead: ahead.bytes });
}

function workerScriptExists(): boolean {
  try {
    return existsSync(fileURLToPath(SCRIPT));
  } catch {
    return false;
  }
}

async function* readFromWorker(http: QdrantHttp, data: ScrollThreadData): AsyncGenerator<ScrollPage> {
  const worker = startWorker(SCRIPT, { workerData: data });
  const inbox: ScrollThreadMessage[] = [];
  let wake: (() => void) | null = null;
  const deliver = (m: ScrollThreadMessage) => {
    inbox.push(m);
    wake?.();
  };
  worker.on('message', deliver);
  worker.on('error', (e) => deliver({ type: 'error', kind: 'http', message: `the Qdrant reader thread failed: ${e.message}` }));
  worker.on('exit', (code) => deliver({ type: 'error', kind: 'http', message: `the Qdrant reader thread exited (code ${code}) before the last page` }));
  try {
    for (;;) {
      while (inbox.length === 0) await new Promise<void>((r) => (wake = r));
      wake = null;
      const m = inbox.shift()!;
      if (m.type === 'retry') http.reportRetry(m.info);
      else if (m.type === 'error') throw new MigrationError(m.kind, m.message, m.details);
      else if (m.type === 'end') return;
      else {
        yield m.page;
        // taken: the worker may read one more
        worker.postMessage(1);
      }
    }
  } finally {
    worker.removeAllListeners();
    await worker.terminate();
  }
}
