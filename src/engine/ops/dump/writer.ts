/**
 * Write a dump: stream every record of a `DumpSource` into a work directory beside the target
 * (JSON Lines, constant memory), then stream that directory through tar + gzip into
 * `<file>.partial` and rename it into place, so that a dump file that exists is complete.
 */
import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dirname } from 'node:path';
import { create as tarCreate } from 'tar';
import { SearchError } from '../../errors.js';
import { BatchAborted, throwIfAborted } from '../../tasks/processing.js';
import { partialPath, removeStaleWork, workPrefix } from '../work-files.js';
import type { Document } from '../../types.js';
import { JsonlWriter, writeJsonl } from './jsonl.js';
import { DUMP_VERSION, FILES, INDEX_FILES, updateFileName, type DumpMetadata, type DumpSource } from './layout.js';

export interface DumpProgress {
  step: 'keys' | 'tasks' | 'batches' | 'indexes' | 'webhooks' | 'archive' | 'done';
  indexUid?: string;
  documents?: number;
}

export interface DumpWriteResult {
  path: string;
  bytes: number;
  indexes: number;
  documents: number;
  tasks: number;
  keys: number;
}

export interface DumpWriteOptions {
  /** Called at each step and every 10,000 documents. */
  onProgress?: (progress: DumpProgress) => void;
  date?: Date;
  /** Stop as soon as it aborts (a canceled task, an interrupted command): the work files go, no dump is left. */
  signal?: AbortSignal;
}

export async function writeDump(source: DumpSource, file: string, options: DumpWriteOptions = {}): Promise<DumpWriteResult> {
  const signal = options.signal;
  const progress = (p: DumpProgress) => {
    if (signal) throwIfAborted(signal);
    options.onProgress?.(p);
  };
  await mkdir(dirname(file), { recursive: true });
  removeStaleWork(dirname(file));
  const work = await mkdtemp(workPrefix(dirname(file), 'dump'));
  const partial = partialPath(file);
  try {
    const counts = await writeTree(source, work, progress, options.date ?? new Date(), signal);
    progress({ step: 'archive' });
    const entries: string[] = [FILES.metadata, FILES.instanceUid, FILES.keys, FILES.tasksDir, FILES.batchesDir, FILES.indexesDir, FILES.webhooks];
    if (source.experimentalFeatures) entries.push(FILES.experimentalFeatures);
    if (source.searchRules) entries.push(FILES.searchRules);
    await tarCreate({ gzip: true, file: partial, cwd: work, portable: true }, entries);
    await rename(partial, file);
    const bytes = (await stat(file)).size;
    progress({ step: 'done' });
    return { path: file, bytes, ...counts };
  } catch (error) {
    await rm(partial, { force: true });
    if (error instanceof SearchError || error instanceof BatchAborted) throw error;
    throw new SearchError('dump_process_failed', `Failed to write the dump \`${file}\`: ${(error as Error).message}`, { cause: error });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function writeTree(source: DumpSource, dir: string, progress: (p: DumpProgress) => void, date: Date, signal?: AbortSignal) {
  const metadata: DumpMetadata = { dumpVersion: DUMP_VERSION, dbVersion: source.dbVersion, dumpDate: date.toISOString() };
  await writeFile(join(dir, FILES.metadata), JSON.stringify(metadata));
  await writeFile(join(dir, FILES.instanceUid), source.instanceUid);

  progress({ step: 'keys' });
  const keys = await writeJsonl(join(dir, FILES.keys), source.keys());

  progress({ step: 'tasks' });
  await mkdir(join(dir, FILES.updateFilesDir), { recursive: true });
  const queue = new JsonlWriter(join(dir, FILES.tasksQueue));
  try {
    for await (const { task, updateFile } of source.tasks()) {
      await queue.push(task);
      if (updateFile) await writeJsonl(join(dir, updateFileName(task.uid)), updateFile);
    }
  } finally {
    await queue.close();
  }

  progress({ step: 'batches' });
  await mkdir(join(dir, FILES.batchesDir));
  await writeJsonl(join(dir, FILES.batchesQueue), source.batches());

  progress({ step: 'indexes' });
  await mkdir(join(dir, FILES.indexesDir));
  let indexes = 0;
  let documents = 0;
  for await (const index of source.indexes()) {
    const uid = index.metadata.uid;
    const indexDir = join(dir, FILES.indexesDir, uid);
    await mkdir(indexDir);
    await writeFile(join(indexDir, INDEX_FILES.metadata), JSON.stringify(index.metadata));
    await writeFile(join(indexDir, INDEX_FILES.settings), JSON.stringify(index.settings));
    const writer = new JsonlWriter(join(indexDir, INDEX_FILES.documents));
    try {
      for await (const document of index.documents as AsyncIterable<Document>) {
        await writer.push(document);
        if (signal && writer.count % 1_000 === 0) throwIfAborted(signal);
        if (writer.count % 10_000 === 0) progress({ step: 'indexes', indexUid: uid, documents: writer.count });
      }
    } finally {
      await writer.close();
    }
    progress({ step: 'indexes', indexUid: uid, documents: writer.count });
    documents += writer.count;
    indexes++;
  }

  progress({ step: 'webhooks' });
  await writeFile(join(dir, FILES.webhooks), JSON.stringify(await source.webhooks()));
  if (source.experimentalFeatures) await writeFile(join(dir, FILES.experimentalFeatures), JSON.stringify(source.experimentalFeatures()));
  if (source.searchRules) await writeFile(join(dir, FILES.searchRules), source.searchRules().map((rule) => `${JSON.stringify(rule)}\n`).join(''));
  return { indexes, documents, tasks: queue.count, keys };
}
