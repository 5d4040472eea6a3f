/**
 * Dump v1 (Meilisearch 0.20 and older):
 *
 *   metadata.json             {indexes: [{name, uid, createdAt, updatedAt, primaryKey}], dbVersion, dumpVersion}
 *   <uid>/documents.jsonl
 *   <uid>/settings.json       rankingRules, distinctAttribute, searchableAttributes, displayedAttributes,
 *                             stopWords, synonyms, attributesForFaceting
 *   <uid>/updates.jsonl       the index's updates (no payloads: enqueued ones cannot be replayed)
 */
import type { Document } from '../../../types.js';
import type { DumpFiles, DumpIndexReader, DumpTaskReader } from '../contents.js';
import type { DumpKey } from '../layout.js';
import type { LegacyParts } from './open.js';
import { checkLegacySettings, v1IndexSettings } from './settings.js';
import { taskToV6, updateToTask, v1Update } from './tasks.js';

interface V1Index {
  name?: string;
  uid: string;
  createdAt: string;
  updatedAt: string;
  primaryKey?: string | null;
}

export async function openV1(files: DumpFiles, metadata: Record<string, unknown>): Promise<LegacyParts> {
  if (!Array.isArray(metadata.indexes)) throw files.fail('`metadata.json` of a dump v1 lists no `indexes`');
  const indexes = metadata.indexes as V1Index[];
  for (const index of indexes)
    for (const name of ['documents.jsonl', 'settings.json'])
      if (!files.exists(`${index.uid}/${name}`)) throw files.fail(`\`${index.uid}/${name}\` is missing`);
  // read the settings now: a dump the reference would refuse fails before anything is written
  const settings = new Map<string, Record<string, unknown>>();
  for (const index of indexes) {
    const where = `${index.uid}/settings.json`;
    settings.set(index.uid, v1IndexSettings(checkLegacySettings(files, where, 'V1', await files.json(where)), files.warn));
  }

  async function* readIndexes(): AsyncGenerator<DumpIndexReader> {
    for (const index of indexes) {
      yield {
        uid: index.uid,
        metadata: { uid: index.uid, primaryKey: index.primaryKey ?? null, createdAt: index.createdAt, updatedAt: index.updatedAt },
        settings: settings.get(index.uid)!,
        documents: () => files.lines<Document>(`${index.uid}/documents.jsonl`),
      };
    }
  }

  // every index's updates in turn, numbered as one queue (v3 -> v4)
  async function* tasks(): AsyncGenerator<DumpTaskReader> {
    let id = 0;
    for (const [position, index] of indexes.entries()) {
      // an index's history is optional: without it the index imports with no tasks
      if (!files.exists(`${index.uid}/updates.jsonl`)) {
        files.warn(`\`${index.uid}/updates.jsonl\` is missing: the index is imported without its update history`);
        continue;
      }
      for await (const raw of files.lines<Record<string, unknown>>(`${index.uid}/updates.jsonl`)) {
        const update = v1Update(raw, String(position), files.warn);
        if (!update) continue;
        yield { task: taskToV6(updateToTask(update, id++, index.uid), { keys: [], instanceUid: null, warn: files.warn }) };
      }
    }
  }

  return { instanceUid: null, indexes: readIndexes, tasks, keys: noKeys };
}

export async function* noKeys(): AsyncGenerator<DumpKey> {}
