/**
 * Read a dump: stream-extract the archive into a work directory (constant memory; a truncated
 * or corrupt archive fails here, before anything is imported), check the layout, then hand out
 * lazy iterators over keys, tasks, batches, indexes and their documents.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract as tarExtract } from 'tar';
import { SearchError } from '../../errors.js';
import type { Batch, Document } from '../../types.js';
import { readJsonl } from './jsonl.js';
import {
  DUMP_VERSION,
  FILES,
  INDEX_FILES,
  updateFileName,
  type DumpIndexMetadata,
  type DumpKey,
  type DumpMetadata,
  type DumpTask,
  type DumpWebhooks,
} from './layout.js';

export function invalidDump(file: string, reason: string, cause?: unknown): SearchError {
  return new SearchError('invalid_dump', `The dump \`${file}\` cannot be imported: ${reason}.`, { cause });
}

export interface DumpIndexReader {
  uid: string;
  metadata: DumpIndexMetadata;
  settings: Record<string, unknown>;
  documents(): AsyncGenerator<Document>;
}

export class DumpReader {
  private constructor(
    readonly file: string,
    readonly dir: string,
    readonly metadata: DumpMetadata,
    readonly instanceUid: string | null,
  ) {}

  /** Extract `file` under `workDir` (default: the system temp dir) and validate its layout. */
  static async open(file: string, options: { workDir?: string } = {}): Promise<DumpReader> {
    if (!existsSync(file)) throw invalidDump(file, 'the file does not exist');
    const dir = await mkdtemp(join(options.workDir ?? tmpdir(), 'search-dump-'));
    try {
      await extractArchive(file, dir);
      const metadata = await readJson<DumpMetadata>(file, dir, FILES.metadata);
      if (metadata.dumpVersion !== DUMP_VERSION)
        throw invalidDump(file, `dump version \`${metadata.dumpVersion}\` is not supported, only \`${DUMP_VERSION}\``);
      for (const required of [FILES.keys, FILES.tasksQueue])
        if (!existsSync(join(dir, required))) throw invalidDump(file, `\`${required}\` is missing`);
      const uidPath = join(dir, FILES.instanceUid);
      const instanceUid = existsSync(uidPath) ? (await readFile(uidPath, 'utf8')).trim() : null;
      const reader = new DumpReader(file, dir, metadata, instanceUid);
      await reader.checkIndexes();
      return reader;
    } catch (error) {
      await removeDir(dir);
      throw error;
    }
  }

  private async checkIndexes(): Promise<void> {
    for (const uid of await this.indexUids())
      for (const name of Object.values(INDEX_FILES))
        if (!existsSync(join(this.dir, FILES.indexesDir, uid, name)))
          throw invalidDump(this.file, `\`indexes/${uid}/${name}\` is missing`);
  }

  async indexUids(): Promise<string[]> {
    const root = join(this.dir, FILES.indexesDir);
    if (!existsSync(root)) return [];
    const entries = await readdir(root, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  }

  keys(): AsyncGenerator<DumpKey> {
    return this.lines<DumpKey>(FILES.keys);
  }

  /** Each task with, for an enqueued document task, the lazily read documents of its update file. */
  async *tasks(): AsyncGenerator<{ task: DumpTask; updateFile?: AsyncGenerator<Document> }> {
    for await (const task of this.lines<DumpTask>(FILES.tasksQueue)) {
      const name = updateFileName(task.uid);
      yield existsSync(join(this.dir, name)) ? { task, updateFile: this.lines<Document>(name) } : { task };
    }
  }

  /** Batches were added to the layout in Meilisearch 1.13; older V6 dumps have none. */
  async *batches(): AsyncGenerator<Batch> {
    if (existsSync(join(this.dir, FILES.batchesQueue))) yield* this.lines<Batch>(FILES.batchesQueue);
  }

  /** The experimental flags of the dumped instance; Meilisearch writes them since 1.x, older dumps have none. */
  async experimentalFeatures(): Promise<Record<string, unknown>> {
    if (!existsSync(join(this.dir, FILES.experimentalFeatures))) return {};
    const value = await readJson<unknown>(this.file, this.dir, FILES.experimentalFeatures);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  }

  async webhooks(): Promise<DumpWebhooks> {
    if (!existsSync(join(this.dir, FILES.webhooks))) return { webhooks: {} };
    const value = await readJson<Partial<DumpWebhooks>>(this.file, this.dir, FILES.webhooks);
    return { webhooks: value.webhooks ?? {} };
  }

  async *indexes(): AsyncGenerator<DumpIndexReader> {
    for (const uid of await this.indexUids()) {
      const base = `${FILES.indexesDir}/${uid}`;
      const metadata = await readJson<DumpIndexMetadata>(this.file, this.dir, `${base}/${INDEX_FILES.metadata}`);
      const settings = await readJson<Record<string, unknown>>(this.file, this.dir, `${base}/${INDEX_FILES.settings}`);
      yield { uid, metadata, settings, documents: () => this.lines<Document>(`${base}/${INDEX_FILES.documents}`) };
    }
  }

  /** Size in bytes of an index's documents file: lets the importer report progress as a share. */
  async documentsBytes(uid: string): Promise<number> {
    return (await stat(join(this.dir, FILES.indexesDir, uid, INDEX_FILES.documents))).size;
  }

  private async *lines<T>(name: string): AsyncGenerator<T> {
    try {
      yield* readJsonl<T>(join(this.dir, name), name);
    } catch (error) {
      throw invalidDump(this.file, (error as Error).message, error);
    }
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** tar may still be finishing writes when it rejects: retry until the directory is gone. */
async function removeDir(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    await rm(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 }).catch(() => {});
    await new Promise((r) => setTimeout(r, 25));
    if (!existsSync(dir)) return;
  }
}

async function extractArchive(file: string, dir: string): Promise<void> {
  try {
    await tarExtract({ file, cwd: dir, strict: true });
  } catch (error) {
    const message = (error as Error).message;
    const hint = /unexpected end|truncated|TAR_BAD_ARCHIVE|incorrect header|invalid/i.test(message)
      ? 'the archive is corrupt or truncated'
      : 'the archive cannot be read';
    throw invalidDump(file, `${hint} (${message})`, error);
  }
  if (!existsSync(join(dir, FILES.metadata))) throw invalidDump(file, `the archive has no \`${FILES.metadata}\`; is it a dump?`);
}

async function readJson<T>(file: string, dir: string, name: string): Promise<T> {
  try {
    return JSON.parse(await readFile(join(dir, name), 'utf8')) as T;
  } catch (error) {
    throw invalidDump(file, `\`${name}\` is not valid JSON (${(error as Error).message})`, error);
  }
}
