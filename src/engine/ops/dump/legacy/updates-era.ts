/**
 * Dumps v2 (Meilisearch 0.21 - 0.22) and v3 (0.23 - 0.24): indexes known by uuid, one update queue.
 *
 *   metadata.json                       {dbVersion, indexDbSize, updateDbSize, dumpDate, dumpVersion}
 *   index_uuids/data.jsonl              {uid, uuid} per index
 *   indexes/index-<uuid>/  (v2)         meta.json {settings, primary_key}, documents.jsonl
 *   indexes/<uuid>/        (v3)
 *   updates/data.jsonl                  {uuid, update} per update
 *   updates/update_files/update_<uuid>  (v2) payload of an enqueued addition, one JSON array
 *   updates/updates_files/<uuid>        (v3) the same as JSON lines
 *
 * Index dates are not stored: like the reference, they come from the updates (the first
 * addition or settings update that finished, and the last update that finished).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Document } from '../../../types.js';
import type { DumpFiles, DumpIndexReader, DumpTaskReader } from '../contents.js';
import { noKeys } from './v1.js';
import { now, type LegacyParts } from './open.js';
import { checkLegacySettings, fromV2, fromV3 } from './settings.js';
import { isFinished, taskToV6, updateToTask, v2Update, v3Update, type LegacyUpdate } from './tasks.js';

interface IndexUuid {
  uid: string;
  uuid: string;
}

export async function openUpdatesEra(files: DumpFiles, version: 'V2' | 'V3'): Promise<LegacyParts> {
  for (const required of ['index_uuids/data.jsonl', 'updates/data.jsonl']) if (!files.exists(required)) throw files.fail(`\`${required}\` is missing`);
  const uuids: IndexUuid[] = [];
  for await (const line of files.lines<IndexUuid>('index_uuids/data.jsonl')) uuids.push(line);
  const readUpdate = version === 'V2' ? v2Update : v3Update;
  const dates = await indexDates(files, readUpdate);
  const folder = (uuid: string) => `indexes/${version === 'V2' ? `index-${uuid}` : uuid}`;

  const indexes: Array<{ uid: string; uuid: string; primaryKey: string | null; settings: Record<string, unknown> }> = [];
  for (const { uid, uuid } of uuids) {
    for (const name of ['meta.json', 'documents.jsonl']) if (!files.exists(`${folder(uuid)}/${name}`)) throw files.fail(`\`${folder(uuid)}/${name}\` is missing`);
    const where = `${folder(uuid)}/meta.json`;
    const meta = await files.json<{ settings?: unknown; primary_key?: string | null }>(where);
    const settings = checkLegacySettings(files, where, version, meta.settings ?? {});
    indexes.push({ uid, uuid, primaryKey: meta.primary_key ?? null, settings: version === 'V2' ? fromV2(settings, files.warn) : fromV3(settings, files.warn) });
  }

  async function* readIndexes(): AsyncGenerator<DumpIndexReader> {
    for (const index of indexes) {
      const d = dates.get(index.uuid) ?? {};
      const fallback = now();
      yield {
        uid: index.uid,
        metadata: { uid: index.uid, primaryKey: index.primaryKey, createdAt: d.created ?? fallback, updatedAt: d.updated ?? fallback },
        settings: index.settings,
        documents: () => files.lines<Document>(`${folder(index.uuid)}/documents.jsonl`),
      };
    }
  }

  async function* tasks(): AsyncGenerator<DumpTaskReader> {
    let id = 0;
    for await (const raw of files.lines<Record<string, unknown>>('updates/data.jsonl')) {
      const update = readUpdate(raw);
      const taskId = id++;
      let indexUid = uuids.find((u) => u.uuid === update.indexUuid)?.uid;
      if (!indexUid) {
        files.warn(`the index of update ${update.updateId} (uuid \`${update.indexUuid}\`) could not be retrieved`);
        if (!isFinished(update)) continue;
        indexUid = 'unknown';
      }
      const task = taskToV6(updateToTask(update, taskId, indexUid), { keys: [], instanceUid: null, warn: files.warn });
      const content = update.kind.type === 'documentAddition' ? update.kind.contentUuid : null;
      if (task.status !== 'enqueued' || !content) {
        yield { task };
        continue;
      }
      yield { task, updateFile: version === 'V2' ? jsonArray(files, `updates/update_files/update_${content}`) : files.lines<Document>(`updates/updates_files/${content}`) };
    }
  }

  return { instanceUid: null, indexes: readIndexes, tasks, keys: noKeys };
}

async function indexDates(files: DumpFiles, readUpdate: (raw: Record<string, unknown>) => LegacyUpdate) {
  const dates = new Map<string, { created?: string; updated?: string }>();
  for await (const raw of files.lines<Record<string, unknown>>('updates/data.jsonl')) {
    const update = readUpdate(raw);
    if (!isFinished(update) || !update.finishedAt) continue;
    const d = dates.get(update.indexUuid) ?? {};
    const creates = update.kind.type === 'documentAddition' || update.kind.type === 'settings';
    const at = Date.parse(update.finishedAt);
    if (creates && (!d.created || Date.parse(d.created) > at)) d.created = update.finishedAt;
    if (!d.updated || Date.parse(d.updated) < at) d.updated = update.finishedAt;
    dates.set(update.indexUuid, d);
  }
  return dates;
}

/** A v2 update file: the documents as one JSON array (small: v2 kept them in memory too). */
async function* jsonArray(files: DumpFiles, name: string): AsyncGenerator<Document> {
  let documents: unknown;
  try {
    documents = JSON.parse(await readFile(join(files.dir, name), 'utf8'));
  } catch (error) {
    throw files.fail(`\`${name}\` cannot be read as a JSON array of documents (${(error as Error).message})`, error);
  }
  if (!Array.isArray(documents)) throw files.fail(`\`${name}\` is not a JSON array of documents`);
  yield* documents as Document[];
}
