/** Test helpers: an IndexStore in a temp dir fed through the facet and geo extensions. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentChange } from '../../src/engine/index/extension.js';
import { IndexStore } from '../../src/engine/index/store.js';
import { defaultSettings, type Settings } from '../../src/engine/settings/types.js';
import type { Document } from '../../src/engine/types.js';
import { facetExtension } from '../../src/engine/search/facets/extension.js';
import { geoExtension } from '../../src/engine/search/geo/extension.js';
import { movies as moviesData, worldCities as worldCitiesData } from '../data.js';

/** The data sets, from the committed fixtures (see test/data.ts). */
export function movies(): Document[] {
  return moviesData();
}

export function worldCities(): Document[] {
  return worldCitiesData();
}

export class TestIndex {
  readonly dir: string;
  readonly store: IndexStore;

  constructor(
    readonly primaryKey: string,
    settings: Partial<Settings>,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'search-facets-'));
    this.store = new IndexStore(this.dir);
    facetExtension.open(this.store);
    geoExtension.open(this.store);
    this.store.write(() => {
      this.store.setPrimaryKey(primaryKey);
      this.store.setSettings({ ...defaultSettings(), ...settings });
    });
  }

  get settings(): Settings {
    return this.store.settings;
  }

  private run(changes: DocumentChange[]): void {
    const settings = this.settings;
    for (const ext of [facetExtension, geoExtension]) ext.apply(changes, { store: this.store, settings, prepared: null });
  }

  /** Add or replace documents, as the document pipeline does, in one write transaction. */
  async add(docs: Document[]): Promise<void> {
    const settings = this.settings;
    // Validation happens before the transaction, like the real pipeline.
    const preview: DocumentChange[] = docs.map((after, i) => ({ docid: -1 - i, after }));
    await geoExtension.prepare!(preview, settings, this.store);
    this.store.write(() => {
      const docids = this.store.docids().clone();
      const changes: DocumentChange[] = [];
      for (const doc of docs) {
        const id = String(doc[this.primaryKey]);
        let docid = this.store.docidOf(id);
        const before = docid === undefined ? undefined : this.store.getDocument(docid);
        if (docid === undefined) {
          docid = this.store.allocateDocid();
          this.store.externalIds.putSync(id, docid);
        }
        this.store.documents.putSync(docid, doc);
        docids.add(docid);
        changes.push({ docid, before, after: doc });
      }
      this.store.setDocids(docids);
      this.run(changes);
    });
  }

  delete(ids: Array<string | number>): void {
    this.store.write(() => {
      const docids = this.store.docids().clone();
      const changes: DocumentChange[] = [];
      for (const raw of ids) {
        const id = String(raw);
        const docid = this.store.docidOf(id);
        if (docid === undefined) continue;
        changes.push({ docid, before: this.store.getDocument(docid) });
        this.store.documents.removeSync(docid);
        this.store.externalIds.removeSync(id);
        docids.remove(docid);
      }
      this.store.setDocids(docids);
      this.run(changes);
    });
  }

  /** Change settings; re-extract everything when an extension asks for it (like the settings task). */
  updateSettings(patch: Partial<Settings>): void {
    const before = this.settings;
    const after = { ...before, ...patch };
    this.store.write(() => {
      this.store.setSettings(after);
      const exts = [facetExtension, geoExtension].filter((e) => e.needsReindex(before, after));
      if (!exts.length) return;
      const changes: DocumentChange[] = [];
      for (const docid of this.store.docids()) changes.push({ docid, after: this.store.getDocument(docid)! });
      for (const ext of exts) {
        ext.clear(this.store);
        ext.apply(changes, { store: this.store, settings: after, prepared: null });
      }
    });
  }

  /** External ids of a docid bitmap, sorted, for readable assertions. */
  ids(bitmap: Iterable<number>): Array<string | number> {
    const out: Array<string | number> = [];
    for (const docid of bitmap) out.push(this.store.getDocument(docid)![this.primaryKey] as string | number);
    return out.sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b))));
  }

  allDocuments(): Array<{ docid: number; doc: Document }> {
    const out: Array<{ docid: number; doc: Document }> = [];
    for (const docid of this.store.docids()) out.push({ docid, doc: this.store.getDocument(docid)! });
    return out;
  }

  async close(): Promise<void> {
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
