import { mkdtemp, readFile, rm, truncate, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { list as tarList } from 'tar';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeDump } from '../../src/engine/ops/dump/writer.js';
import { DumpReader } from '../../src/engine/ops/dump/reader.js';
import { dumpFileStem, fromDumpDetails, kindToType, toDumpDetails, typeToKind, type DumpSource, type DumpTask } from '../../src/engine/ops/dump/layout.js';
import type { Batch, Document } from '../../src/engine/types.js';
import { books as booksData } from '../data.js';

const books: Document[] = booksData();

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dump-format-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const enqueued: DumpTask = {
  uid: 3, batchUid: null, indexUid: 'books', status: 'enqueued',
  type: { documentImport: { primary_key: null, method: 'ReplaceDocuments', documents_count: 2, allow_index_creation: true } },
  canceledBy: null, details: { receivedDocuments: 2, indexedDocuments: null }, error: null, duration: null,
  enqueuedAt: '2026-01-01T00:00:00.000Z', startedAt: null, finishedAt: null,
};
const batch: Batch = {
  uid: 0, progress: null, details: {}, duration: 'PT0.1S', startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:01Z',
  stats: { totalNbTasks: 1, status: { succeeded: 1 }, types: { indexCreation: 1 }, indexUids: { books: 1 } },
};

function source(): DumpSource {
  return {
    instanceUid: '9e15e977-f2ae-4761-943f-1eaf75fd736d',
    dbVersion: '0.1.0',
    keys: () => [{ uid: 'a3c8f1d2-0000-4000-8000-000000000001', name: 'reader', actions: ['search'], indexes: ['books'], expires_at: null, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' }],
    tasks: () => [{ task: enqueued, updateFile: books.slice(0, 2) }],
    batches: () => [batch],
    // an async generator: the writer must not need the documents up front
    indexes: async function* () {
      yield {
        metadata: { uid: 'books', primaryKey: 'id', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-02T00:00:00Z' },
        settings: { searchableAttributes: ['title', 'author'] },
        documents: (async function* () {
          for (const [i, b] of books.entries()) yield { ...b, _vectors: { default: [i, i + 0.5, -1] } };
        })(),
      };
    },
    webhooks: () => ({ webhooks: { '0b1f4c6e-0000-4000-8000-000000000002': { url: 'http://127.0.0.1:9/hook', headers: { authorization: 'Bearer x' } } } }),
  };
}

describe('dump archive (Meilisearch v6 layout)', () => {
  test('holds the v6 file layout and reads back every record unchanged', async () => {
    const file = join(dir, `${dumpFileStem(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))}.dump`);
    expect(file.endsWith('20260102-030405006.dump')).toBe(true);
    const result = await writeDump(source(), file);
    expect(result).toMatchObject({ indexes: 1, documents: books.length, tasks: 1, keys: 1 });

    const names: string[] = [];
    await tarList({ file, onReadEntry: (e) => { names.push(e.path.replace(/\/$/, '')); } });
    expect(names).toEqual(expect.arrayContaining([
      'metadata.json', 'instance_uid.uuid', 'keys.jsonl', 'tasks/queue.jsonl', 'tasks/update_files/3.jsonl',
      'batches/queue.jsonl', 'indexes/books/metadata.json', 'indexes/books/settings.json', 'indexes/books/documents.jsonl', 'webhooks.json',
    ]));

    const reader = await DumpReader.open(file);
    try {
      expect(reader.metadata.dumpVersion).toBe('V6');
      expect(reader.metadata.dbVersion).toBe('0.1.0');
      expect(reader.instanceUid).toBe('9e15e977-f2ae-4761-943f-1eaf75fd736d');
      const keys = []; for await (const k of reader.keys()) keys.push(k);
      expect(keys.map((k) => k.name)).toEqual(['reader']);
      const tasks = [];
      for await (const { task, updateFile } of reader.tasks()) {
        const docs = []; if (updateFile) for await (const d of updateFile) docs.push(d);
        tasks.push({ task, docs });
      }
      expect(tasks).toEqual([{ task: enqueued, docs: books.slice(0, 2) }]);
      expect(kindToType(tasks[0]!.task.type)).toBe('documentAdditionOrUpdate');
      const batches = []; for await (const b of reader.batches()) batches.push(b);
      expect(batches).toEqual([batch]);
      expect(await reader.webhooks()).toEqual(await source().webhooks());
      const indexes = [];
      for await (const index of reader.indexes()) {
        const docs = []; for await (const d of index.documents()) docs.push(d);
        indexes.push({ uid: index.uid, settings: index.settings, pk: index.metadata.primaryKey, docs });
      }
      expect(indexes).toHaveLength(1);
      expect(indexes[0]!.settings).toEqual({ searchableAttributes: ['title', 'author'] });
      expect(indexes[0]!.pk).toBe('id');
      expect(indexes[0]!.docs).toEqual(books.map((b, i) => ({ ...b, _vectors: { default: [i, i + 0.5, -1] } })));
    } finally {
      await reader.close();
    }
  });

  test('a truncated dump fails with a clear error and leaves no work directory', async () => {
    const file = join(dir, 'truncated.dump');
    await writeDump(source(), file);
    await truncate(file, Math.floor((await stat(file)).size / 2));
    const workDir = await mkdtemp(join(dir, 'work-'));
    await expect(DumpReader.open(file, { workDir })).rejects.toThrow(/cannot be imported: the archive is corrupt or truncated/);
    expect((await import('node:fs')).readdirSync(workDir)).toEqual([]);
  });

  test('a file that is not a dump is refused', async () => {
    const file = join(dir, 'garbage.dump');
    await writeFile(file, 'this is not a gzip archive');
    await expect(DumpReader.open(file)).rejects.toMatchObject({ code: 'invalid_dump' });
    await expect(DumpReader.open(join(dir, 'missing.dump'))).rejects.toThrow(/does not exist/);
  });

  test('task kinds map both ways between public types and the dump enum', () => {
    expect(typeToKind('indexDeletion')).toBe('indexDeletion');
    expect(typeToKind('settingsUpdate', { settings: {} })).toEqual({ settings: { settings: {} } });
    expect(kindToType('tasksDeletion')).toBe('taskDeletion');
    expect(kindToType({ upgradeDatabase: { from: [0, 0, 1] } })).toBe('upgradeDatabase');
    expect(() => kindToType('nope')).toThrow(/unknown task kind/);
  });

  test('task details are written in Meilisearch\'s tagged snake_case form and read back', () => {
    const added = { receivedDocuments: 2, indexedDocuments: 2 };
    expect(toDumpDetails('documentAdditionOrUpdate', added)).toEqual({ DocumentAdditionOrUpdate: { received_documents: 2, indexed_documents: 2 } });
    expect(fromDumpDetails(toDumpDetails('documentAdditionOrUpdate', added))).toEqual(added);
    const upgrade = { upgradeFrom: 'v0.9.0', upgradeTo: 'v1.0.0' };
    expect(toDumpDetails('upgradeDatabase', upgrade)).toEqual({ UpgradeDatabase: { from: [0, 9, 0], to: [1, 0, 0] } });
    expect(fromDumpDetails(toDumpDetails('upgradeDatabase', upgrade))).toEqual(upgrade);
    const settings = { searchableAttributes: ['title'] };
    expect(fromDumpDetails(toDumpDetails('settingsUpdate', settings))).toEqual(settings);
    expect(toDumpDetails('documentDeletion', { deletedDocuments: 3 })).toEqual({ ClearAll: { deleted_documents: 3 } });
    expect(fromDumpDetails({ receivedDocuments: 1 })).toEqual({ receivedDocuments: 1 });
  });

  test('an export task reads back with its API key hidden, as the reference shows it', () => {
    expect(kindToType({ export: { url: 'http://remote:7700', api_key: 'k', payload_size: null, indexes: {} } })).toBe('export');
    const ours = { url: 'http://remote:7700', apiKey: 'remoXXXXX...', payloadSize: '24 MiB', indexes: { movies: { filter: null, overrideSettings: false, matchedDocuments: 3 } } };
    expect(fromDumpDetails(toDumpDetails('export', ours))).toEqual(ours);
    // the reference keeps the key in clear in its own dumps, and the size in bytes
    const theirs = { Export: { url: 'http://remote:7700', api_key: 'a-remote-key-of-34-characters-long!', payload_size: 25165824, indexes: { '*': { filter: null, overrideSettings: true } } } };
    expect(fromDumpDetails(theirs)).toEqual({ url: 'http://remote:7700', apiKey: 'a-remXXXXXX...', payloadSize: '24 MiB', indexes: { '*': { filter: null, overrideSettings: true } } });
  });
});
