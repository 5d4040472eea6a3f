import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { IndexStore, RoaringBitmap32 } from '../../src/engine/index/store.js';
import { checkDatabaseVersion } from '../../src/engine/ops/version/check.js';
import { CURRENT_DB_VERSION, upgradePath } from '../../src/engine/ops/version/history.js';
import { UpgradeJournal } from '../../src/engine/ops/version/journal.js';
import { rollbackUpgrade, runUpgrade } from '../../src/engine/ops/version/upgrade.js';
import { rawState } from './helpers/raw-state.js';
import { Engine } from '../../src/engine/engine.js';
import { decodeWordRecord, ENTRIES_DB, keywordDbs, PAIR_FIRST_MAX, PAIR_POSTINGS_META } from '../../src/engine/search/keyword/layout.js';
import { decodeEntry } from '../../src/engine/search/keyword/entry.js';
import { readdirSync } from 'node:fs';
import { movies as moviesData } from '../data.js';

const movies: Array<Record<string, unknown>> = moviesData().slice(0, 3000);

let db: string;
beforeEach(async () => {
  db = await mkdtemp(join(tmpdir(), 'upgrade-steps-'));
});
afterEach(async () => {
  await rm(db, { recursive: true, force: true });
});

/** A database directory in the 0.9.0 layout: documents, no stored field distribution. */
async function writeOldDatabase(root: string, indexCount: number): Promise<string[]> {
  writeFileSync(join(root, 'VERSION'), '0.9.0\n');
  const envs: string[] = [];
  for (let i = 0; i < indexCount; i++) {
    const rel = `indexes/idx-${i}`;
    await mkdir(join(root, rel), { recursive: true });
    const store = new IndexStore(join(root, rel));
    store.write(() => {
      store.setPrimaryKey('id');
      store.touch('2026-01-01T00:00:00.000Z', true);
      const docids = new RoaringBitmap32();
      movies.slice(i * 1000, (i + 1) * 1000).forEach((doc, d) => {
        store.documents.putSync(d, doc);
        store.externalIds.putSync(String(doc.id), d);
        docids.add(d);
      });
      store.setDocids(docids);
    });
    await store.close();
    envs.push(rel);
  }
  return envs;
}

function openAll(root: string, envs: string[]) {
  return envs.map((rel, i) => ({ uid: `idx-${i}`, rel, store: new IndexStore(join(root, rel)) }));
}

function expectedDistribution(docs: Array<Record<string, unknown>>) {
  const out: Record<string, number> = {};
  for (const d of docs) for (const k of Object.keys(d)) out[k] = (out[k] ?? 0) + 1;
  return out;
}

describe('storage format versions', () => {
  test('a database of another version is refused with both versions and the upgrade options named', async () => {
    await writeOldDatabase(db, 1);
    expect(() => checkDatabaseVersion(db)).toThrow(
      new RegExp(`storage format 0\\.9\\.0 but this binary uses storage format ${CURRENT_DB_VERSION.replace(/\./g, '\\.')}.*--experimental-dumpless-upgrade.*--import-dump`),
    );
    expect(checkDatabaseVersion(db, { dumplessUpgrade: true })).toEqual({ kind: 'upgrade', from: '0.9.0', to: CURRENT_DB_VERSION });
    writeFileSync(join(db, 'VERSION'), '9.0.0\n');
    expect(() => checkDatabaseVersion(db, { dumplessUpgrade: true })).toThrow(/storage format 9\.0\.0, newer than storage format/);
    expect(upgradePath('0.9.0')?.map((s) => s.to)).toEqual(['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0']);
    expect(checkDatabaseVersion(join(db, 'fresh'))).toEqual({ kind: 'new' });
  });

  test('the 0.9.0 -> 1.0.0 step stores each index field distribution and the new version', async () => {
    const envs = await writeOldDatabase(db, 3);
    const handles = openAll(db, envs);
    const progress: number[] = [];
    await runUpgrade({ dbPath: db, from: '0.9.0', to: '1.0.0', indexes: handles, onProgress: (p) => progress.push(p.done) });
    expect(progress).toEqual([1, 2, 3]);
    handles.forEach(({ store }, i) => expect(store.fieldDistribution).toEqual(expectedDistribution(movies.slice(i * 1000, (i + 1) * 1000))));
    expect(readFileSync(join(db, 'VERSION'), 'utf8')).toBe('1.0.0\n');
    expect(UpgradeJournal.exists(db)).toBe(false);
    for (const h of handles) await h.store.close();
  });

  test('the 1.1.0 -> 1.2.0 step re-encodes every document entry exactly and drops the u32 ones', async () => {
    const engine = await Engine.open({ dbPath: db, logLevel: 'off' });
    await engine.waitForTask((await engine.addDocuments('movies', movies.slice(0, 1500), { primaryKey: 'id' })).taskUid);
    await engine.close();
    const rel = `indexes/${readdirSync(join(db, 'indexes'))[0]}`;
    // Back to the 1.1.0 layout: the same entries as u32 LE in kw-docs, no kw-entries.
    let store = new IndexStore(join(db, rel));
    const entries = store.openDB<Buffer, number>(ENTRIES_DB, { keyEncoding: 'uint32', encoding: 'binary' });
    const legacy = store.openDB<Buffer, number>('kw-docs', { keyEncoding: 'uint32', encoding: 'binary' });
    const original = new Map<number, Buffer>();
    for (const { key, value } of entries.getRange()) original.set(key as number, Buffer.from(value as Buffer));
    expect(original.size).toBe(1500);
    store.write(() => {
      for (const [docid, bytes] of original) {
        const words = [0];
        for (const [fid, ids, positions] of decodeEntry(bytes)) words.push(fid, ids.length, ...ids, ...positions), words[0]!++;
        legacy.putSync(docid, Buffer.from(new Uint32Array(words).buffer));
      }
      entries.dropSync();
    });
    await store.close();
    writeFileSync(join(db, 'VERSION'), '1.1.0\n');

    store = new IndexStore(join(db, rel));
    await runUpgrade({ dbPath: db, from: '1.1.0', to: '1.2.0', indexes: [{ uid: 'movies', rel, store }] });
    expect(readFileSync(join(db, 'VERSION'), 'utf8')).toBe('1.2.0\n');
    const converted = store.openDB<Buffer, number>(ENTRIES_DB, { keyEncoding: 'uint32', encoding: 'binary' });
    const after = new Map<number, Buffer>();
    for (const { key, value } of converted.getRange()) after.set(key as number, Buffer.from(value as Buffer));
    expect(after).toEqual(original);
    expect(store.openDB<Buffer, number>('kw-docs', { keyEncoding: 'uint32', encoding: 'binary' }).getKeysCount()).toBe(0);
    await store.close();
  });

  test('the 1.2.0 -> 1.3.0 step converts nothing: an index without the pairs after long words reads them from its documents, and ranks as a rebuilt one', async () => {
    const docs = movies.slice(0, 1500);
    const queries = docs.slice(0, 40).flatMap((m) => String(m.title).toLowerCase().split(/[^a-z]+/).filter((w) => w.length > 3).slice(0, 1).flatMap((w) => [`${w} the`, `${w} of`, `the ${w} th`]));
    const ranked = async (engine: Engine) => {
      const out = [];
      for (const q of queries) out.push((await engine.search('movies', { q, limit: 20, showRankingScoreDetails: true, attributesToRetrieve: ['id'] })).hits);
      return out;
    };
    const rebuiltDir = join(db, 'rebuilt');
    const rebuilt = await Engine.open({ dbPath: rebuiltDir, logLevel: 'off' });
    await rebuilt.waitForTask((await rebuilt.addDocuments('movies', docs, { primaryKey: 'id' })).taskUid);
    const expected = await ranked(rebuilt);
    await rebuilt.close();

    const oldDir = join(db, 'old');
    const engine = await Engine.open({ dbPath: oldDir, logLevel: 'off' });
    await engine.waitForTask((await engine.addDocuments('movies', docs, { primaryKey: 'id' })).taskUid);
    await engine.close();
    // Back to what 1.2.0 wrote: no pair keys after a first word longer than 3, the older flag.
    const rel = `indexes/${readdirSync(join(oldDir, 'indexes'))[0]}`;
    let store = new IndexStore(join(oldDir, rel));
    const dbs = keywordDbs(store);
    let dropped = 0;
    store.write(() => {
      for (const key of dbs.pairs.getKeys()) {
        const first = String(key).split('\u0001')[0]!;
        if (String(key).includes('\u0001') && first.length > PAIR_FIRST_MAX) (dbs.pairs.removeSync(key), dropped++);
      }
      dbs.meta.putSync(PAIR_POSTINGS_META, true);
      dbs.prefixParts.clearSync();
      dbs.tails.prefixParts.clearSync();
    });
    expect(dropped).toBeGreaterThan(1000);
    await store.close();
    writeFileSync(join(oldDir, 'VERSION'), '1.2.0\n');

    store = new IndexStore(join(oldDir, rel));
    await runUpgrade({ dbPath: oldDir, from: '1.2.0', to: '1.3.0', indexes: [{ uid: 'movies', rel, store }] });
    expect(readFileSync(join(oldDir, 'VERSION'), 'utf8')).toBe('1.3.0\n');
    expect(keywordDbs(store).meta.get(PAIR_POSTINGS_META)).toBe(true);
    await runUpgrade({ dbPath: oldDir, from: '1.3.0', to: CURRENT_DB_VERSION, indexes: [{ uid: 'movies', rel, store }] });
    await store.close();
    const upgraded = await Engine.open({ dbPath: oldDir, logLevel: 'off' });
    try {
      expect(await ranked(upgraded)).toEqual(expected);
    } finally {
      await upgraded.close();
    }
  });

  test('the 1.3.0 -> 1.4.0 step builds the records of frequent prefixes from the word records: the same as a fresh build, ranked the same; a rollback empties them', async () => {
    const docs = movies.slice(0, 1500);
    // a short last word whose prefix stands for more words than the rules list
    const queries = ['the g', 'the c', 'lo', 'star w', 'john s', 'a', 'the m'];
    const ranked = async (engine: Engine) => {
      const out = [];
      for (const q of queries) out.push((await engine.search('movies', { q, limit: 30, showRankingScoreDetails: true, attributesToRetrieve: ['id'] })).hits);
      return out;
    };
    const records = (store: IndexStore) => {
      const dbs = keywordDbs(store);
      const out: Record<string, number[]> = {};
      for (const { key, value } of dbs.prefixParts.getRange()) {
        const tail = dbs.tails.prefixParts.getBinary(key as string);
        for (const record of tail ? [value, tail] : [value])
          for (const part of decodeWordRecord(record)) out[`${String(key)}/${part.tag}`] = [...new Set([...(out[`${String(key)}/${part.tag}`] ?? []), ...RoaringBitmap32.deserialize(Buffer.from(part.bitmap), true)])].sort((a, b) => a - b);
      }
      return out;
    };
    const dir = join(db, 'index');
    const engine = await Engine.open({ dbPath: dir, logLevel: 'off' });
    // in two batches, the second one's documents going into the records the first one started
    await engine.waitForTask((await engine.addDocuments('movies', docs.slice(0, 700), { primaryKey: 'id' })).taskUid);
    await engine.waitForTask((await engine.addDocuments('movies', docs.slice(700), { primaryKey: 'id' })).taskUid);
    const expected = await ranked(engine);
    await engine.close();
    const rel = `indexes/${readdirSync(join(dir, 'indexes'))[0]}`;
    let store = new IndexStore(join(dir, rel));
    const built = records(store);
    expect(Object.keys(built).length).toBeGreaterThan(100);
    // Back to what 1.3.0 wrote: no prefix records.
    store.write(() => {
      keywordDbs(store).prefixParts.dropSync();
      keywordDbs(store).tails.prefixParts.dropSync();
    });
    await store.close();
    writeFileSync(join(dir, 'VERSION'), '1.3.0\n');
    const before = rawState(dir);

    store = new IndexStore(join(dir, rel));
    const handles = [{ uid: 'movies', rel, store }];
    await runUpgrade({ dbPath: dir, from: '1.3.0', to: '1.4.0', indexes: handles, failAfterIndexes: 1 }).catch(() => {});
    expect(records(store)).toEqual(built);
    expect(rollbackUpgrade(dir, () => store)).toBe('1.3.0');
    expect(records(store)).toEqual({});
    await store.close();
    expect(rawState(dir)).toEqual(before);

    store = new IndexStore(join(dir, rel));
    await runUpgrade({ dbPath: dir, from: '1.3.0', to: '1.4.0', indexes: [{ uid: 'movies', rel, store }] });
    expect(records(store)).toEqual(built);
    await store.close();
    const upgraded = await Engine.open({ dbPath: dir, logLevel: 'off' });
    try {
      expect(await ranked(upgraded)).toEqual(expected);
    } finally {
      await upgraded.close();
    }
  });

  test('a fault midway, then rollback, restores every byte of the pre-upgrade state', async () => {
    const envs = await writeOldDatabase(db, 3);
    const before = rawState(db);
    const handles = openAll(db, envs);
    await expect(runUpgrade({ dbPath: db, from: '0.9.0', to: '1.0.0', indexes: handles, failAfterIndexes: 2 })).rejects.toThrow(/Injected fault/);
    expect(handles[0]!.store.fieldDistribution).not.toEqual({}); // the first indexes were really changed
    expect(UpgradeJournal.exists(db)).toBe(true);
    expect(rawState(db, { skip: /^upgrade-journal/ })).not.toEqual(before); // the fingerprint sees the change
    const byRel = new Map(handles.map((h) => [h.rel, h.store]));
    expect(rollbackUpgrade(db, (rel) => byRel.get(rel))).toBe('0.9.0');
    for (const h of handles) await h.store.close();
    expect(rawState(db)).toEqual(before);
    expect(existsSync(join(db, 'upgrade-journal'))).toBe(false);
  });

  test('cancel while running stops at the next checkpoint and rolls back', async () => {
    const envs = await writeOldDatabase(db, 3);
    const before = rawState(db);
    const handles = openAll(db, envs);
    const controller = new AbortController();
    const running = runUpgrade({ dbPath: db, from: '0.9.0', to: '1.0.0', indexes: handles, signal: controller.signal, delayPerIndexMs: 50 });
    setTimeout(() => controller.abort(), 20);
    await expect(running).rejects.toThrow(/canceled/);
    const byRel = new Map(handles.map((h) => [h.rel, h.store]));
    rollbackUpgrade(db, (rel) => byRel.get(rel));
    for (const h of handles) await h.store.close();
    expect(rawState(db)).toEqual(before);
  });
});
