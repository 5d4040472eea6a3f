/**
 * A search thread's entry (see search-threads.ts): a read-only engine over the database,
 * answering search requests with their serialized response bodies.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { takeUnreportedEmbedderCalls } from '../embedders/call-counts.js';
import { Engine } from '../engine.js';
import { toWireError } from '../errors.js';
import { AddressPolicy, setOutboundPolicy } from '../net/address-policy.js';
import type { FromSearchThread, SearchThreadData, ToSearchThread } from './search-threads.js';

const port = parentPort!;
const data = workerData as SearchThreadData;

function post(message: FromSearchThread): void {
  port.postMessage(message);
}

/** Query embeddings made by this thread since the last report, for /metrics. */
function reportEmbedderCalls(): void {
  const counts = takeUnreportedEmbedderCalls();
  if (counts) post({ type: 'embedderCalls', counts });
}

async function main(): Promise<void> {
  setOutboundPolicy(AddressPolicy.parse(data.outboundPolicy));
  const engine = await Engine.open({ dbPath: data.dbPath, logLevel: 'off', writer: 'none', skipVersionCheck: true, lock: false });
  port.on('message', (message: ToSearchThread) => {
    switch (message.type) {
      case 'request':
        engine.answer(message.request).then(
          (body) => {
            // transferred, not copied, when the body has its memory to itself (a small Buffer shares Node's pool)
            const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
            reportEmbedderCalls(); // before the answer, so that a scrape after it sees the call
            port.postMessage({ type: 'answer', id: message.id, body: own } satisfies FromSearchThread, [own.buffer as ArrayBuffer]);
          },
          (error: unknown) => {
            reportEmbedderCalls();
            post({ type: 'failed', id: message.id, ...toWireError(error) });
          },
        );
        break;
      case 'commit':
        engine.followCommit();
        break;
      case 'outboundPolicy':
        setOutboundPolicy(AddressPolicy.parse(message.spec));
        break;
      case 'close':
        void engine.close().then(() => {
          post({ type: 'closed' });
          port.close();
        });
        break;
    }
  });
  post({ type: 'ready' });
}

void main();
