/**
 * A full disk is a failed task, not a crash: on a small tmpfs (mounted when the tests run as root;
 * skipped otherwise), uploads and batches that would eat into the reserve are refused with
 * `no_space_left_on_device`, a disk filled by someone else in the middle of a commit fails the
 * batch whole, searches keep being served, a restart on a full disk comes up serving reads, and
 * no payload file outlives its refused upload or failed task. Without root, only the last test
 * (the error mapping and the free-space check) runs.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statfsSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import type { Task } from '../../src/engine/types.js';
import { SearchError, toSearchError } from '../../src/engine/errors.js';
import { ensureSpaceFor, RESERVE_BYTES } from '../../src/engine/store/disk-space.js';
import { INITIAL_MAP_BYTES } from '../../src/engine/index/store.js';
import { disableWritableMap, enableWritableMap, expectSmallWrites, expectWrites, SpaceReservation } from '../../src/engine/index/writable-map.js';

const MiB = 1024 * 1024;
const root = mkdtempSync(join(tmpdir(), 'search-full-disk-'));
const mnt = join(root, 'mnt');
let mounted = false;
try {
  mkdirSync(mnt);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', mnt], { stdio: 'ignore' });
  mounted = true;
} catch {
  mounted = false;
}

afterAll(() => {
  if (mounted) execFileSync('umount', [mnt]);
  rmSync(root, { recursive: true, force: true });
});

const dbPath = join(mnt, 'data.ms');
const filler = join(mnt, 'filler');
const engines: Engine[] = [];

async function open(): Promise<Engine> {
  const engine = await Engine.open({ dbPath, logLevel: process.env.FULL_DISK_LOG ? 'debug' : 'off' });
  engines.push(engine);
  return engine;
}

afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
  rmSync(filler, { force: true });
  rmSync(dbPath, { recursive: true, force: true });
});

function free(): number {
  const s = statfsSync(mnt);
  return s.bavail * s.bsize;
}

/** Fill the filesystem until `leave` bytes are free (0: to the last byte). */
function fillDisk(leave: number): void {
  const fd = openSync(filler, 'a');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    while (free() > leave) writeSync(fd, chunk, 0, Math.min(chunk.length, Math.max(4096, free() - leave)));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

function movies(n: number, from = 0, padding = 40): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({ id: from + i, title: `movie ${from + i}`, overview: `story ${i} `.repeat(padding) }));
}

function payload(docs: unknown[]): { format: 'json'; data: Buffer } {
  return { format: 'json', data: Buffer.from(JSON.stringify(docs)) };
}

function updateFiles(): string[] {
  const dir = join(dbPath, 'tasks', 'update_files');
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function seed(engine: Engine): Promise<void> {
  const task = await engine.addDocuments('movies', payload(movies(50)));
  expect((await engine.waitForTask(task.taskUid)).status).toBe('succeeded');
}

/**
 * Run `fn` with the write side's test hook holding each commit open 1.5 s and creating `marker`
 * meanwhile. Set before the engine opens: a write process reads its environment when it starts.
 */
async function withCommitsHeld<T>(marker: string, fn: () => Promise<T>): Promise<T> {
  process.env.SEARCH_TEST_HOLD_WRITE_MS = '1500';
  process.env.SEARCH_TEST_HOLD_WRITE_MARKER = marker;
  try {
    return await fn();
  } finally {
    delete process.env.SEARCH_TEST_HOLD_WRITE_MS;
    delete process.env.SEARCH_TEST_HOLD_WRITE_MARKER;
  }
}

/** Add 1,000 films and fill the disk to its last byte while their commit is held open (see withCommitsHeld): the task, ended. */
async function fillDiskDuringCommit(engine: Engine, marker: string): Promise<Task> {
  rmSync(marker, { force: true });
  const task = await engine.addDocuments('movies', payload(movies(3000, 1000, 80)));
  while (!existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 20));
  fillDisk(0);
  return engine.waitForTask(task.taskUid, { timeoutMs: 30_000 });
}

/** Documents a search finds (searches are served whatever the disk) and the index holds. */
async function hits(engine: Engine): Promise<number> {
  const total = engine.getDocuments('movies', { limit: 0 }).total;
  const found = (await engine.search('movies', { q: 'movie', limit: 0, hitsPerPage: 1 })).totalHits as number;
  expect(found).toBe(Math.min(total, 1000)); // maxTotalHits
  return total;
}

describe.runIf(mounted)('on a 48 MiB tmpfs', () => {
  test('an upload that would eat into the reserve is refused at once and leaves no file', async () => {
    const engine = await open();
    await seed(engine);
    fillDisk(RESERVE_BYTES + 1 * MiB);
    const error = await engine.addDocuments('movies', payload(movies(4000, 1000))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SearchError);
    expect((error as SearchError).code).toBe('no_space_left_on_device');
    expect(updateFiles()).toEqual([]);
    expect(await hits(engine)).toBe(50);
  });

  test('a batch that would eat into the reserve fails with no_space_left_on_device; searches go on', async () => {
    const engine = await open();
    await seed(engine);
    const big = payload(movies(4000, 1000)); // ~1.8 MiB: accepted as an upload, too big to index in what is left
    fillDisk(RESERVE_BYTES + big.data.length + 3 * MiB);
    const task = await engine.addDocuments('movies', big);
    const done = await engine.waitForTask(task.taskUid);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('no_space_left_on_device');
    expect(updateFiles()).toEqual([]);
    expect(await hits(engine)).toBe(50);
    // space freed: the same documents go in
    rmSync(filler);
    const again = await engine.addDocuments('movies', big);
    expect((await engine.waitForTask(again.taskUid)).status).toBe('succeeded');
    expect(await hits(engine)).toBe(4050);
  });

  test('a disk filled to the last byte during a commit fails the batch whole, no crash, nothing half-written', async () => {
    const marker = join(root, 'in-commit');
    await withCommitsHeld(marker, async () => {
      const engine = await open();
      await seed(engine);
      const done = await fillDiskDuringCommit(engine, marker);
      expect(done.status).toBe('failed');
      expect(done.error?.code).toBe('no_space_left_on_device');
      expect(await hits(engine)).toBe(50);
    });
  }, 60_000);

  test('a restart on a full disk with a pending task comes up serving reads; the task runs once space is back', async () => {
    let engine = await open();
    await seed(engine);
    await engine.close();
    engines.length = 0;
    // a task left enqueued by the previous run, then the disk fills up
    const paused = await Engine.open({ dbPath, logLevel: 'off', autoProcess: false });
    const pending = await paused.addDocuments('movies', payload(movies(500, 1000)));
    await paused.close();
    fillDisk(0);
    engine = await Engine.open({ dbPath, logLevel: 'off', searchThreads: 1 });
    engines.push(engine);
    expect(await hits(engine)).toBe(50);
    // as `search serve` answers: in a search thread, which opened its own read-only engine on the full disk
    const answered = JSON.parse((await engine.answer({ kind: 'search', uid: 'movies', body: { q: 'movie 7' } })).toString());
    expect(answered.hits[0].id).toBe(7);
    const failed = await engine.waitForTask(pending.taskUid, { timeoutMs: 3_000 }).catch(() => engine.getTask(pending.taskUid));
    // refused before it wrote anything: failed when the queue could record it, else still waiting
    expect(['failed', 'enqueued', 'processing']).toContain(failed.status);
    if (failed.status === 'failed') expect(failed.error?.code).toBe('no_space_left_on_device');
    expect(await hits(engine)).toBe(50);
    rmSync(filler);
    const retried = await engine.addDocuments('movies', payload(movies(500, 1000)));
    expect((await engine.waitForTask(retried.taskUid, { timeoutMs: 30_000 })).status).toBe('succeeded');
    expect(await hits(engine)).toBe(550);
  }, 90_000);

  test('payload files that no pending task names are removed at start', async () => {
    const engine = await open();
    await seed(engine);
    await engine.close();
    engines.length = 0;
    const orphan = join(dbPath, 'tasks', 'update_files', 'left-by-a-killed-upload.mpk');
    closeSync(openSync(orphan, 'w'));
    await open();
    expect(existsSync(orphan)).toBe(false);
  });
});

/**
 * A write side in a process of its own writes through a writable memory map, with the space a
 * batch may write into allocated on disk before its transaction (src/engine/index/writable-map.ts).
 */
describe.runIf(mounted)('on a 48 MiB tmpfs, with a write process and its writable map', () => {
  beforeAll(() => {
    process.env.SEARCH_WRITE_PROCESS = 'on';
  });
  afterAll(() => {
    delete process.env.SEARCH_WRITE_PROCESS;
  });

  /** The data file of the index: LMDB sizes it to the map (sparse) only with the writable map. */
  function dataFileSize(): number {
    const dir = join(dbPath, 'indexes');
    return statSync(join(dir, readdirSync(dir)[0]!, 'data.mdb')).size;
  }

  test('a disk filled to the last byte during a commit: the space set aside for the batch carries it; the database reopens whole', async () => {
    const marker = join(root, 'in-commit-mapped');
    await withCommitsHeld(marker, async () => {
      let engine = await open();
      await seed(engine);
      expect(dataFileSize()).toBeGreaterThanOrEqual(INITIAL_MAP_BYTES);
      const done = await fillDiskDuringCommit(engine, marker);
      expect(done.status).toBe('succeeded');
      expect(await hits(engine)).toBe(3050);
      await engine.close();
      engines.length = 0;
      rmSync(filler);
      engine = await open();
      expect(await hits(engine)).toBe(3050);
      expect((await engine.search('movies', { q: 'movie 3999' })).hits[0]).toMatchObject({ id: 3999 });
    });
  }, 60_000);

  test('the space a batch sets aside is allocated before its transaction; a disk that cannot hold it refuses with no_space_left_on_device', () => {
    expect(enableWritableMap(mnt, 'off')).toBe(false);
    expect(enableWritableMap(mnt)).toBe(true);
    disableWritableMap();
    const file = join(mnt, 'reserved.mdb');
    closeSync(openSync(file, 'w'));
    try {
      expectWrites(8 * MiB);
      new SpaceReservation(file).ensure(4096);
      // allocated on disk, the file's size kept (LMDB sizes it)
      expect(statSync(file).blocks * 512).toBeGreaterThanOrEqual(8 * MiB);
      expect(statSync(file).size).toBe(0);
      fillDisk(RESERVE_BYTES);
      expectWrites(2 * RESERVE_BYTES);
      let error: unknown;
      try {
        new SpaceReservation(file).ensure(16 * MiB);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(SearchError);
      expect((error as SearchError).code).toBe('no_space_left_on_device');
      expect((error as SearchError).message).toMatch(/could not set aside 32\.0 MiB on disk/);
    } finally {
      expectSmallWrites();
      rmSync(file, { force: true });
    }
  });
});

test('the write failures of a full disk are reported as no_space_left_on_device, wherever the disk is', () => {
  // LMDB reports a page it could not write in the system's words, without an errno code
  expect(toSearchError(new Error('No space left on device: Attempting to write page at position 94208, size 4096')).code).toBe('no_space_left_on_device');
  expect(toSearchError(Object.assign(new Error('write failed'), { code: 'ENOSPC' })).code).toBe('no_space_left_on_device');
  // an upload or batch larger than the free space is refused before it writes
  expect(() => ensureSpaceFor(tmpdir(), Number.MAX_SAFE_INTEGER, 'this payload')).toThrowError(/^No space left on device: this payload needs about/);
  expect(() => ensureSpaceFor(tmpdir(), 0, 'this payload')).not.toThrow();
});
