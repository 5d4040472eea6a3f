/**
 * Read a dump: stream-extract the archive into a work directory (constant memory; a truncated
 * or corrupt archive fails here, before anything is imported), find its version in
 * `metadata.json`, check the layout, then hand out lazy iterators over keys, tasks, batches,
 * indexes and their documents, in the v6 shapes whatever the version (contents.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract as tarExtract } from 'tar';
import { SearchError } from '../../errors.js';
import type { Batch } from '../../types.js';
import { DUMP_VERSIONS, type DumpContents, type DumpFiles, type DumpIndexReader, type DumpTaskReader, type DumpVersion } from './contents.js';
import { readJsonl } from './jsonl.js';
import { FILES, type DumpKey, type DumpMetadata, type DumpWebhooks } from './layout.js';
import { openLegacy } from './legacy/open.js';
import { openV6 } from './v6.js';

export type { DumpIndexReader } from './contents.js';

export function invalidDump(file: string, reason: string, cause?: unknown): SearchError {
  return new SearchError('invalid_dump', `The dump \`${file}\` cannot be imported: ${reason}.`, { cause });
}

export interface DumpReaderOptions {
  /** Where to extract (default: the system temp dir). */
  workDir?: string;
  /** Conversions and skipped parts are reported here. */
  log?: (message: string) => void;
}

export class DumpReader {
  private constructor(
    readonly file: string,
    readonly dir: string,
    readonly metadata: DumpMetadata,
    private readonly contents: DumpContents,
  ) {}

  /** Extract `file` and validate its layout. */
  static async open(file: string, options: DumpReaderOptions = {}): Promise<DumpReader> {
    if (!existsSync(file)) throw invalidDump(file, 'the file does not exist');
    const dir = await mkdtemp(join(options.workDir ?? tmpdir(), 'search-dump-'));
    try {
      const log = options.log ?? (() => {});
      await extractArchive(file, dir, log);
      const files = dumpFiles(file, await dumpRoot(file, dir), log);
      const raw = await files.json<Record<string, unknown>>(FILES.metadata);
      const version = raw.dumpVersion as DumpVersion;
      if (!DUMP_VERSIONS.includes(version))
        throw invalidDump(file, `dump version \`${String(raw.dumpVersion)}\` is not supported (expected one of ${DUMP_VERSIONS.join(', ')})`);
      const contents = version === 'V6' ? await openV6(files, raw as unknown as DumpMetadata) : await openLegacy(files, version, raw);
      const metadata: DumpMetadata = { dumpVersion: version, dbVersion: contents.dbVersion, dumpDate: contents.dumpDate ?? '' };
      return new DumpReader(file, dir, metadata, contents);
    } catch (error) {
      await removeDir(dir);
      throw error;
    }
  }

  get version(): DumpVersion {
    return this.contents.version;
  }

  get instanceUid(): string | null {
    return this.contents.instanceUid;
  }

  keys(): AsyncGenerator<DumpKey> {
    return this.contents.keys();
  }

  /** Each task with, for an enqueued document task, the lazily read documents of its update file. */
  tasks(): AsyncGenerator<DumpTaskReader> {
    return this.contents.tasks();
  }

  batches(): AsyncGenerator<Batch> {
    return this.contents.batches();
  }

  webhooks(): Promise<DumpWebhooks> {
    return this.contents.webhooks();
  }

  /** The experimental flags of the dumped instance (v6 dumps written since Meilisearch 1.x; others have none). */
  experimentalFeatures(): Promise<Record<string, unknown>> {
    return this.contents.experimentalFeatures();
  }

  indexes(): AsyncGenerator<DumpIndexReader> {
    return this.contents.indexes();
  }

  searchRules(): AsyncGenerator<Record<string, unknown>> {
    return this.contents.searchRules();
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

function dumpFiles(file: string, dir: string, log: (message: string) => void): DumpFiles {
  const fail = (reason: string, cause?: unknown) => invalidDump(file, reason, cause);
  return {
    file,
    dir,
    exists: (name) => existsSync(join(dir, name)),
    async json<T>(name: string): Promise<T> {
      let text: string;
      try {
        text = await readFile(join(dir, name), 'utf8');
      } catch (error) {
        throw fail(`\`${name}\` is missing`, error);
      }
      try {
        return JSON.parse(text) as T;
      } catch (error) {
        throw fail(`\`${name}\` is not valid JSON (${(error as Error).message})`, error);
      }
    },
    async *lines<T>(name: string): AsyncGenerator<T> {
      if (!existsSync(join(dir, name))) throw fail(`\`${name}\` is missing`);
      try {
        yield* readJsonl<T>(join(dir, name), name, (line, digits) =>
          log(`dump: WARNING \`${name}\`, line ${line}: the integer ${digits} is beyond 2^53 and is imported rounded to ${Number(digits)} (a document id this large should be a string)`),
        );
      } catch (error) {
        throw fail((error as Error).message, error);
      }
    },
    text: (name) => readFile(join(dir, name), 'utf8'),
    async dirs(name: string): Promise<string[]> {
      const entries = await readdir(join(dir, name), { withFileTypes: true });
      return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
    },
    fail,
    warn: (message) => log(`dump: ${message}`),
  };
}

/** tar may still be finishing writes when it rejects: retry until the directory is gone. */
async function removeDir(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    await rm(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 }).catch(() => {});
    await new Promise((r) => setTimeout(r, 25));
    if (!existsSync(dir)) return;
  }
}

/**
 * Warnings of the tar parser that mean the archive is damaged. Others (an entry type or a header
 * field this parser does not know, which archives written by other tar libraries may hold) are
 * logged and the entry skipped: the layout check that follows says whether what matters is there.
 */
const FATAL_TAR_WARNINGS = new Set(['TAR_BAD_ARCHIVE', 'TAR_ABORT', 'TAR_ENTRY_ERROR', 'Z_DATA_ERROR', 'Z_BUF_ERROR', 'ZLIB_ERROR']);

async function extractArchive(file: string, dir: string, log: (message: string) => void): Promise<void> {
  let fatal: Error | null = null;
  try {
    await tarExtract({
      file,
      cwd: dir,
      onwarn: (code: string, message: string | Error) => {
        const text = typeof message === 'string' ? message : message.message;
        if (FATAL_TAR_WARNINGS.has(code) || /unexpected end|truncated/i.test(text)) fatal ??= new Error(`${code}: ${text}`);
        else log(`dump: archive entry skipped (${code}: ${text})`);
      },
    });
    if (fatal) throw fatal;
  } catch (error) {
    const message = (error as Error).message;
    const hint = /unexpected end|truncated|TAR_BAD_ARCHIVE|TAR_ABORT|incorrect header|invalid|Z_/i.test(message)
      ? 'the archive is corrupt or truncated'
      : 'the archive cannot be read';
    throw invalidDump(file, `${hint} (${message})`, error);
  }
}

/**
 * The directory holding `metadata.json`: the root, as Meilisearch writes its dumps, or the one
 * folder at the root when the archive was packed again with a top-level folder.
 */
async function dumpRoot(file: string, dir: string): Promise<string> {
  if (existsSync(join(dir, FILES.metadata))) return dir;
  // leave out what archivers add beside the folder (macOS resource forks)
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => !e.name.startsWith('._') && e.name !== '__MACOSX');
  const folders = entries.filter((e) => e.isDirectory());
  if (entries.length === 1 && folders.length === 1 && existsSync(join(dir, folders[0]!.name, FILES.metadata))) return join(dir, folders[0]!.name);
  throw invalidDump(file, `the archive has no \`${FILES.metadata}\`; is it a dump?`);
}
