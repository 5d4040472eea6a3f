/**
 * The thread that runs local models (the `huggingFace` source): see local-model-thread.ts.
 *
 * TensorFlow.js runs here on its pure-JS backend, which holds a thread for the whole of a model
 * call (a batch of 32 texts takes a few hundred milliseconds on a small machine). Run on the
 * thread that answers HTTP, it stalled every request while documents were embedded.
 *
 * Requests come one at a time (the caller serialises them, and so does this thread); each names
 * its model (model-location.ts), loaded once per thread: a TensorFlow.js model from its files, a
 * hub model from its ONNX weights (onnx-model.ts), fetched into the hub cache first when it is not
 * on disk yet (hub-download.ts).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { downloadHubModel } from './hub-download.js';
import { modelKey, type ModelSpec } from './model-location.js';
import { OnnxSentenceModel } from './onnx-model.js';

const require = createRequire(import.meta.url);

/** `workerData.role` of this thread: the module runs its loop only when started as it. */
export const LOCAL_MODEL_ROLE = 'local-model';

export interface LocalModel {
  embed(input: string[]): Promise<Float32Array[]>;
}

interface TfjsModel {
  embed(input: string[]): Promise<number[][]>;
}

type ModelSource = () => Promise<{ model: unknown; vocabulary: unknown }>;

/** Texts to embed with a model. */
export interface LocalModelRequest {
  id: number;
  model: ModelSpec;
  texts: string[];
}

/** One vector per text, or why there are none: the model did not load, or failed on the texts. */
export type LocalModelReply =
  | { id: number; ok: true; vectors: Float32Array[] }
  | { id: number; ok: false; stage: 'load' | 'embed'; message: string };

const loaded = new Map<string, Promise<LocalModel>>();

/** The model `spec` names, loaded once per thread. */
export function loadLocalModel(spec: ModelSpec): Promise<LocalModel> {
  const key = modelKey(spec);
  let model = loaded.get(key);
  if (!model) {
    model = load(spec);
    model.catch(() => loaded.delete(key));
    loaded.set(key, model);
  }
  return model;
}

async function load(spec: ModelSpec): Promise<LocalModel> {
  switch (spec.kind) {
    case 'tfjs':
      return loadTfjsModel(spec.dir);
    case 'hub':
      return OnnxSentenceModel.load(spec.dir, spec.pooling);
    case 'download':
      return OnnxSentenceModel.load(await downloadHubModel(spec), spec.pooling);
  }
}

async function loadTfjsModel(dir: string): Promise<LocalModel> {
  const core = require('@energetic-ai/core') as { loadGraphModel(url: string): Promise<unknown> };
  const embeddings = require('@energetic-ai/embeddings') as { initModel(source: ModelSource): Promise<TfjsModel> };
  // an explicit source: initModel's default would download the model from the internet
  const source: ModelSource = async () => {
    const [graph, vocabulary] = await Promise.all([
      core.loadGraphModel(pathToFileURL(path.join(dir, 'model.json')).href),
      readFile(path.join(dir, 'vocab.json'), 'utf8').then((text) => JSON.parse(text) as unknown),
    ]);
    return { model: graph, vocabulary };
  };
  const model = await embeddings.initModel(source);
  return { embed: async (texts) => (await model.embed(texts)).map((v) => Float32Array.from(v)) };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function answer(port: MessagePort, { id, model: spec, texts }: LocalModelRequest): Promise<void> {
  let model: LocalModel;
  try {
    model = await loadLocalModel(spec);
  } catch (error) {
    port.postMessage({ id, ok: false, stage: 'load', message: messageOf(error) } satisfies LocalModelReply);
    return;
  }
  let vectors: Float32Array[];
  try {
    vectors = await model.embed(texts);
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
