/**
 * Embedders from settings. `embedderFor(settings)` builds (and caches per configuration) the
 * embedder described by one entry of the `embedders` setting; construction does no I/O, so it
 * is cheap to call per batch or per query.
 */
import type { EmbedderSettings } from '../settings/types.js';
import { CompositeEmbedder } from './composite.js';
import { HuggingFaceEmbedder } from './huggingFace.js';
import type { Pooling } from './model-location.js';
import { OllamaEmbedder } from './ollama.js';
import { OpenAiEmbedder } from './openAi.js';
import { RestEmbedder } from './rest.js';
import { EmbeddingFailure, type Embedder } from './types.js';
import { UserProvidedEmbedder } from './userProvided.js';
import { countEmbedderCall } from './call-counts.js';

export * from './types.js';
export { validateEmbedders, mergeEmbedders, updateEmbedders, redactEmbedders, type EmbeddersPatch } from './settings.js';
export { renderDocument, DEFAULT_DOCUMENT_TEMPLATE, DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES } from './template.js';
export { shiftScore } from './distribution.js';

const cache = new Map<string, Embedder>();

export function embedderFor(settings: EmbedderSettings): Embedder {
  const key = JSON.stringify(settings);
  let embedder = cache.get(key);
  if (!embedder) {
    embedder = counted(build(settings));
    if (cache.size > 128) cache.clear();
    cache.set(key, embedder);
  }
  return embedder;
}

const pooling = (v: unknown): Pooling | undefined => (v === 'useModel' || v === 'forceMean' || v === 'forceCls' ? v : undefined);

/** The same embedder, its `embed` calls counted for `/metrics` (see call-counts.ts). */
function counted(embedder: Embedder): Embedder {
  const embed = embedder.embed?.bind(embedder);
  if (!embed) return embedder;
  embedder.embed = async (texts, purpose) => {
    try {
      const vectors = await embed(texts, purpose);
      countEmbedderCall(embedder.source, false);
      return vectors;
    } catch (error) {
      countEmbedderCall(embedder.source, true);
      throw error;
    }
  };
  return embedder;
}

function build(s: Record<string, unknown>): Embedder {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  switch (s.source) {
    case 'userProvided':
      return new UserProvidedEmbedder(num(s.dimensions)!);
    case 'openAi':
      return new OpenAiEmbedder({ model: str(s.model), url: str(s.url), apiKey: str(s.apiKey), dimensions: num(s.dimensions) });
    case 'ollama':
      return new OllamaEmbedder({ model: str(s.model)!, url: str(s.url), apiKey: str(s.apiKey), dimensions: num(s.dimensions) });
    case 'rest':
      return new RestEmbedder({
        url: str(s.url)!,
        request: s.request,
        response: s.response,
        headers: s.headers as Record<string, string> | undefined,
        apiKey: str(s.apiKey),
        dimensions: num(s.dimensions),
      });
    case 'huggingFace':
      return new HuggingFaceEmbedder(str(s.model), undefined, { revision: str(s.revision), pooling: pooling(s.pooling) });
    case 'composite':
      return new CompositeEmbedder(build(s.indexingEmbedder as Record<string, unknown>), build(s.searchEmbedder as Record<string, unknown>));
    default:
      throw new EmbeddingFailure(`unknown embedder source \`${String(s.source)}\``);
  }
}
