/**
 * What an embedder is, independent of where its vectors come from.
 *
 * An embedder turns texts into vectors (`embed`). Sources that do not generate vectors themselves
 * (`userProvided`) have no `embed`: their vectors only arrive through documents' `_vectors` and
 * through the search `vector` parameter.
 */

export const EMBEDDER_SOURCES = ['openAi', 'huggingFace', 'ollama', 'userProvided', 'rest', 'composite'] as const;
export type EmbedderSource = (typeof EMBEDDER_SOURCES)[number];

/** Why texts are embedded: composite embedders use a different sub-embedder for each. */
export type EmbedPurpose = 'indexing' | 'search';

export interface Embedder {
  readonly source: EmbedderSource;
  /** Known dimensions: configured, implied by the model, or learnt from the first response. */
  dimensions(): number | undefined;
  /** Embed texts, one vector per text, in order. Throws `EmbeddingFailure` on provider errors. */
  embed?(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]>;
}

/**
 * A provider failure. The vectors extension turns it into a `vector_embedding_error` naming the
 * documents involved; search turns it into a keyword-only fallback.
 */
export class EmbeddingFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingFailure';
  }
}

/** Mean and standard deviation of the similarity scores an embedder produces (`distribution`). */
export interface Distribution {
  mean: number;
  sigma: number;
}
