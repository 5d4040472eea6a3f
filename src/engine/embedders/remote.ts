/**
 * Shared shape of the embedders that call an HTTP API: split texts into batches, send a few
 * batches at a time, check every vector's length, learn the dimensions from the first answer
 * when the settings do not give them.
 */
import { chunks, defaultRetryPolicy, searchRetryPolicy, type RetryPolicy } from './http.js';
import { EmbeddingFailure, type Embedder, type EmbedderSource, type EmbedPurpose } from './types.js';

/** Concurrent requests per embedding call: providers rate-limit, and the machine is small. */
const CONCURRENCY = 2;

export abstract class RemoteEmbedder implements Embedder {
  abstract readonly source: EmbedderSource;
  protected learnt: number | undefined;

  constructor(protected readonly configured: number | undefined) {}

  dimensions(): number | undefined {
    return this.configured ?? this.learnt;
  }

  /** Texts per request. */
  protected abstract batchSize(): number;
  /** One request for `texts`; returns exactly one vector per text. */
  protected abstract request(texts: string[], policy: RetryPolicy): Promise<Float32Array[]>;

  async embed(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]> {
    // a query waits for its answer: fail fast and let hybrid search fall back to keywords
    const policy = purpose === 'search' ? searchRetryPolicy() : defaultRetryPolicy();
    const batches = chunks(texts, this.batchSize());
    const results: Float32Array[][] = new Array(batches.length);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const i = next++;
        const vectors = await this.request(batches[i]!, policy);
        if (this.learnt === undefined && vectors.length) this.learnt = vectors[0]!.length;
        const expected = this.dimensions();
        const odd = vectors.find((v) => v.length !== expected);
        if (odd)
          throw new EmbeddingFailure(
            `the ${this.source} embedder returned an embedding of ${odd.length} dimensions, but ${expected} were expected`,
          );
        results[i] = vectors;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, batches.length) }, worker));
    return results.flat();
  }
}
