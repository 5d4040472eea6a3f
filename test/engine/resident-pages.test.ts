/**
 * The data file's pages are kept out of the process's RSS (src/engine/store/resident-pages.ts):
 * released when asked and when the process maps more than its budget, with every byte intact.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IndexStore } from '../../src/engine/index/store.js';
import { MAPPED_BUDGET_BYTES, releaseCount, residentPagesSupported } from '../../src/engine/store/resident-pages.js';

const MiB = 1024 * 1024;

/** Bytes of `file` mapped in this process's page tables, from /proc/self/smaps. */
function mappedBytes(file: string): number {
  let total = 0;
  let inFile = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(` ${file}`);
    else if (inFile && line.startsWith('Rss:')) total += Number(line.split(/\s+/)[1]) * 1024;
  }
  return total;
}

/** `count` values of 8,000 bytes, each filled with its own byte. */
function fill(store: IndexStore, count: number): void {
  const db = store.openDB<Buffer, number>('blobs', { keyEncoding: 'uint32', encoding: 'binary' });
  store.write(() => {
    for (let i = 0; i < count; i++) db.putSync(i, Buffer.alloc(8000, i % 251));
  });
}

/** Reads every value back and checks its bytes. */
function readAll(store: IndexStore, count: number): boolean {
  const db = store.openDB<Buffer, number>('blobs', { keyEncoding: 'uint32', encoding: 'binary' });
  for (let i = 0; i < count; i++) {
    const value = db.getBinary(i);
    if (!value || value.length !== 8000 || value[0] !== i % 251 || value[7999] !== i % 251) return false;
  }
  return true;
}

const dirs: string[] = [];
const stores: IndexStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openStore(): IndexStore {
  const dir = mkdtempSync(join(tmpdir(), 'resident-'));
  dirs.push(dir);
  const store = new IndexStore(dir);
  stores.push(store);
  return store;
}

describe.runIf(process.platform === 'linux')('resident pages of the data file', () => {
  it('is built and loaded by npm install on Linux', () => {
    expect(residentPagesSupported()).toBe(true);
  });

  it('drops the mapped pages on request and reads the same bytes afterwards, also after a reopen', async () => {
    const store = openStore();
    const count = 6_000; // 48 MB
    fill(store, count);
    expect(readAll(store, count)).toBe(true);
    store.releaseMappedPages();
    expect(mappedBytes(store.dataFile)).toBeLessThan(2 * MiB);
    expect(readAll(store, count)).toBe(true);
    // Pages written and released inside one transaction are committed like any other.
    const db = store.openDB<Buffer, number>('blobs', { keyEncoding: 'uint32', encoding: 'binary' });
    store.write(() => {
      for (let i = 0; i < count; i += 2) db.putSync(i, Buffer.alloc(8000, 7));
      store.releaseMappedPages();
    });
    const path = store.path;
    stores.pop();
    await store.close();
    const reopened = new IndexStore(path);
    stores.push(reopened);
    const again = reopened.openDB<Buffer, number>('blobs', { keyEncoding: 'uint32', encoding: 'binary' });
    for (let i = 0; i < count; i++) expect(again.getBinary(i)![4000]).toBe(i % 2 === 0 ? 7 : i % 251);
  });

  it('releases an open index once the process maps more than its budget', async () => {
    const store = openStore();
    const count = 12_500; // 100 MB, six times the budget
    fill(store, count);
    store.releaseMappedPages();
    const before = releaseCount();
    expect(readAll(store, count)).toBe(true);
    // The native thread checks every 5 ms.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(releaseCount()).toBeGreaterThan(before);
    expect(mappedBytes(store.dataFile)).toBeLessThan(MAPPED_BUDGET_BYTES + 32 * MiB);
  });
});
