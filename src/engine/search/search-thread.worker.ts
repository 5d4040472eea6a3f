/**
 * A search thread's entry (see search-threads.ts): a read-only engine over the database,
 * answering search requests with their serialized response bodies.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { takeUnreportedEmbedderCalls } from '../embedders/call-counts.js';
import { Engine } from '../engine.js';
import { toWireError } from '../errors.js';
import { AddressPolicy, setOutboundPolicy } from '../net/address-policy.js';
import type { FromSearchThread, SearchAnswer, SearchRequest, SearchThreadData, ToSearchThread } from './search-threads.js';

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

/** Answers of this turn, posted together at its end (see search-threads.ts). */
let outbox: SearchAnswer[] = [];
let transfer: ArrayBuffer[] = [];

function queueAnswer(answer: SearchAnswer, buffer?: ArrayBuffer): void {
  outbox.push(answer);
  if (buffer) transfer.push(buffer);
  if (outbox.length > 1) return;
  setImmediate(() => {
    const batch = outbox;
    const buffers = transfer;
    outbox = [];
    transfer = [];
    reportEmbedderCalls(); // before the answers, so that a scrape after them sees the calls
    port.postMessage({ type: 'answers', batch } satisfies FromSearchThread, buffers);
  });
}

async function answer(engine: Engine, id: number, request: SearchRequest): Promise<void> {
  try {
    const body = await engine.answer(request);
    // transferred, not copied, when the body has its memory to itself (a small Buffer shares Node's pool)
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
    queueAnswer({ id, body: own }, own.buffer as ArrayBuffer);
  } catch (error) {
    queueAnswer({ id, ...toWireError(error) });
  }
}

async function main(): Promise<void> {
  setOutboundPolicy(AddressPolicy.parse(data.outboundPolicy));
  const engine = await Engine.open({ dbPath: data.dbPath, logLevel: 'off', writer: 'none', skipVersionCheck: true, lock: false });
  port.on('message', (message: ToSearchThread) => {
    switch (message.type) {
      case 'requests':
        for (const { id, request } of message.batch) void answer(engine, id, request);
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
