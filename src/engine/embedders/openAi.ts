/**
 * `openAi` source: the OpenAI embeddings API (`POST {url}` with `{model, input, dimensions?}`).
 * The key comes from `apiKey`, else from `SEARCH_OPENAI_API_KEY` / `MEILI_OPENAI_API_KEY` /
 * `OPENAI_API_KEY`.
 */
import { EmbeddingFailure } from './types.js';
import { postJson, toVector, type RetryPolicy } from './http.js';
import { RemoteEmbedder } from './remote.js';

export const DEFAULT_OPENAI_MODEL = 'text-embedding-3-small';
export const DEFAULT_OPENAI_URL = 'https://api.openai.com/v1/embeddings';

/** Native dimensions, and whether the model accepts a smaller `dimensions`. */
export const OPENAI_MODELS: Record<string, { dimensions: number; overridable: boolean }> = {
  'text-embedding-ada-002': { dimensions: 1536, overridable: false },
  'text-embedding-3-small': { dimensions: 1536, overridable: true },
  'text-embedding-3-large': { dimensions: 3072, overridable: true },
};

export interface OpenAiOptions {
  model?: string;
  url?: string;
  apiKey?: string;
  dimensions?: number;
}

export class OpenAiEmbedder extends RemoteEmbedder {
  readonly source = 'openAi' as const;
  private readonly model: string;
  private readonly url: string;
  private readonly apiKey: string | undefined;
  private readonly overrideDimensions: boolean;

  constructor(options: OpenAiOptions) {
    const model = options.model ?? DEFAULT_OPENAI_MODEL;
    const spec = OPENAI_MODELS[model];
    super(options.dimensions ?? spec?.dimensions);
    this.model = model;
    this.url = options.url ?? DEFAULT_OPENAI_URL;
    this.apiKey =
      options.apiKey ?? process.env.SEARCH_OPENAI_API_KEY ?? process.env.MEILI_OPENAI_API_KEY ?? process.env.OPENAI_API_KEY;
    this.overrideDimensions = options.dimensions !== undefined && options.dimensions !== spec?.dimensions;
  }

  protected batchSize(): number {
    return 64;
  }

  protected async request(texts: string[], policy: RetryPolicy): Promise<Float32Array[]> {
    const body: Record<string, unknown> = { model: this.model, input: texts };
    if (this.overrideDimensions) body.dimensions = this.configured;
    const headers: Record<string, string> = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
    const answer = (await postJson(this.url, body, headers, policy)) as { data?: unknown };
    if (!Array.isArray(answer?.data) || answer.data.length !== texts.length)
      throw new EmbeddingFailure(`the OpenAI server at \`${this.url}\` answered without one \`data\` entry per input`);
    const entries = [...(answer.data as Array<{ index?: number; embedding?: unknown }>)];
    entries.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return entries.map((e) => toVector(e.embedding, this.dimensions(), `OpenAI server at \`${this.url}\``));
  }
}
