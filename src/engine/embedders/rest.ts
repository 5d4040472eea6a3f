/**
 * `rest` source: any embedding API described by a request template and a response template.
 *
 * The request template holds `"{{text}}"` where the text goes. When an array holds
 * `["<item>", "{{..}}"]`, the item repeats once per text, so a batch is one request; otherwise
 * each text is its own request. The response template mirrors it with `"{{embedding}}"`.
 */
import { EmbeddingFailure } from './types.js';
import { postJson, toVector, type RetryPolicy } from './http.js';
import { RemoteEmbedder } from './remote.js';

export const TEXT = '{{text}}';
export const EMBEDDING = '{{embedding}}';
export const REPEAT = '{{..}}';

type Path = Array<string | number>;

export interface RestOptions {
  url: string;
  request: unknown;
  response: unknown;
  headers?: Record<string, string>;
  apiKey?: string;
  dimensions?: number;
}

export class RestEmbedder extends RemoteEmbedder {
  readonly source = 'rest' as const;
  /** Path to the repeated array in the request, when the template batches. */
  private readonly requestRepeat: Path | undefined;
  private readonly responseRepeat: Path | undefined;
  private readonly embeddingPath: Path;

  constructor(private readonly options: RestOptions) {
    super(options.dimensions);
    this.requestRepeat = findRepeat(options.request);
    this.responseRepeat = findRepeat(options.response);
    const found = findPlaceholder(options.response, EMBEDDING);
    if (!found) throw new EmbeddingFailure('the response template has no `"{{embedding}}"`');
    this.embeddingPath = found;
  }

  protected batchSize(): number {
    return this.requestRepeat ? 32 : 1;
  }

  protected async request(texts: string[], policy: RetryPolicy): Promise<Float32Array[]> {
    const headers: Record<string, string> = { ...(this.options.headers ?? {}) };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const body = this.requestRepeat
      ? replaceRepeat(this.options.request, this.requestRepeat, texts)
      : replacePlaceholder(this.options.request, TEXT, texts[0]);
    const answer = await postJson(this.options.url, body, headers, policy);
    return this.extract(answer, texts.length);
  }

  private extract(answer: unknown, count: number): Float32Array[] {
    const where = `REST embedder at \`${this.options.url}\``;
    if (!this.responseRepeat) {
      if (count !== 1) throw new EmbeddingFailure(`${where}: the response template returns one embedding per request`);
      return [toVector(get(answer, this.embeddingPath), this.dimensions(), where)];
    }
    const items = get(answer, this.responseRepeat);
    if (!Array.isArray(items) || items.length !== count)
      throw new EmbeddingFailure(
        `${where}: expected ${count} embeddings at \`${this.responseRepeat.join('.')}\` in the response, got ${Array.isArray(items) ? items.length : 'none'}`,
      );
    // the embedding's path inside one repeated item: what follows `<repeat path>.0`
    const inner = this.embeddingPath.slice(this.responseRepeat.length + 1);
    return items.map((item) => toVector(get(item, inner), this.dimensions(), where));
  }
}

/** The path of the first array shaped `[item, "{{..}}"]`, if any. */
function findRepeat(template: unknown, path: Path = []): Path | undefined {
  if (Array.isArray(template)) {
    if (template.length === 2 && template[1] === REPEAT) return path;
    for (let i = 0; i < template.length; i++) {
      const found = findRepeat(template[i], [...path, i]);
      if (found) return found;
    }
  } else if (template && typeof template === 'object') {
    for (const [key, value] of Object.entries(template)) {
      const found = findRepeat(value, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

export function findPlaceholder(template: unknown, placeholder: string, path: Path = []): Path | undefined {
  if (template === placeholder) return path;
  if (Array.isArray(template)) {
    for (let i = 0; i < template.length; i++) {
      const found = findPlaceholder(template[i], placeholder, [...path, i]);
      if (found) return found;
    }
  } else if (template && typeof template === 'object') {
    for (const [key, value] of Object.entries(template)) {
      const found = findPlaceholder(value, placeholder, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

function replacePlaceholder(template: unknown, placeholder: string, value: unknown): unknown {
  if (template === placeholder) return value;
  if (Array.isArray(template)) return template.map((t) => replacePlaceholder(t, placeholder, value));
  if (template && typeof template === 'object')
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, replacePlaceholder(v, placeholder, value)]));
  return template;
}

function replaceRepeat(template: unknown, path: Path, texts: string[]): unknown {
  if (path.length === 0) {
    const item = (template as unknown[])[0];
    return texts.map((text) => replacePlaceholder(item, TEXT, text));
  }
  const [head, ...rest] = path;
  if (Array.isArray(template)) return template.map((t, i) => (i === head ? replaceRepeat(t, rest, texts) : t));
  const obj = template as Record<string, unknown>;
  return { ...obj, [head!]: replaceRepeat(obj[head!], rest, texts) };
}

function get(value: unknown, path: Path): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}
