/** The vectors extension on the disk HNSW store (not the test stand-in): float and binary-quantized embedders. */
import { afterEach, describe, expect, it } from 'vitest';
import { updateEmbedders } from '../../src/engine/embedders/settings.js';
import { semanticRanking } from '../../src/engine/search/hybrid.js';
import { VectorsExtension } from '../../src/engine/vector/extension.js';
import { VectorStore } from '../../src/engine/vector/store.js';
import { Harness } from './harness.js';

let h: Harness;
afterEach(async () => h?.close());

/** Deterministic pseudo-random vectors. */
function vectors(n: number, dims: number, seed = 7): number[][] {
  let x = seed;
  const next = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  return Array.from({ length: n }, () => Array.from({ length: dims }, next));
}

describe.each([false, true])('userProvided embedder on the HNSW store (binaryQuantized: %s)', (binaryQuantized) => {
  it('indexes, finds the exact vector first, follows deletions and reports stats', async () => {
    h = new Harness(new VectorsExtension((store, embedder, options) => new VectorStore(store, embedder, options)));
    await h.setEmbedders(updateEmbedders({}, { e: { source: 'userProvided', dimensions: 32, binaryQuantized } }));
    const data = vectors(300, 32);
    await h.add(data.map((v, i) => ({ id: String(i), _vectors: { e: v } })));
    expect(h.store.main.get('embeddingStats')).toEqual({ numberOfEmbeddings: 300, numberOfEmbeddedDocuments: 300 });

    for (const probe of [0, 123, 299]) {
      const ranking = await semanticRanking(h.index, { embedder: 'e', vector: Float32Array.from(data[probe]!), limit: 5 }, h.extension);
      expect(h.store.getDocument(ranking.hits[0]!.docid)!.id).toBe(String(probe));
      expect(ranking.hits[0]!.score).toBeCloseTo(1, 5);
    }
    await h.remove(['123']);
    const after = await semanticRanking(h.index, { embedder: 'e', vector: Float32Array.from(data[123]!), limit: 5 }, h.extension);
    expect(after.hits.map((x) => h.store.getDocument(x.docid)!.id)).not.toContain('123');
    expect(h.store.main.get('embeddingStats')).toEqual({ numberOfEmbeddings: 299, numberOfEmbeddedDocuments: 299 });
  });
});
