/**
 * The write side's entry (see write-thread.ts), in a worker thread or a child process (see
 * write-host.ts): an engine whose scheduler runs here, with the operations processors (dumps,
 * snapshots, upgrades) installed, answering the serving thread's messages and reporting batch
 * events and log lines back to it.
 */
import { reportEmbedderCallsToParent, takeUnreportedEmbedderCalls } from '../embedders/call-counts.js';
import { Engine, type LogLevel } from '../engine.js';
import { toSearchError } from '../errors.js';
import { AddressPolicy, setOutboundPolicy } from '../net/address-policy.js';
import { Ops } from '../ops/service.js';
import { setSink } from '../logs/logger.js';
import { LogTargets } from '../logs/targets.js';
import { collectAfterWork } from '../thread-heaps.js';
import { lowerThisProcess, lowerThisThread } from '../indexing-priority.js';
import { enableWritableMap } from '../index/writable-map.js';
import { isMainThread } from 'node:worker_threads';
import { parentChannel } from './parent-channel.js';
import type { FromWriteThread, ToWriteThread } from './write-thread.js';

const channel = parentChannel();
const data = channel.data;

function post(message: FromWriteThread): void {
  channel.post(message);
}

/** Events one of the serving thread's filters accepts go there (see logs/logger.ts). */
function forwardLogs(specs: string[]): void {
  setSink('forward', { targets: LogTargets.anyOf(specs.map((spec) => LogTargets.parse(spec))), write: (event) => post({ type: 'logEvent', event }) });
}

async function main(): Promise<void> {
  // searches first (see indexing-priority.ts); a child process answers none, so all of it
  if (isMainThread) lowerThisProcess();
  else lowerThisThread();
  // a fault in a writable map ends this process only when it is one of its own (see writable-map.ts)
  if (isMainThread) enableWritableMap(data.dbPath);
  reportEmbedderCallsToParent();
  setOutboundPolicy(AddressPolicy.parse(data.outboundPolicy));
  forwardLogs(data.logFilters);
  let engine: Engine;
  try {
    engine = await Engine.open({
      dbPath: data.dbPath,
      maxIndexingMemory: data.maxIndexingMemory,
      logLevel: data.logLevel as LogLevel,
      autoProcess: false,
      // the serving thread checked the version before starting this one
      skipVersionCheck: true,
      writer: 'inline',
      // the serving thread holds the process's lock on the directory
      lock: false,
      resumeWriter: data.resumed === true,
    });
  } catch (error) {
    const searchError = toSearchError(error);
    post({ type: 'initFailed', code: searchError.code, message: searchError.message });
    channel.close();
    return;
  }
  let ops = Ops.install(engine, {});
  const scheduler = engine.scheduler;
  scheduler.on('batchStarted', (event) => post({ type: 'batchStarted', event }));
  // embedder calls first, so that whoever waits for the batch sees them counted (for /metrics)
  const reportEmbedderCalls = () => {
    const counts = takeUnreportedEmbedderCalls();
    if (counts) post({ type: 'embedderCalls', counts });
  };
  scheduler.on('batchFinished', (event) => {
    reportEmbedderCalls();
    post({ type: 'batchFinished', event });
    collectAfterWork();
  });
  scheduler.on('batchAborted', (event) => {
    reportEmbedderCalls();
    post({ type: 'batchAborted', event });
    collectAfterWork();
  });

  channel.onMessage((message: ToWriteThread) => {
    switch (message.type) {
      case 'start':
        scheduler.start();
        break;
      case 'wake':
        scheduler.wake();
        break;
      case 'abort':
        scheduler.abortIfProcessing(message.uids);
        break;
      case 'outboundPolicy':
        setOutboundPolicy(AddressPolicy.parse(message.spec));
        break;
      case 'logFilters':
        forwardLogs(message.specs);
        break;
      case 'crashes':
        engine.inlineScheduler!.setCrashCounts(new Map(message.counts));
        break;
      case 'operations':
        void ops.close().then(() => {
          ops = Ops.install(engine, message.options);
          post({ type: 'operationsSet' });
        });
        break;
      case 'stop':
        void scheduler.stop(message.abort).then(() => post({ type: 'stopped' }));
        break;
      case 'close':
        void (async () => {
          let pending = false;
          if (message.idle) {
            // ended because idle: a task registered meanwhile needs the next thread
            await engine.inlineScheduler!.stop();
            pending = engine.inlineScheduler!.hasWork();
          }
          await engine.close({ abort: message.abort });
          await ops.close();
          post({ type: 'closed', pending });
          channel.close();
        })();
        break;
    }
  });
  post({ type: 'ready' });
}

void main();
