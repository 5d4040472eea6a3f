/**
 * The current layout, dump v6 (Meilisearch 1.x and this engine): see layout.ts. Files added by
 * later versions (`batches/`, `webhooks.json`, `experimental-features.json`, `network.json`)
 * are optional, as in the reference; `network.json` (multi-node) is read and left out.
 */
import type { Batch, Document } from '../../types.js';
import type { DumpContents, DumpFiles, DumpIndexReader, DumpTaskReader } from './contents.js';
import { FILES, INDEX_FILES, updateFileName, type DumpIndexMetadata, type DumpKey, type DumpMetadata, type DumpTask, type DumpWebhooks } from './layout.js';

export async function openV6(files: DumpFiles, metadata: DumpMetadata): Promise<DumpContents> {
  for (const required of [FILES.keys, FILES.tasksQueue]) if (!files.exists(required)) throw files.fail(`\`${required}\` is missing`);
  const uids = files.exists(FILES.indexesDir) ? await files.dirs(FILES.indexesDir) : [];
  for (const uid of uids)
    for (const name of Object.values(INDEX_FILES))
      if (!files.exists(`${FILES.indexesDir}/${uid}/${name}`)) throw files.fail(`\`indexes/${uid}/${name}\` is missing`);
  const instanceUid = files.exists(FILES.instanceUid) ? (await files.text(FILES.instanceUid)).trim() : null;
  // read now: a malformed file fails the import before anything is written
  const features = files.exists(FILES.experimentalFeatures) ? await files.json<unknown>(FILES.experimentalFeatures) : {};
  if (features === null || typeof features !== 'object' || Array.isArray(features)) throw files.fail(`\`${FILES.experimentalFeatures}\` is not an object`);
  if (files.exists('network.json')) {
    await files.json('network.json');
    files.warn('`network.json` is not imported: this engine has no multi-node network to restore');
  }

  return {
    version: 'V6',
    dbVersion: metadata.dbVersion,
    dumpDate: metadata.dumpDate ?? null,
    instanceUid,
    keys: () => files.lines<DumpKey>(FILES.keys),
    tasks: () => tasks(files),
    batches: () => batches(files),
    webhooks: () => webhooks(files),
    experimentalFeatures: async () => features as Record<string, unknown>,
    searchRules: () => searchRules(files),
    indexes: () => indexes(files, uids),
  };
}

async function* tasks(files: DumpFiles): AsyncGenerator<DumpTaskReader> {
  for await (const task of files.lines<DumpTask>(FILES.tasksQueue)) {
    const name = updateFileName(task.uid);
    yield files.exists(name) ? { task, updateFile: files.lines<Document>(name) } : { task };
  }
}

/** Batches were added to the layout in Meilisearch 1.13; older v6 dumps have none. */
async function* batches(files: DumpFiles): AsyncGenerator<Batch> {
  if (files.exists(FILES.batchesQueue)) yield* files.lines<Batch>(FILES.batchesQueue);
}

async function* searchRules(files: DumpFiles): AsyncGenerator<Record<string, unknown>> {
  if (files.exists(FILES.searchRules)) yield* files.lines<Record<string, unknown>>(FILES.searchRules);
}

async function webhooks(files: DumpFiles): Promise<DumpWebhooks> {
  if (!files.exists(FILES.webhooks)) return { webhooks: {} };
  const value = await files.json<Partial<DumpWebhooks>>(FILES.webhooks);
  return { webhooks: value.webhooks ?? {} };
}

async function* indexes(files: DumpFiles, uids: string[]): AsyncGenerator<DumpIndexReader> {
  for (const uid of uids) {
    const base = `${FILES.indexesDir}/${uid}`;
    const metadata = await files.json<DumpIndexMetadata>(`${base}/${INDEX_FILES.metadata}`);
    const settings = await files.json<Record<string, unknown>>(`${base}/${INDEX_FILES.settings}`);
    yield { uid, metadata, settings, documents: () => files.lines<Document>(`${base}/${INDEX_FILES.documents}`) };
  }
}
