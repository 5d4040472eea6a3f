/**
 * A search thread's entry (see search-threads.ts): a read-only engine over the database,
 * answering search requests with their serialized response bodies.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { takeUnreportedEmbedderCalls } from '../embedders/call-counts.js';
import { Engine } from '../engine.js';
import { toWireError } from '../errors.js';
import { takeUnreportedCacheHits } from './result-cache.js';
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

/** Answers of this turn, posted together at its end (see search-threads.ts), with their bodies. */
let outbox: SearchAnswer[] = [];
/** Per answer with a body, its pieces (see Engine.answerChunks). */
let bodies: Buffer[][] = [];

function queueAnswer(answer: SearchAnswer, body?: Buffer[]): void {
  outbox.push(answer);
  if (body) bodies.push(body);
  if (outbox.length > 1) return;
  setImmediate(postAnswers);
}

/** Posts the answers of this turn, their bodies copied one after the other into one transferred buffer. */
function postAnswers(): void {
  const batch = outbox;
  const parts = bodies;
  outbox = [];
  bodies = [];
  let length = 0;
  for (const chunks of parts) for (const chunk of chunks) length += chunk.byteLength;
  // a buffer of its own (not from Node's pool), so that transferring it moves nothing else
  const all = new Uint8Array(length);
  let at = 0;
  let next = 0;
  for (const answer of batch) {
    if (answer.end === undefined) continue;
    for (const chunk of parts[next++]!) {
      all.set(chunk, at);
      at += chunk.byteLength;
    }
    answer.end = at;
  }
  reportEmbedderCalls(); // before the answers, so that a scrape after them sees the calls
  port.postMessage({ type: 'answers', batch, bodies: all, cacheHits: takeUnreportedCacheHits() } satisfies FromSearchThread, [all.buffer]);
}

async function answer(engine: Engine, id: number, request: SearchRequest): Promise<void> {
  try {
    queueAnswer({ id, end: 0 }, await engine.answerChunks(request));
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
