import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index } from '../../src/engine/index/index.js';
import { ChangeSet, prepareExtensions } from '../../src/engine/index/pipeline.js';
import { keywordExtension } from '../../src/engine/search/keyword/extension.js';
import { defaultSettings, type Settings } from '../../src/engine/settings/types.js';
import type { Document } from '../../src/engine/types.js';

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
