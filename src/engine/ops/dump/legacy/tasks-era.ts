/**
 * Dumps v4 (Meilisearch 0.25 - 0.27) and v5 (0.28 - 0.30): one task queue, API keys.
 *
 *   metadata.json                  {dbVersion, indexDbSize, updateDbSize, dumpDate, dumpVersion}
 *   instance-uid                   the instance uid, plain text
 *   keys                           one API key per line
 *   index_uuids/data.jsonl         {uid, index_meta: {uuid, creation_task_id}} per index
 *   indexes/<uuid>/                meta.json {settings, primary_key}, documents.jsonl
 *   updates/data.jsonl             one task per line, newest first
 *   updates/updates_files/<uuid>   payload of an enqueued addition, JSON lines
 *
 * v4 keys have an 8-byte id and no uid: as in the reference, each gets a fresh uid (so its key
 * value changes) and loses the `dumps.get` action that v5 removed.
 */
import { randomUUID } from 'node:crypto';
import type { Document } from '../../../types.js';
import type { DumpFiles, DumpIndexReader, DumpTaskReader } from '../contents.js';
import type { DumpKey } from '../layout.js';
import { now, type LegacyParts } from './open.js';
import { checkLegacySettings, fromV3 } from './settings.js';
import { contentUuid, taskFinished, taskToV6, v4v5Task, type LegacyTask } from './tasks.js';

interface IndexUuid {
  uid: string;
  index_meta: { uuid: string; creation_task_id: number };
}

export async function openTasksEra(files: DumpFiles, version: 'V4' | 'V5'): Promise<LegacyParts> {
  for (const required of ['index_uuids/data.jsonl', 'updates/data.jsonl', 'keys']) if (!files.exists(required)) throw files.fail(`\`${required}\` is missing`);
  const instanceUid = files.exists('instance-uid') ? (await files.text('instance-uid')).trim() : null;
  const keys = await readKeys(files, version);
  const uuids: IndexUuid[] = [];
  for await (const line of files.lines<IndexUuid>('index_uuids/data.jsonl')) uuids.push(line);

  const indexes: DumpIndexReader[] = [];
  for (const { uid, index_meta } of uuids) {
    const folder = `indexes/${index_meta.uuid}`;
    for (const name of ['meta.json', 'documents.jsonl']) if (!files.exists(`${folder}/${name}`)) throw files.fail(`\`${folder}/${name}\` is missing`);
    const meta = await files.json<{ settings?: unknown; primary_key?: string | null }>(`${folder}/meta.json`);
    const settings = fromV3(checkLegacySettings(files, `${folder}/meta.json`, version, meta.settings ?? {}), files.warn);
    const dates = await indexDates(files, uid, index_meta.creation_task_id);
    indexes.push({
      uid,
      metadata: { uid, primaryKey: meta.primary_key ?? null, createdAt: dates.created ?? now(), updatedAt: dates.updated ?? now() },
      settings,
      documents: () => files.lines<Document>(`${folder}/documents.jsonl`),
    });
  }

  async function* readIndexes(): AsyncGenerator<DumpIndexReader> {
    yield* indexes;
  }

  async function* tasks(): AsyncGenerator<DumpTaskReader> {
    for await (const raw of files.lines<Record<string, unknown>>('updates/data.jsonl')) {
      const legacy = parse(files, raw);
      const task = taskToV6(legacy, { keys, instanceUid, warn: files.warn });
      const content = contentUuid(legacy);
      if (task.status === 'enqueued' && content && !taskFinished(legacy)) yield { task, updateFile: files.lines<Document>(`updates/updates_files/${content}`) };
      else yield { task };
    }
  }

  async function* readKeysAgain(): AsyncGenerator<DumpKey> {
    yield* keys;
  }

  return { instanceUid, indexes: readIndexes, tasks, keys: readKeysAgain };
}

function parse(files: DumpFiles, raw: Record<string, unknown>): LegacyTask {
  try {
    return v4v5Task(raw);
  } catch (error) {
    throw files.fail(`\`updates/data.jsonl\`: ${(error as Error).message}`, error);
  }
}

/**
 * As the reference: the index was created when its creation task was enqueued; it was last
 * updated by the first task of the (newest-first) queue that succeeded on it.
 */
async function indexDates(files: DumpFiles, uid: string, creationTaskId: number): Promise<{ created?: string; updated?: string }> {
  const out: { created?: string; updated?: string } = {};
  for await (const raw of files.lines<Record<string, unknown>>('updates/data.jsonl')) {
    const task = parse(files, raw);
    if (task.indexUid !== uid) continue;
    const last = task.events.at(-1);
    if (!out.updated && last?.type === 'succeeded') out.updated = last.at;
    if (task.id === creationTaskId) {
      const creates = ['indexCreation', 'documentAddition', 'settings'].includes(task.content.type);
      if (creates && task.events[0]?.type === 'created') out.created = task.events[0].at;
      break;
    }
  }
  return out;
}

const V4_DROPPED_ACTIONS = new Set(['dumps.get']);

async function readKeys(files: DumpFiles, version: 'V4' | 'V5'): Promise<DumpKey[]> {
  const keys: DumpKey[] = [];
  for await (const raw of files.lines<Record<string, unknown>>('keys')) {
    const actions = (raw.actions as string[] | undefined) ?? [];
    keys.push({
      uid: version === 'V4' ? randomUUID() : String(raw.uid),
      name: version === 'V4' ? null : ((raw.name as string | null | undefined) ?? null),
      description: (raw.description as string | null | undefined) ?? null,
      actions: version === 'V4' ? actions.filter((a) => !V4_DROPPED_ACTIONS.has(a)) : actions,
      indexes: (raw.indexes as string[] | undefined) ?? [],
      expires_at: (raw.expires_at as string | null | undefined) ?? null,
      created_at: raw.created_at as string,
      updated_at: raw.updated_at as string,
    });
  }
  return keys;
}
