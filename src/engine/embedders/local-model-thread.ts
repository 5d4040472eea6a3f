/**
 * Local models run on a worker thread of their own (local-model.worker.ts).
 *
 * The TensorFlow.js backend computes on the thread that calls it: embedding 300 documents there
 * held the thread that answers HTTP for seconds at a time (GET /health waited up to 3.6 s), and a
 * hybrid search's query embedding blocked every other request. Here the calling thread only posts
 * texts and receives vectors, whose buffers are transferred, not copied.
 *
 * One worker per thread that uses it (`localModelThread()`), started on the first call, holding
 * every model it has been asked for. Calls run one at a time, in order. The worker does not keep
 * the process alive while idle (it is unref()ed; it is ref()ed only while a call is under way,
 * so that a pending embedding is not dropped by the process exiting under it). If it dies, the
 * call under way fails with an EmbeddingFailure and the next call starts a new one.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { startWorker, workerScriptUrl } from '../worker-script.js';
import type { ModelSpec } from './model-location.js';
import { LOCAL_MODEL_ROLE, type LocalModelReply, type LocalModelRequest } from './local-model.worker.js';
import { EmbeddingFailure } from './types.js';

/** A model to run: where its files are (model-location.ts), and the name it is known by in messages. */
export interface LocalModelRef {
  spec: ModelSpec;
  name: string;
}

interface Call {
  id: number;
  worker: Worker;
  model: LocalModelRef;
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

export class LocalModelThread {
  private worker: Worker | null = null;
  /** The call under way: calls are serialised, so there is at most one. */
  private current: Call | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;

  /** `script`: the worker's entry, by default local-model.worker.js (see worker-script.ts). */
  constructor(private readonly script?: URL) {}

  /** Embed `texts` (one model call: the caller bounds their number) with `model`, after the calls before. */
  embed(model: LocalModelRef, texts: string[]): Promise<Float32Array[]> {
    const run = this.queue.then(() => this.call(model, texts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Whether a worker is running (started and not dead or terminated). */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Stop the worker, failing the call under way; calls queued behind it, or made later, start a new one. */
  async terminate(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.fail(worker, (model) => new EmbeddingFailure(`the local model thread was stopped while embedding with \`${model.name}\``));
    if (worker) await worker.terminate();
  }

  private call(model: LocalModelRef, texts: string[]): Promise<Float32Array[]> {
    return new Promise<Float32Array[]>((resolve, reject) => {
      const worker = this.start();
      const id = this.nextId++;
      this.current = { id, worker, model, resolve, reject };
      worker.ref();
      worker.postMessage({ id, model: model.spec, texts } satisfies LocalModelRequest);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    let script: URL;
    try {
      script = this.script ?? workerScriptUrl(import.meta.url, './local-model.worker.js');
    } catch (error) {
      throw new EmbeddingFailure(`could not start the local model thread: ${(error as Error).message}`, { cause: error });
    }
    if (script.protocol === 'file:' && !existsSync(fileURLToPath(script)))
      throw new EmbeddingFailure(`could not start the local model thread: its script \`${fileURLToPath(script)}\` is missing (build with \`npx tsc -p tsconfig.json\`)`);
    const worker = startWorker(script, { workerData: { role: LOCAL_MODEL_ROLE } });
    worker.unref();
    worker.on('message', (reply: LocalModelReply) => this.settle(worker, reply));
    worker.on('error', (error: Error) => this.died(worker, error.message));
    worker.on('exit', (code: number) => this.died(worker, `it exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private settle(worker: Worker, reply: LocalModelReply): void {
    const call = this.current;
    if (!call || call.worker !== worker || call.id !== reply.id) return;
    this.current = null;
    if (this.worker === worker) worker.unref();
    if (reply.ok) call.resolve(reply.vectors);
    else if (reply.stage === 'load') call.reject(new EmbeddingFailure(`could not load the local model \`${call.model.name}\`: ${reply.message}`));
    else call.reject(new Error(reply.message));
  }

  private died(worker: Worker, reason: string): void {
    if (this.worker === worker) this.worker = null;
    this.fail(worker, (model) => new EmbeddingFailure(`the local model thread stopped while embedding with \`${model.name}\`: ${reason}`));
  }

  private fail(worker: Worker | null, error: (model: LocalModelRef) => Error): void {
    const call = this.current;
    if (!call || call.worker !== worker) return;
    this.current = null;
    call.reject(error(call.model));
  }
}

let shared: LocalModelThread | undefined;

/** The local model thread of this thread (its worker starts on the first call). */
export function localModelThread(): LocalModelThread {
  return (shared ??= new LocalModelThread());
}

/** Stop this thread's local model worker, if it runs; models are loaded again on the next call. */
export async function stopLocalModelThread(): Promise<void> {
  await shared?.terminate();
}
