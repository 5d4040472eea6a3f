/**
 * The write side's line to the engine that started it (see write-host.ts), seen from the write
 * side: the parent thread's port when it runs as a worker thread, the IPC channel when it runs
 * as a child process.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { FromWriteThread, ToWriteThread, WriteThreadData } from './write-thread.js';
import { WRITE_PROCESS_ARG } from './write-host.js';

export interface ParentChannel {
  readonly data: WriteThreadData;
  post(message: FromWriteThread): void;
  onMessage(listener: (message: ToWriteThread) => void): void;
  /** The last message was posted: end this side (a thread's port closes; a process exits once it is sent). */
  close(): void;
}

export function parentChannel(): ParentChannel {
  if (!isMainThread) return threadChannel();
  const at = process.argv.indexOf(WRITE_PROCESS_ARG);
  if (at < 0 || !process.send) throw new Error('the write side runs as a worker thread, or as a child process started by write-host.ts');
  return processChannel(JSON.parse(process.argv[at + 1]!) as WriteThreadData);
}

function threadChannel(): ParentChannel {
  const port = parentPort!;
  return {
    data: workerData as WriteThreadData,
    post: (message) => port.postMessage(message),
    onMessage: (listener) => port.on('message', listener),
    close: () => port.close(),
  };
}

/** How often the watchdog looks whether the parent is still there. */
const PARENT_WATCH_MS = 100;

function processChannel(data: WriteThreadData): ParentChannel {
  watchParent();
  // the parent decides when this side ends: an interrupt sent to the whole process group (a
  // terminal's Ctrl-C, a service manager stopping the group) reaches it first, and it closes this
  // side in order; were the child to die on it, the batch in progress would be cut short
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});
  // the channel closed: the parent ended it, or died
  process.on('disconnect', () => process.exit(0));
  return {
    data,
    post: (message) => {
      if (process.connected) process.send!(message, undefined, {}, () => {});
    },
    onMessage: (listener) => process.on('message', (message) => listener(message as ToWriteThread)),
    close: () => {
      if (!process.connected) process.exit(0);
      // an empty message whose callback runs once every message before it was written
      process.send!(null, undefined, {}, () => process.exit(0));
    },
  };
}

/**
 * Kill this process once its parent is gone. It runs in a thread of its own because the main
 * thread may be inside a long synchronous write transaction, when no event (not even the IPC
 * channel's `disconnect`) is handled; a thread sees the new parent id (the reaper's) at once.
 */
function watchParent(): void {
  const source = `
    const { workerData } = require('node:worker_threads');
    setInterval(() => {
      if (process.ppid !== workerData.parent) process.kill(workerData.self, 'SIGKILL');
    }, ${PARENT_WATCH_MS});
  `;
  const watchdog = new Worker(source, {
    eval: true,
    workerData: { parent: process.ppid, self: process.pid },
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
  });
  watchdog.unref();
}
