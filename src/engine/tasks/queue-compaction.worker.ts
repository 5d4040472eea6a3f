/** The thread that writes the task queue's compacted copy (see queue-compaction.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { toWireError } from '../errors.js';
import { writeTaskQueueCopy } from './queue-compaction.js';
import { lowerThisThread } from '../indexing-priority.js';

// started by the serving thread; the copy yields to searches (see indexing-priority.ts)
lowerThisThread();

const { root } = workerData as { root: string };
writeTaskQueueCopy(root).then(
  (result) => parentPort!.postMessage({ result }),
  (error: unknown) => parentPort!.postMessage({ error: toWireError(error) }),
);
