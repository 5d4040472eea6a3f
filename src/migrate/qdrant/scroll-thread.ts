/**
 * The worker of background-scroll.ts: scrolls one collection and posts each page, never more
 * than `pagesAhead` pages before the owner has taken them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MigrationError } from '../errors.js';
import type { ScrollThreadData, ScrollThreadMessage } from './background-scroll.js';
import { QdrantHttp } from './http.js';
import { QdrantSource } from './source.js';

const data = workerData as ScrollThreadData;
const port = parentPort!;
const post = (m: ScrollThreadMessage) => port.postMessage(m);

let credit = data.pagesAhead;
let wake: (() => void) | null = null;
port.on('message', () => {
  credit++;
  wake?.();
});

try {
  const http = new QdrantHttp({ ...data.http, onRetry: (info) => post({ type: 'retry', info }) });
  for await (const page of new QdrantSource(http).scroll(data.collection, data.scroll)) {
    while (credit === 0) await new Promise<void>((r) => (wake = r));
    wake = null;
    credit--;
    post({ type: 'page', page });
  }
  post({ type: 'end' });
} catch (e) {
  if (e instanceof MigrationError) post({ type: 'error', kind: e.kind, message: e.message, ...(e.details ? { details: e.details } : {}) });
  else post({ type: 'error', kind: 'http', message: (e as Error).message });
}
// The owner terminates this thread once it has read the end or the error (exiting here could
// race the last message).
