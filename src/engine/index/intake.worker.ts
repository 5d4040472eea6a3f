/** The intake thread (see intake.ts): parse a document payload and persist it as an update file. */
import { rmSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { toWireError } from '../errors.js';
import type { IntakeReply, IntakeRequest } from './intake.js';
import { writePayloadUpdateFile } from './payload.js';
import { collectAfterWork } from '../thread-heaps.js';
import { lowerThisThread } from '../indexing-priority.js';

// parsing a payload yields to searches (see indexing-priority.ts)
lowerThisThread();
const port = parentPort!;

port.on('message', ({ id, payload, path }: IntakeRequest) => {
  let reply: IntakeReply;
  try {
    // a Buffer crosses threads as a plain Uint8Array
    if (typeof payload.data !== 'string') payload.data = Buffer.from(payload.data.buffer, payload.data.byteOffset, payload.data.byteLength);
    reply = { id, count: writePayloadUpdateFile(path, payload) };
  } catch (error) {
    rmSync(path, { force: true });
    reply = { id, error: toWireError(error) };
  }
  port.postMessage(reply);
  // the payload's bytes and documents are garbage now (see thread-heaps.ts)
  collectAfterWork();
});
