/**
 * `ollama` source. The current API (`/api/embed`, `{model, input: [...]}` -> `{embeddings}`)
 * batches; the older `/api/embeddings` (`{model, prompt}` -> `{embedding}`) takes one text per
 * request and is still served by many installations, so both are spoken, chosen by the URL.
 */
import { EmbeddingFailure } from './types.js';
import { postJson, toVector, type RetryPolicy } from './http.js';
import { RemoteEmbedder } from './remote.js';

export const DEFAULT_OLLAMA_URL = 'http://localhost:11434/api/embed';

export interface OllamaOptions {
  model: string;
  url?: string;
  apiKey?: string;
  dimensions?: number;
}

export class OllamaEmbedder extends RemoteEmbedder {
  readonly source = 'ollama' as const;
  private readonly url: string;
  private readonly legacy: boolean;

  constructor(private readonly options: OllamaOptions) {
    super(options.dimensions);
    this.url = options.url ?? process.env.SEARCH_OLLAMA_URL ?? process.env.MEILI_OLLAMA_URL ?? DEFAULT_OLLAMA_URL;
    this.legacy = /\/api\/embeddings\/?$/.test(new URL(this.url).pathname);
  }

  protected batchSize(): number {
    return this.legacy ? 1 : 32;
  }

  protected async request(texts: string[], policy: RetryPolicy): Promise<Float32Array[]> {
    const headers: Record<string, string> = this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {};
    const where = `ollama server at \`${this.url}\``;
    if (this.legacy) {
      const answer = (await postJson(this.url, { model: this.options.model, prompt: texts[0] }, headers, policy)) as {
        embedding?: unknown;
      };
      return [toVector(answer?.embedding, this.dimensions(), where)];
    }
    const answer = (await postJson(this.url, { model: this.options.model, input: texts }, headers, policy)) as {
      embeddings?: unknown;
    };
    if (!Array.isArray(answer?.embeddings) || answer.embeddings.length !== texts.length)
      throw new EmbeddingFailure(`the ${where} answered without one embedding per input`);
    return answer.embeddings.map((e) => toVector(e, this.dimensions(), where));
  }
}
