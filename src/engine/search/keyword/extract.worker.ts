/** The keyword extraction thread (see parallel-extract.ts). */
import { parentPort } from 'node:worker_threads';
import { extractDetached, type ExtractedBatch } from './extension.js';
import type { ExtractReply, ExtractRequest } from './parallel-extract.js';

const port = parentPort!;

/** The memory of the typed arrays of a result, moved rather than copied. */
function transferables(batch: ExtractedBatch): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const add = (array: Uint32Array) => buffers.add(array.buffer as ArrayBuffer);
  for (const deltas of [batch.words, batch.exact, batch.prefixes, batch.values, batch.pairs, batch.parts, batch.prefixParts]) {
    add(deltas.start);
    add(deltas.docs);
  }
  for (const chunk of batch.entries.chunks) add(chunk);
  return [...buffers];
}

port.on('message', ({ id, settings, paths, changes, maxPending, recorded }: ExtractRequest) => {
  let reply: ExtractReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const { batch, done } = extractDetached(settings, paths, changes, maxPending, recorded);
    reply = { id, batch, done };
    transfer = transferables(batch);
  } catch (error) {
    reply = { id, error: (error as Error).message };
  }
  port.postMessage(reply, transfer);
});
