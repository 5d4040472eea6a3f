/**
 * The `export` task: push indexes to another instance through its public API, as the reference's
 * export does. Per matching index: ask whether the remote has it; create it with our primary key
 * if not (or set the primary key when `overrideSettings`); send our settings unless the remote
 * index exists and `overrideSettings` is false; then the documents the filter selects, with their
 * `_vectors`, as gzipped NDJSON payloads of at most `payloadSize` bytes (uncompressed; a single
 * larger document goes alone). Like the reference it does not wait for the remote's tasks: the
 * remote processes them in the order they were sent, and the export's task reports what it sent.
 *
 * It runs as an operation batch of the scheduler (the write thread by default), never in the
 * thread answering HTTP. It holds no write transaction: nothing writes while an operation batch
 * runs, so the index it reads does not change under it, and it awaits every network call.
 */
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Index } from '../index/index.js';
import { RoaringBitmap32 } from '../index/store.js';
import type { IndexRegistry } from '../index/registry.js';
import { BatchAborted, type BatchContext } from '../tasks/processing.js';
import { DEFAULT_EXPORT_PAYLOAD_BYTES } from './payload-size.js';
import { Remote, RemoteAnswer, type RemoteLimits } from './remote.js';
import { exportDetails, matchIndexes, type ExportIndexSettings, type ExportRequest } from './request.js';

const gzip = promisify(gzipCallback);

export interface ExportEnv {
  registry: IndexRegistry;
  limits: RemoteLimits;
  log: (level: 'info' | 'debug' | 'warn', message: string) => void;
}

/** Run the export; resolves with the finished task's details (`indexes` keyed by exported index uid). */
export async function runExport(request: ExportRequest, ctx: BatchContext, env: ExportEnv): Promise<Record<string, unknown>> {
  const remote = new Remote(request.url, request.apiKey, ctx.signal, env.limits);
  const limit = request.payloadSize ?? DEFAULT_EXPORT_PAYLOAD_BYTES;
  const targets = matchIndexes(request, env.registry.uids());
  const exported: Record<string, ExportIndexSettings & { matchedDocuments: number }> = {};
  for (const [i, { uid, settings }] of targets.entries()) {
    if (ctx.signal.aborted) throw new BatchAborted();
    ctx.progress(`Exporting index \`${uid}\` (${i + 1}/${targets.length})`);
    const sent = await exportIndex(remote, env.registry.get(uid), settings, limit);
    exported[uid] = { ...settings, matchedDocuments: sent.documents };
    env.log('info', `export: index \`${uid}\`: ${sent.documents} documents sent to ${request.url} in ${sent.payloads} payload(s)`);
  }
  return { ...exportDetails(request), indexes: exported };
}

async function exportIndex(remote: Remote, index: Index, settings: ExportIndexSettings, limit: number): Promise<{ documents: number; payloads: number }> {
  const uid = index.uid;
  const path = `/indexes/${encodeURIComponent(uid)}`;
  // a copy: the documents sent are those selected now, whatever happens later
  const universe = new RoaringBitmap32(index.filterDocids(settings.filter, 'invalid_document_filter'));
  const primaryKey = index.store.meta().primaryKey;

  const exists = await remoteIndexExists(remote, path);
  if (!exists) await remote.json('POST', '/indexes', { uid, primaryKey });
  else if (settings.overrideSettings) await remote.json('PATCH', path, { primaryKey });
  // the full settings, embedder API keys included (the remote needs them to embed)
  if (!exists || settings.overrideSettings) await remote.json('PATCH', `${path}/settings`, structuredClone(index.settings));

  let payloads = 0;
  const send = async (lines: string[]) => {
    const bytes = await gzip(Buffer.from(lines.join('')));
    await remote.send('POST', `${path}/documents`, { bytes, contentType: 'application/x-ndjson', contentEncoding: 'gzip' });
    payloads++;
  };
  let lines: string[] = [];
  let size = 0;
  for (const docid of universe) {
    const stored = index.store.getDocument(docid);
    if (!stored) continue;
    const line = `${JSON.stringify(index.withVectors(docid, stored))}\n`;
    const bytes = Buffer.byteLength(line);
    if (lines.length > 0 && size + bytes > limit) {
      await send(lines);
      lines = [];
      size = 0;
    }
    lines.push(line);
    size += bytes;
  }
  if (lines.length > 0) await send(lines);
  return { documents: universe.size, payloads };
}

/** GET the remote index: 200 it exists, `index_not_found` it does not, anything else fails. */
async function remoteIndexExists(remote: Remote, path: string): Promise<boolean> {
  try {
    await remote.get(path);
    return true;
  } catch (error) {
    if (error instanceof RemoteAnswer && error.remoteCode === 'index_not_found') return false;
    throw error;
  }
}
