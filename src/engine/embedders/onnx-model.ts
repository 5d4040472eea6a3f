/**
 * A hub sentence-embedding model (see model-location.ts for its files) run with onnxruntime-node:
 * the tokenizer from `tokenizer.json` (@huggingface/tokenizers), the transformer from its ONNX
 * weights, then pooling over the tokens and, when the model says so, L2 normalisation.
 *
 * Pooling (`pooling` in the embedder settings, as the reference names it):
 * - `useModel`: what the model's sentence-transformers configuration asks for
 *   (`1_Pooling/config.json`: CLS token, mean of tokens, max of tokens), mean when it says nothing;
 * - `forceMean`, `forceCls`: that pooling whatever the model says.
 * A model whose graph already outputs `sentence_embedding` is used as it is.
 *
 * Runs on the local model thread only (local-model.worker.ts): the runtime computes on the calling
 * thread for the whole of a call. onnxruntime-node is an optional dependency (its install script
 * fetches GPU libraries where it can, and an install that cannot goes on without it), so it is
 * loaded on first use, with a clear error when it is missing.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type * as Ort from 'onnxruntime-node';
import { ONNX_WEIGHTS, type Pooling } from './model-location.js';

let runtime: Promise<typeof Ort> | undefined;

function onnxRuntime(): Promise<typeof Ort> {
  return (runtime ??= import('onnxruntime-node').catch((error: unknown) => {
    runtime = undefined;
    throw new Error(
      `hub models need the optional dependency \`onnxruntime-node\`, which is not installed (${(error as Error).message}); ` +
        'install it beside this package (`npm install onnxruntime-node`) to run them',
    );
  }));
}

type PoolingMode = 'mean' | 'cls' | 'max';

interface ModelConfig {
  pooling: PoolingMode;
  normalize: boolean;
  maxTokens: number;
  padId: number;
}

/** Tokens per text beyond which a text is cut (the model's own limit when it states one). */
const DEFAULT_MAX_TOKENS = 512;

export class OnnxSentenceModel {
  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
    private readonly config: ModelConfig,
  ) {}

  static async load(dir: string, pooling: Pooling): Promise<OnnxSentenceModel> {
    const json = async (file: string): Promise<Record<string, unknown> | undefined> =>
      existsSync(path.join(dir, file)) ? (JSON.parse(await readFile(path.join(dir, file), 'utf8')) as Record<string, unknown>) : undefined;
    const [tokenizerJson, tokenizerConfig, modelConfig, modules] = await Promise.all([
      json('tokenizer.json'),
      json('tokenizer_config.json'),
      json('config.json'),
      readFile(path.join(dir, 'modules.json'), 'utf8').then((t) => JSON.parse(t) as unknown, () => undefined),
    ]);
    if (!tokenizerJson) throw new Error(`\`${dir}\` has no \`tokenizer.json\``);
    const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig ?? {});
    const weights = ONNX_WEIGHTS.map((file) => path.join(dir, file)).find((file) => existsSync(file));
    if (!weights) throw new Error(`\`${dir}\` has no ONNX weights (\`${ONNX_WEIGHTS.join('` or `')}\`)`);
    const ort = await onnxRuntime();
    const session = await ort.InferenceSession.create(weights, {
      // half the cores: the other half keeps answering searches while documents are embedded
      intraOpNumThreads: Math.max(1, Math.floor(os.availableParallelism() / 2)),
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
    const stModules = sentenceTransformerModules(modules);
    const config: ModelConfig = {
      pooling: pooling === 'forceMean' ? 'mean' : pooling === 'forceCls' ? 'cls' : await modelPooling(dir, stModules),
      normalize: stModules.some((m) => m.type.endsWith('.Normalize')),
      maxTokens: maxTokens(tokenizerConfig, modelConfig),
      padId: padTokenId(tokenizer, tokenizerConfig),
    };
    return new OnnxSentenceModel(tokenizer, ort, session, config);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const encoded = texts.map((text) => this.encode(text));
    const width = Math.max(1, ...encoded.map((ids) => ids.length));
    const ids = new BigInt64Array(texts.length * width).fill(BigInt(this.config.padId));
    const mask = new BigInt64Array(texts.length * width);
    encoded.forEach((tokens, row) =>
      tokens.forEach((id, col) => {
        ids[row * width + col] = BigInt(id);
        mask[row * width + col] = 1n;
      }),
    );
    const dims = [texts.length, width];
    const feeds: Record<string, Ort.Tensor> = {};
    const { Tensor } = this.ort;
    for (const name of this.session.inputNames) {
      if (name === 'input_ids') feeds[name] = new Tensor('int64', ids, dims);
      else if (name === 'attention_mask') feeds[name] = new Tensor('int64', mask, dims);
      else if (name === 'token_type_ids') feeds[name] = new Tensor('int64', new BigInt64Array(ids.length), dims);
      else throw new Error(`the model asks for an input \`${name}\` this runtime does not know how to fill`);
    }
    const outputs = await this.session.run(feeds);
    const sentence = outputs.sentence_embedding;
    const vectors = sentence ? rows(sentence) : this.pool(outputs[this.tokenOutputName()]!, mask, width);
    for (const output of Object.values(outputs)) output.dispose();
    return this.config.normalize ? vectors.map(normalize) : vectors;
  }

  async release(): Promise<void> {
    await this.session.release();
  }

  /** Token ids of one text, cut to the model's limit (keeping the closing special token). */
  private encode(text: string): number[] {
    const ids = this.tokenizer.encode(text).ids;
    const max = this.config.maxTokens;
    if (ids.length <= max) return ids;
    return [...ids.slice(0, max - 1), ids[ids.length - 1]!];
  }

  private tokenOutputName(): string {
    const names = this.session.outputNames;
    return names.find((n) => n === 'last_hidden_state' || n === 'token_embeddings') ?? names[0]!;
  }

  private pool(tokens: Ort.Tensor, mask: BigInt64Array, width: number): Float32Array[] {
    const data = tokens.data as Float32Array;
    const [batch, , dim] = tokens.dims as [number, number, number];
    const out: Float32Array[] = [];
    for (let row = 0; row < batch; row++) {
      const vector = new Float32Array(dim);
      const at = (col: number) => (row * width + col) * dim;
      if (this.config.pooling === 'cls') vector.set(data.subarray(at(0), at(0) + dim));
      else {
        let count = 0;
        if (this.config.pooling === 'max') vector.fill(-Infinity);
        for (let col = 0; col < width; col++) {
          if (mask[row * width + col] === 0n) continue;
          count++;
          const base = at(col);
          for (let d = 0; d < dim; d++)
            vector[d] = this.config.pooling === 'max' ? Math.max(vector[d]!, data[base + d]!) : vector[d]! + data[base + d]!;
        }
        if (this.config.pooling === 'mean') for (let d = 0; d < dim; d++) vector[d]! /= Math.max(1, count);
      }
      out.push(vector);
    }
    return out;
  }
}

interface StModule {
  type: string;
  path: string;
}

function sentenceTransformerModules(modules: unknown): StModule[] {
  if (!Array.isArray(modules)) return [];
  return modules.filter((m): m is StModule => typeof m?.type === 'string' && typeof m?.path === 'string');
}

/** The pooling the model's sentence-transformers configuration asks for; mean when it says nothing. */
async function modelPooling(dir: string, modules: StModule[]): Promise<PoolingMode> {
  const poolingDir = modules.find((m) => m.type.endsWith('.Pooling'))?.path ?? '1_Pooling';
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(await readFile(path.join(dir, poolingDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return 'mean';
  }
  if (config.pooling_mode_cls_token === true) return 'cls';
  if (config.pooling_mode_max_tokens === true) return 'max';
  return 'mean';
}

function maxTokens(tokenizerConfig: Record<string, unknown> | undefined, modelConfig: Record<string, unknown> | undefined): number {
  const limits = [tokenizerConfig?.model_max_length, modelConfig?.max_position_embeddings].filter(
    (n): n is number => typeof n === 'number' && n > 2 && n < 1_000_000,
  );
  return limits.length ? Math.min(...limits) : DEFAULT_MAX_TOKENS;
}

function padTokenId(tokenizer: Tokenizer, config: Record<string, unknown> | undefined): number {
  const pad = config?.pad_token;
  const name = typeof pad === 'string' ? pad : typeof (pad as { content?: unknown } | undefined)?.content === 'string' ? (pad as { content: string }).content : undefined;
  return (name !== undefined ? tokenizer.token_to_id(name) : undefined) ?? 0;
}

function rows(tensor: Ort.Tensor): Float32Array[] {
  const data = tensor.data as Float32Array;
  const [batch, dim] = tensor.dims as [number, number];
  return Array.from({ length: batch }, (_, row) => data.slice(row * dim, (row + 1) * dim));
}

function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let d = 0; d < vector.length; d++) vector[d]! /= norm;
  return vector;
}
