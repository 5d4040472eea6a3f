/**
 * Under a memory limit the index files are mapped without read-ahead (index/read-ahead.ts): a
 * search then brings in the pages it reads, not 128 KiB around each. The kernel shows the choice
 * in /proc/self/smaps as the mapping's `rr` flag (random reads).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import { readAhead } from '../../src/engine/index/read-ahead.js';
import { tempEngine } from './helpers.js';

const MIB = 1024 * 1024;

/** The VmFlags of every mapping of an index data file under `dbPath`. */
function indexMappingFlags(dbPath: string): string[] {
  const flags: string[] = [];
  let inIndex = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inIndex = line.includes(`${dbPath}/indexes/`) && line.endsWith('data.mdb');
    else if (inIndex && line.startsWith('VmFlags:')) flags.push(line.slice('VmFlags:'.length).trim());
  }
  return flags;
}

const saved = process.env.SEARCH_READ_AHEAD;
let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
  if (saved === undefined) delete process.env.SEARCH_READ_AHEAD;
  else process.env.SEARCH_READ_AHEAD = saved;
});

async function indexedEngine() {
  const opened = await tempEngine();
  cleanup = opened.cleanup;
  const { engine } = opened;
  const task = await engine.addDocuments('films', [{ id: 1, title: 'The Red Shoes' }, { id: 2, title: 'Red River' }], { primaryKey: 'id' });
  expect((await engine.waitForTask(task.taskUid, { timeoutMs: 30_000 })).status).toBe('succeeded');
  return opened;
}

describe('read-ahead of the index files', () => {
  test('auto: off under a memory limit, on with ample memory; SEARCH_READ_AHEAD overrides', () => {
    expect(readAhead({}, 512 * MIB)).toBe(false);
    expect(readAhead({ SEARCH_READ_AHEAD: 'auto' }, 2048 * MIB)).toBe(false);
    expect(readAhead({}, 16_384 * MIB)).toBe(true);
    expect(readAhead({ SEARCH_READ_AHEAD: 'on' }, 512 * MIB)).toBe(true);
    expect(readAhead({ SEARCH_READ_AHEAD: 'off' }, 16_384 * MIB)).toBe(false);
  });

  test.skipIf(!existsSync('/proc/self/smaps'))('without read-ahead the index is mapped for random reads, and it is searched as before', async () => {
    process.env.SEARCH_READ_AHEAD = 'off';
    const { engine, dbPath } = await indexedEngine();
    const flags = indexMappingFlags(dbPath);
    expect(flags.length).toBeGreaterThan(0);
    for (const f of flags) expect(f.split(' ')).toContain('rr');
    expect((await engine.search('films', { q: 'red' })).hits.map((h) => h.id).sort()).toEqual([1, 2]);
  });

  test.skipIf(!existsSync('/proc/self/smaps'))('with read-ahead the mapping keeps the kernel default', async () => {
    process.env.SEARCH_READ_AHEAD = 'on';
    const { dbPath } = await indexedEngine();
    const flags = indexMappingFlags(dbPath);
    expect(flags.length).toBeGreaterThan(0);
    for (const f of flags) expect(f.split(' ')).not.toContain('rr');
  });
});
