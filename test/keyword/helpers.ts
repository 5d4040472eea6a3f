import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import roaring from 'roaring';
import { Index } from '../../src/engine/index/index.js';
import { ChangeSet, prepareExtensions } from '../../src/engine/index/pipeline.js';
import { keywordExtension } from '../../src/engine/search/keyword/extension.js';
import { decodeEntry } from '../../src/engine/search/keyword/entry.js';
import { BUCKET_TAG, decodeWordRecord, ID_BLOCK, keywordDbs } from '../../src/engine/search/keyword/layout.js';
import { defaultSettings, type Settings } from '../../src/engine/settings/types.js';
import type { Document } from '../../src/engine/types.js';

const { RoaringBitmap32 } = roaring;

export interface TestIndex {
  index: Index;
  dir: string;
  add(docs: Document[], method?: 'replace' | 'update'): void;
  remove(ids: string[]): void;
  setSettings(patch: Partial<Settings>): void;
  /** The same through `prepare` (before the write transaction) and `apply`, as the task processors do. */
  addPrepared(docs: Document[], method?: 'replace' | 'update'): Promise<void>;
  removePrepared(ids: string[]): Promise<void>;
  setSettingsPrepared(patch: Partial<Settings>): Promise<void>;
  close(): Promise<void>;
}

/** An index with only the keyword extension, written through the real document pipeline. */
export function openTestIndex(settings: Partial<Settings> = {}, primaryKey = 'id'): TestIndex {
  const dir = mkdtempSync(join(tmpdir(), 'kw-test-'));
  const index = new Index('test', 'uuid', dir, [keywordExtension], {});
  index.store.write(() => {
    index.store.setSettings({ ...defaultSettings(), ...settings });
    index.store.touch(new Date().toISOString(), true);
  });
  const commit = (fn: (cs: ChangeSet) => void) => {
    const cs = new ChangeSet(index.store);
    fn(cs);
    index.store.write(() => cs.commit([keywordExtension], index.settings, new Map()));
  };
  const commitPrepared = async (fn: (cs: ChangeSet) => void) => {
    const cs = new ChangeSet(index.store);
    fn(cs);
    const prepared = await prepareExtensions([keywordExtension], cs.list(), index.settings, index.store);
    index.store.write(() => cs.commit([keywordExtension], index.settings, prepared));
  };
  const allAsNew = () => [...index.store.documents.getRange()].map(({ key, value }) => ({ docid: key as number, after: value }));
  return {
    index,
    dir,
    addPrepared: (docs, method = 'replace') => commitPrepared((cs) => cs.addDocuments(docs, method, primaryKey)),
    removePrepared: (ids) => commitPrepared((cs) => cs.deleteExternalIds(ids)),
    async setSettingsPrepared(patch) {
      const before = index.settings;
      const after = { ...before, ...patch };
      const reindex = keywordExtension.needsReindex(before, after);
      const changes = reindex ? allAsNew() : [];
      const prepared = reindex ? await prepareExtensions([keywordExtension], changes, after, index.store, { fromScratch: true }) : new Map();
      index.store.write(() => {
        index.store.setSettings(after);
        if (reindex) {
          keywordExtension.clear(index.store);
          keywordExtension.apply(changes, { store: index.store, settings: after, prepared: prepared.get(keywordExtension.name) });
        }
      });
    },
    add: (docs, method = 'replace') => commit((cs) => cs.addDocuments(docs, method, primaryKey)),
    remove: (ids) => commit((cs) => cs.deleteExternalIds(ids)),
    setSettings(patch) {
      const before = index.settings;
      const after = { ...before, ...patch };
      index.store.write(() => {
        index.store.setSettings(after);
        if (keywordExtension.needsReindex(before, after)) {
          keywordExtension.clear(index.store);
          const changes = allAsNew();
          keywordExtension.apply(changes, { store: index.store, settings: after, prepared: undefined });
        }
      });
    },
    async close() {
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Every keyword database of an index, postings as external ids (word ids may differ), each list
 * with its tail (see tails.ts): what a reader sees, whichever way the batches stored it.
 */
export function dumpKeyword(x: TestIndex): Record<string, unknown> {
  const dbs = keywordDbs(x.index.store);
  // Each document read once: mapping every posting through getDocument would decode it per posting.
  const idOf = new Map<number, number>();
  for (const { key, value } of x.index.store.documentEntries()) idOf.set(key, value.id as number);
  const idFor = (d: number) => {
    const id = idOf.get(d);
    if (id === undefined) throw new Error(`posting names docid ${d}, which holds no document`);
    return id;
  };
  const ids = (docids: Iterable<number>) => [...docids].map(idFor).sort((p: number, q: number) => p - q);
  const docids = (bytes: Uint8Array): number[] => [...RoaringBitmap32.deserialize(Buffer.from(bytes), true)];
  // Field ids follow the order fields were first met: compared by path.
  const paths = (dbs.meta.get('fields') ?? []) as string[];
  const fieldPath = (fid: number) => paths[fid] ?? `#${fid}`;
  const out: Record<string, unknown> = {};
  for (const name of ['words', 'exactWords', 'prefixes', 'values', 'pairs'] as const) {
    const m: Record<string, number[]> = {};
    for (const { key, value } of dbs[name].getRange()) {
      const tail = dbs.tails[name].getBinary(key as string);
      m[key as string] = ids(new Set([...docids(value), ...(tail ? docids(tail) : [])]));
    }
    out[name] = m;
  }
  // Word and prefix records: every part (field, first-position bucket) of every word or prefix.
  for (const name of ['wordParts', 'prefixParts'] as const) {
    const byPart = new Map<string, Set<number>>();
    for (const { key, value } of dbs[name].getRange()) {
      const tail = dbs.tails[name].getBinary(key as string);
      for (const record of tail ? [value, tail] : [value]) {
        for (const part of decodeWordRecord(record)) {
          const k = `${key as string}/${part.tag >= BUCKET_TAG ? `bucket ${part.tag - BUCKET_TAG}` : fieldPath(part.tag)}`;
          if (!byPart.has(k)) byPart.set(k, new Set());
          for (const d of docids(part.bitmap)) byPart.get(k)!.add(d);
        }
      }
    }
    const parts: Record<string, number[]> = {};
    for (const [k, set] of byPart) if (set.size > 0) parts[k] = ids(set);
    out[name === 'wordParts' ? 'parts' : 'prefixParts'] = parts;
  }
  // Stored entries: each document's words per field, in order, with their positions.
  const words = new Map<number, Array<string | null>>();
  for (const { key, value } of dbs.idBlocks.getRange()) words.set(key as number, value as Array<string | null>);
  const wordOf = (id: number) => words.get(Math.floor(id / ID_BLOCK))?.[id % ID_BLOCK] ?? `#${id}`;
  const entries: Record<number, unknown> = {};
  for (const { key, value } of dbs.docs.getRange()) {
    const fields = decodeEntry(value as Uint8Array).map(([fid, ids, positions]) => [fieldPath(fid), Array.from(ids, wordOf), Array.from(positions)] as const);
    entries[idFor(key as number)] = fields.sort((a, b) => a[0].localeCompare(b[0]));
  }
  out.entries = entries;
  return out;
}
