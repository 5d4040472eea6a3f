/**
 * The `_vectors` field of documents.
 *
 * Accepted per embedder name: `[f, f, ...]` (one embedding), `[[...], [...]]` (several),
 * `[]` (none), `{"embeddings": <either form or null>, "regenerate": bool}`, or `null` (nothing
 * provided: generate if the embedder can). The array forms mean `regenerate: false`: the user
 * owns those vectors and they are never overwritten by generated ones.
 */
import { SearchError } from '../errors.js';

export interface ProvidedVectors {
  /** Vectors given in the document; null when none were given. */
  embeddings: Float32Array[] | null;
  /** False when the user owns the vectors: never re-embed this document for this embedder. */
  regenerate: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parse `doc._vectors`; entries for embedders not configured are kept out (and left in the document). */
export function parseDocumentVectors(
  vectors: unknown,
  documentId: string,
  dimensionsOf: (embedder: string) => number | undefined,
  embedders: readonly string[],
): Map<string, ProvidedVectors> {
  const out = new Map<string, ProvidedVectors>();
  if (vectors === undefined || vectors === null) return out;
  if (!isObject(vectors))
    throw new SearchError(
      'invalid_vectors_type',
      `The \`_vectors\` field in the document with id: \`${documentId}\` is not an object. Was expecting an object with a key for each embedder with manually provided vectors, but instead got \`${JSON.stringify(vectors)}\``,
    );
  for (const name of embedders) {
    if (!(name in vectors)) continue;
    const parsed = parseEntry(vectors[name], `._vectors.${name}`, documentId);
    const expected = dimensionsOf(name);
    if (parsed.embeddings && expected !== undefined)
      for (const embedding of parsed.embeddings)
        if (embedding.length !== expected)
          throw new SearchError(
            'invalid_vector_dimensions',
            `Invalid vector dimensions: expected: \`${expected}\`, found: \`${embedding.length}\`.`,
          );
    out.set(name, parsed);
  }
  return out;
}

function parseEntry(value: unknown, path: string, documentId: string): ProvidedVectors {
  const bad = (detail: string): never => {
    throw new SearchError('invalid_vectors_type', `Bad embedder configuration in the document with id: \`${documentId}\`. ${detail}`);
  };
  if (value === null) return { embeddings: null, regenerate: true };
  if (Array.isArray(value)) return { embeddings: parseEmbeddings(value, path, bad), regenerate: false };
  if (!isObject(value))
    return bad(
      `Invalid value type at \`${path}\`: expected an array of floats, an array of arrays of floats, or an object with fields \`embeddings\` and \`regenerate\`, but found ${kind(value)}`,
    );
  for (const key of Object.keys(value))
    if (key !== 'embeddings' && key !== 'regenerate')
      bad(`Unknown field \`${key}\` inside \`${path}\`: expected one of \`embeddings\`, \`regenerate\``);
  if (!('regenerate' in value)) bad(`Missing field \`regenerate\` inside \`${path}\``);
  if (typeof value.regenerate !== 'boolean')
    bad(`Invalid value type at \`${path}.regenerate\`: expected a boolean, but found ${kind(value.regenerate)}`);
  const raw = value.embeddings;
  const embeddings = raw === undefined || raw === null ? null : Array.isArray(raw) ? parseEmbeddings(raw, `${path}.embeddings`, bad) : bad(
    `Invalid value type at \`${path}.embeddings\`: expected an array of floats or an array of arrays of floats, but found ${kind(raw)}`,
  );
  return { embeddings, regenerate: value.regenerate as boolean };
}

function parseEmbeddings(value: unknown[], path: string, bad: (detail: string) => never): Float32Array[] {
  if (value.length === 0) return [];
  const single = floatsOf(value);
  if (single) return [single];
  return value.map((inner, i) => {
    const floats = Array.isArray(inner) ? floatsOf(inner) : null;
    if (!floats)
      return bad(
        `Invalid value type at \`${path}[${i}]\`: expected a float or an array of floats, but found ${kind(inner)}`,
      );
    return floats;
  });
}

/** The array as floats, or null when an element is not a finite number (one pass, no iterator). */
function floatsOf(value: unknown[]): Float32Array | null {
  const out = new Float32Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const v = value[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) return null;
    out[i] = v;
  }
  return out;
}

function kind(value: unknown): string {
  const json = JSON.stringify(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array: \`${json}\``;
  if (typeof value === 'object') return `an object: \`${json}\``;
  return `a ${typeof value}: \`${json}\``;
}
