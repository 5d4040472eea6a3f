/**
 * The thread that runs local models (the `huggingFace` source): see local-model-thread.ts.
 *
 * TensorFlow.js runs here on its pure-JS backend, which holds a thread for the whole of a model
 * call (a batch of 32 texts takes a few hundred milliseconds on a small machine). Run on the
 * thread that answers HTTP, it stalled every request while documents were embedded.
 *
 * Requests come one at a time (the caller serialises them, and so does this thread); each names
 * the model's directory, loaded once per directory from its files, never from the network.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/** `workerData.role` of this thread: the module runs its loop only when started as it. */
export const LOCAL_MODEL_ROLE = 'local-model';

export interface LocalModel {
  embed(input: string[]): Promise<number[][]>;
}

type ModelSource = () => Promise<{ model: unknown; vocabulary: unknown }>;

/** Texts to embed with the model in `dir` (absolute, holding `model.json` and `vocab.json`). */
export interface LocalModelRequest {
  id: number;
  dir: string;
  texts: string[];
}

/** One vector per text, or why there are none: the model did not load, or failed on the texts. */
export type LocalModelReply =
  | { id: number; ok: true; vectors: Float32Array[] }
  | { id: number; ok: false; stage: 'load' | 'embed'; message: string };

const loaded = new Map<string, Promise<LocalModel>>();

/** The model whose files are in `dir`, loaded once per thread. */
export function loadLocalModel(dir: string): Promise<LocalModel> {
  let model = loaded.get(dir);
  if (!model) {
    model = (async () => {
      const core = require('@energetic-ai/core') as { loadGraphModel(url: string): Promise<unknown> };
      const embeddings = require('@energetic-ai/embeddings') as { initModel(source: ModelSource): Promise<LocalModel> };
      // an explicit source: initModel's default would download the model from the internet
      const source: ModelSource = async () => {
        const [graph, vocabulary] = await Promise.all([
          core.loadGraphModel(pathToFileURL(path.join(dir, 'model.json')).href),
          readFile(path.join(dir, 'vocab.json'), 'utf8').then((text) => JSON.parse(text) as unknown),
        ]);
        return { model: graph, vocabulary };
      };
      return embeddings.initModel(source);
    })();
    model.catch(() => loaded.delete(dir));
    loaded.set(dir, model);
  }
  return model;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function answer(port: MessagePort, { id, dir, texts }: LocalModelRequest): Promise<void> {
  let model: LocalModel;
  try {
    model = await loadLocalModel(dir);
  } catch (error) {
    port.postMessage({ id, ok: false, stage: 'load', message: messageOf(error) } satisfies LocalModelReply);
    return;
  }
  let vectors: Float32Array[];
  try {
    vectors = (await model.embed(texts)).map((v) => Float32Array.from(v));
  } catch (error) {
    port.postMessage({ id, ok: false, stage: 'embed', message: messageOf(error) } satisfies LocalModelReply);
    return;
  }
  // each vector has a buffer of its own, moved to the caller rather than copied
  port.postMessage({ id, ok: true, vectors } satisfies LocalModelReply, vectors.map((v) => v.buffer as ArrayBuffer));
}

if (!isMainThread && parentPort && (workerData as { role?: unknown } | null)?.role === LOCAL_MODEL_ROLE) {
  const port = parentPort;
  // one model call at a time: the backend is not re-entrant
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (request: LocalModelRequest) => {
    queue = queue
      .then(() => answer(port, request))
      .catch((error: unknown) => port.postMessage({ id: request.id, ok: false, stage: 'embed', message: messageOf(error) } satisfies LocalModelReply));
  });
}
