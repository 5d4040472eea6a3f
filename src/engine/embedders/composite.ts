/**
 * `composite` source: one embedder for documents (`indexingEmbedder`) and another for queries
 * (`searchEmbedder`), e.g. a local model at indexing time and a hosted copy of the same model at
 * search time. Both must produce vectors of the same space, hence the same dimensions.
 */
import { EmbeddingFailure, type Embedder, type EmbedPurpose } from './types.js';

export class CompositeEmbedder implements Embedder {
  readonly source = 'composite' as const;

  constructor(
    readonly indexing: Embedder,
    readonly search: Embedder,
  ) {}

  dimensions(): number | undefined {
    return this.indexing.dimensions() ?? this.search.dimensions();
  }

  async embed(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]> {
    const side = purpose === 'search' ? this.search : this.indexing;
    const vectors = await side.embed!(texts, purpose);
    const other = (purpose === 'search' ? this.indexing : this.search).dimensions();
    const odd = other === undefined ? undefined : vectors.find((v) => v.length !== other);
    if (odd)
      throw new EmbeddingFailure(
        `the composite embedder's ${purpose === 'search' ? 'searchEmbedder' : 'indexingEmbedder'} returned ${odd.length} dimensions while the other side has ${other}`,
      );
    return vectors;
  }
}
