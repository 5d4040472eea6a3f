/**
 * First use of a hub model that is not in the cache: its files are fetched from the hub
 * (`HF_ENDPOINT`, by default https://huggingface.co) into the hub cache's own layout
 * (`models--org--name/snapshots/<commit>/…` and `refs/<revision>`), so that later runs, and other
 * tools that read that cache, find them without the network.
 *
 * Runs on the local model thread. Progress goes to stderr, a line per file and at most one per
 * second while a large file arrives. Where the network is closed (or `HF_HUB_OFFLINE=1`), the error
 * names the folder to fill by hand.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { cachedSnapshot, hubRepoDir, ONNX_WEIGHTS } from './model-location.js';

/** Files a hub model needs, then the ones it may have (pooling and tokenizer details). */
const REQUIRED = ['config.json', 'tokenizer.json'] as const;
const OPTIONAL = ['tokenizer_config.json', 'special_tokens_map.json', 'modules.json', '1_Pooling/config.json'] as const;

/** How long the hub may take to start answering one file. */
const RESPONSE_TIMEOUT_MS = 30_000;

export interface DownloadRequest {
  repo: string;
  revision: string;
  cacheDir: string;
  env?: NodeJS.ProcessEnv;
  /** A progress line (default: stderr). */
  progress?: (line: string) => void;
}

export class HubDownloadFailure extends Error {
  constructor(request: DownloadRequest, endpoint: string, reason: string) {
    const folder = path.join(hubRepoDir(request.cacheDir, request.repo), 'snapshots', request.revision);
    super(
      `could not download model \`${request.repo}\` (revision \`${request.revision}\`) from ${endpoint}: ${reason}. ` +
        `Without network access, put the model's files (\`config.json\`, \`tokenizer.json\`, \`tokenizer_config.json\`, \`onnx/model.onnx\`, ` +
        `and \`modules.json\` with \`1_Pooling/config.json\` when the model has them) in \`${folder}\`, or in any folder and set \`model\` to its path`,
    );
    this.name = 'HubDownloadFailure';
  }
}

/** Fetch the model into the cache (unless it is there already) and return its snapshot folder. */
export async function downloadHubModel(request: DownloadRequest): Promise<string> {
  const env = request.env ?? process.env;
  const endpoint = (env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
  const progress = request.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const cached = cachedSnapshot(request.cacheDir, request.repo, request.revision);
  if (cached) return cached;
  if (env.HF_HUB_OFFLINE === '1' || env.HF_HUB_OFFLINE === 'true')
    throw new HubDownloadFailure(request, endpoint, 'downloads are turned off (HF_HUB_OFFLINE)');

  const fetchFile = (file: string) => fetchHubFile(endpoint, request, file);
  let first: Response;
  try {
    first = await fetchFile(REQUIRED[0]);
  } catch (error) {
    throw new HubDownloadFailure(request, endpoint, reasonOf(error));
  }
  if (!first.ok) throw new HubDownloadFailure(request, endpoint, `${REQUIRED[0]}: HTTP ${first.status}`);
  // the commit the revision points to names the snapshot, as the hub's own clients do
  const commit = first.headers.get('x-repo-commit') ?? request.revision;
  const repoDir = hubRepoDir(request.cacheDir, request.repo);
  const snapshot = path.join(repoDir, 'snapshots', commit);
  progress(`downloading model ${request.repo}@${request.revision} into ${snapshot}`);

  try {
    await save(first, snapshot, REQUIRED[0], progress);
    for (const file of REQUIRED.slice(1)) await save(await required(fetchFile, file), snapshot, file, progress);
    for (const file of OPTIONAL) {
      const response = await fetchFile(file);
      if (response.ok) await save(response, snapshot, file, progress);
      else await response.body?.cancel();
    }
    await saveWeights(fetchFile, snapshot, progress);
  } catch (error) {
    throw new HubDownloadFailure(request, endpoint, reasonOf(error));
  }
  // the ref is written last: until then the snapshot does not count as complete
  await mkdir(path.join(repoDir, 'refs'), { recursive: true });
  if (commit !== request.revision) await writeFile(path.join(repoDir, 'refs', request.revision), commit);
  progress(`downloaded model ${request.repo}@${request.revision}`);
  return snapshot;
}

async function fetchHubFile(endpoint: string, request: DownloadRequest, file: string): Promise<Response> {
  const url = `${endpoint}/${request.repo}/resolve/${encodeURIComponent(request.revision)}/${file}`;
  const headers: Record<string, string> = {};
  const token = (request.env ?? process.env).HF_TOKEN;
  if (token) headers.authorization = `Bearer ${token}`;
  return fetch(url, { headers, redirect: 'follow', signal: AbortSignal.timeout(RESPONSE_TIMEOUT_MS) });
}

async function required(fetchFile: (file: string) => Promise<Response>, file: string): Promise<Response> {
  const response = await fetchFile(file);
  if (!response.ok) throw new Error(`${file}: HTTP ${response.status}`);
  return response;
}

async function saveWeights(fetchFile: (file: string) => Promise<Response>, snapshot: string, progress: (line: string) => void): Promise<void> {
  const statuses: string[] = [];
  for (const file of ONNX_WEIGHTS) {
    const response = await fetchFile(file);
    if (response.ok) return save(response, snapshot, file, progress);
    await response.body?.cancel();
    statuses.push(`${file}: HTTP ${response.status}`);
  }
  throw new Error(`the repository has no ONNX weights (${statuses.join(', ')}); export the model to ONNX first`);
}

/** Stream a file into the snapshot, through a `.partial` file renamed once complete. */
async function save(response: Response, snapshot: string, file: string, progress: (line: string) => void): Promise<void> {
  const target = path.join(snapshot, file);
  const partial = `${target}.partial`;
  await mkdir(path.dirname(target), { recursive: true });
  const total = Number(response.headers.get('content-length') ?? 0);
  let received = 0;
  let lastReport = Date.now();
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  body.on('data', (chunk: Buffer) => {
    received += chunk.length;
    const now = Date.now();
    if (now - lastReport >= 1000) {
      lastReport = now;
      progress(`  ${file}: ${megabytes(received)}${total ? ` of ${megabytes(total)} (${Math.floor((received / total) * 100)}%)` : ''}`);
    }
  });
  try {
    await pipeline(body, createWriteStream(partial));
    await rename(partial, target);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  progress(`  ${file}: ${megabytes(received)}`);
}

const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}
