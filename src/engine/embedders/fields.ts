/**
 * Which embedder settings fields each source accepts and requires, at the top level and inside a
 * composite embedder (`indexingEmbedder`, `searchEmbedder`). Kept as data so that validation
 * messages can list the alternatives the way the reference does.
 */
import type { EmbedderSource } from './types.js';

export const EMBEDDER_FIELDS = [
  'source',
  'model',
  'revision',
  'pooling',
  'apiKey',
  'dimensions',
  'binaryQuantized',
  'documentTemplate',
  'documentTemplateMaxBytes',
  'url',
  'request',
  'response',
  'headers',
  'searchEmbedder',
  'indexingEmbedder',
  'distribution',
  'distance',
] as const;
export type EmbedderField = (typeof EMBEDDER_FIELDS)[number];

/** Where an embedder's settings sit: at the top level or as a composite's sub-embedder. */
export type Nesting = 'top' | 'indexingEmbedder' | 'searchEmbedder';

const TOP_LEVEL: Record<EmbedderSource, readonly EmbedderField[]> = {
  openAi: ['source', 'model', 'apiKey', 'dimensions', 'documentTemplate', 'documentTemplateMaxBytes', 'url', 'distribution', 'binaryQuantized', 'distance'],
  huggingFace: ['source', 'model', 'revision', 'pooling', 'documentTemplate', 'documentTemplateMaxBytes', 'distribution', 'binaryQuantized', 'distance'],
  ollama: ['source', 'model', 'url', 'apiKey', 'dimensions', 'documentTemplate', 'documentTemplateMaxBytes', 'distribution', 'binaryQuantized', 'distance'],
  userProvided: ['source', 'dimensions', 'distribution', 'binaryQuantized', 'distance'],
  rest: ['source', 'url', 'apiKey', 'dimensions', 'documentTemplate', 'documentTemplateMaxBytes', 'request', 'response', 'headers', 'distribution', 'binaryQuantized', 'distance'],
  composite: ['source', 'searchEmbedder', 'indexingEmbedder', 'distribution', 'binaryQuantized', 'distance'],
};

/** Fields that only make sense on the whole embedder, never on a composite's part. */
const WHOLE_EMBEDDER_ONLY: readonly EmbedderField[] = ['distribution', 'binaryQuantized', 'distance'];
/** The search side of a composite never renders documents. */
const TEMPLATE_FIELDS: readonly EmbedderField[] = ['documentTemplate', 'documentTemplateMaxBytes'];

export const NESTABLE_SOURCES: readonly EmbedderSource[] = ['openAi', 'huggingFace', 'ollama', 'rest'];

export function allowedFields(source: EmbedderSource, nesting: Nesting): EmbedderField[] {
  const fields = TOP_LEVEL[source];
  if (nesting === 'top') return [...fields];
  return fields.filter(
    (f) => !WHOLE_EMBEDDER_ONLY.includes(f) && !(nesting === 'searchEmbedder' && TEMPLATE_FIELDS.includes(f)),
  );
}

export function sourcesAllowing(field: EmbedderField, nesting: Nesting): EmbedderSource[] {
  const sources = (Object.keys(TOP_LEVEL) as EmbedderSource[]).filter(
    (s) => (nesting === 'top' || NESTABLE_SOURCES.includes(s)) && allowedFields(s, nesting).includes(field),
  );
  return sources;
}

export function mandatoryFields(source: EmbedderSource): EmbedderField[] {
  switch (source) {
    case 'userProvided':
      return ['dimensions'];
    case 'rest':
      return ['url', 'request', 'response'];
    case 'ollama':
      return ['model'];
    case 'composite':
      return ['searchEmbedder', 'indexingEmbedder'];
    default:
      return [];
  }
}

/** Sources that render documents through a template (everything that generates vectors). */
export function rendersTemplate(source: EmbedderSource): boolean {
  return source !== 'userProvided' && source !== 'composite';
}
