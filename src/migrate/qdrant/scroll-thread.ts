/**
 * The worker of background-scroll.ts: scrolls one collection and posts each page, never more
 * than `pagesAhead` pages, nor (beyond the first) `bytesAhead` of page text, before the owner
 * has taken them. The owner answers each page it takes with a message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MigrationError } from '../errors.js';
import type { ScrollThreadData, ScrollThreadMessage } from './background-scroll.js';
import { QdrantHttp } from './http.js';
import { QdrantSource } from './source.js';

const data = workerData as ScrollThreadData;
const port = parentPort!;
const post = (m: ScrollThreadMessage) => port.postMessage(m);

/** Text lengths of the pages posted and not yet taken, oldest first. */
const untaken: number[] = [];
let untakenBytes = 0;
let wake: (() => void) | null = null;
port.on('message', () => {
  untakenBytes -= untaken.shift() ?? 0;
  wake?.();
});
const full = () => untaken.length >= data.pagesAhead || (untaken.length > 0 && untakenBytes >= data.bytesAhead);

try {
  const http = new QdrantHttp({ ...data.http, onRetry: (info) => post({ type: 'retry', info }) });
  for await (const page of new QdrantSource(http).scroll(data.collection, data.scroll)) {
    while (full()) await new Promise<void>((r) => (wake = r));
    wake = null;
    untaken.push(page.length);
    untakenBytes += page.length;
    post({ type: 'page', page });
  }
  post({ type: 'end' });
} catch (e) {
  if (e instanceof MigrationError) post({ type: 'error', kind: e.kind, message: e.message, ...(e.details ? { details: e.details } : {}) });
  else post({ type: 'error', kind: 'http', message: (e as Error).message });
}
// The owner terminates this thread once it has read the end or the error (exiting here could
// race the last message).
