import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { Ops, type OpsOptions } from '../../src/engine/ops/service.js';
import { importSnapshot } from '../../src/engine/ops/snapshot/snapshot.js';
import { checkDatabaseVersion } from '../../src/engine/ops/version/check.js';
import { UpgradeJournal } from '../../src/engine/ops/version/journal.js';
import type { Task } from '../../src/engine/types.js';
import { rawState } from './helpers/raw-state.js';
import { writeV090Database } from './helpers/old-db.js';
import { upgradeLocal } from '../../src/engine/ops/procedures.js';

const FIXTURE = 'fixtures/db-v0.9.0.snapshot';

let root: string;
let db: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'upgrade-'));
  db = join(root, 'data.ms');
  expect(await importSnapshot(FIXTURE, db)).toBe('imported');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/**
 * Index environments and VERSION only: the task queue legitimately records the upgrade task.
 * Empty named databases are left out: opening an index creates the (empty) databases of the
 * extensions of this build, which holds no data.
 */
function dataState(path: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(rawState(path)).filter(([k, v]) => (k.startsWith('indexes/') && !v.startsWith('0:')) || k === 'VERSION'),
  );
}

async function openForUpgrade(options: OpsOptions = {}) {
  const status = checkDatabaseVersion(db, { dumplessUpgrade: true });
  expect(status).toEqual({ kind: 'upgrade', from: '0.9.0', to: '1.4.0' });
  const engine = await Engine.open({ dbPath: db, logLevel: 'off', skipVersionCheck: true });
  const ops = Ops.install(engine, options);
  const task = await ops.enqueueUpgrade(status.kind === 'upgrade' ? status.from : '');
  return { engine, ops, upgradeUid: task!.taskUid };
}

function distributionOf(docs: Array<Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of docs) for (const k of Object.keys(d)) out[k] = (out[k] ?? 0) + 1;
  return out;
}


/**
 * The fixture was written by the 1.0.0 keyword layout (one key per word and field, per word and
 * position bucket, per word id): after the upgrade every search, with its ranking details (which
 * read the converted per-word records: attribute rank, word position, exactness), equals the
 * same search on a fresh index of the same documents and settings.
 */
async function expectSameSearchesAsFreshIndexes(upgraded: Engine, uids: string[]): Promise<void> {
  const freshRoot = await mkdtemp(join(tmpdir(), 'upgrade-fresh-'));
  const fresh = await Engine.open({ dbPath: join(freshRoot, 'db'), logLevel: 'off' });
  try {
    for (const uid of uids) {
      const docs = upgraded.getDocuments(uid, { limit: 10_000 }).results;
      const primaryKey = upgraded.getIndex(uid).primaryKey!;
      await fresh.waitForTask((await fresh.addDocuments(uid, docs, { primaryKey })).taskUid);
      await fresh.waitForTask((await fresh.updateSettings(uid, upgraded.getSettings(uid))).taskUid);
      // Queries from the documents' own words: the first words of string fields, one and two words.
      const queries = new Set<string>();
      for (const doc of docs.slice(0, 40)) {
        const text = Object.values(doc).filter((v): v is string => typeof v === 'string').join(' ');
        const words = text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 3);
        if (words[0]) queries.add(words[0]);
        if (words.length > 2) queries.add(`${words[1]} ${words[2]}`);
      }
      expect(queries.size).toBeGreaterThan(20);
      for (const q of queries) {
        const query = { q, limit: 20, showRankingScoreDetails: true, attributesToRetrieve: [primaryKey] };
        const a = await upgraded.search(uid, query);
        const b = await fresh.search(uid, query);
        expect({ uid, q, hits: a.hits }).toEqual({ uid, q, hits: b.hits });
      }
    }
  } finally {
    await fresh.close();
    await rm(freshRoot, { recursive: true, force: true });
  }
}

describe('dumpless upgrade of a 0.9.0 database', () => {
  test('a 0.9.0 database is refused without the flag, then upgraded; reads and searches keep working, new tasks wait', async () => {
    // written now by the 0.9.0 procedure, so that searches run today's code on today's layout
    await rm(db, { recursive: true, force: true });
    await writeV090Database(db);
    expect(() => checkDatabaseVersion(db)).toThrow(/storage format 0\.9\.0 but this binary uses storage format 1\.4\.0.*--experimental-dumpless-upgrade/);
    const { engine, ops, upgradeUid } = await openForUpgrade({ upgradeDelayPerIndexMs: 60 });
    try {
      // a write registered during the upgrade waits for it
      const write = await engine.addDocuments('books', [{ isbn13: 1234567890123, title: 'After the upgrade' }]);
      // reads and searches answer while the upgrade runs
      expect(engine.getDocuments('books', { limit: 3 }).results).toHaveLength(3);
      const during = await engine.search('books', { q: 'harry potter', limit: 5 });
      expect(during.hits.length).toBeGreaterThan(0);
      expect(engine.getTask(upgradeUid).status).not.toBe('succeeded');
      expect(engine.getTasks({ types: ['upgradeDatabase'] }).results.map((t) => t.uid)).toEqual([upgradeUid]);
      const upgraded = await engine.waitForTask(upgradeUid, { timeoutMs: 60_000 });
      expect(upgraded).toMatchObject({ status: 'succeeded', type: 'upgradeDatabase', details: { upgradeFrom: 'v0.9.0', upgradeTo: 'v1.4.0' } });
      const after = await engine.waitForTask(write.taskUid);
      expect(after.status).toBe('succeeded');
      expect(Date.parse(after.startedAt!)).toBeGreaterThanOrEqual(Date.parse(upgraded.finishedAt!));
      expect(readFileSync(join(db, 'VERSION'), 'utf8').trim()).toBe('1.4.0');
      expect(UpgradeJournal.exists(db)).toBe(false);
      // the upgrade step's work: the distribution is stored and right (the extra book included)
      const all = engine.getDocuments('books', { limit: 10_000 }).results;
      expect(all.length).toBeGreaterThan(200);
      expect(engine.indexStats('books').fieldDistribution).toEqual(distributionOf(all));
      expect(engine.indexStats('restaurants').numberOfDocuments).toBe(200);
      expect(engine.indexStats('restaurants').fieldDistribution).toEqual(distributionOf(engine.getDocuments('restaurants', { limit: 1000 }).results));
      expect(checkDatabaseVersion(db)).toEqual({ kind: 'current', version: '1.4.0' });
      expect((await engine.search('books', { q: 'harry potter', limit: 5 })).hits).toEqual(during.hits);
    } finally {
      await ops.close();
      await engine.close();
    }
  });

  test('the committed fixture (fixtures/db-v0.9.0.snapshot) upgrades', async () => {
    const { engine, ops, upgradeUid } = await openForUpgrade();
    try {
      expect((await engine.waitForTask(upgradeUid, { timeoutMs: 60_000 })).status).toBe('succeeded');
      for (const uid of ['books', 'movies', 'restaurants'])
        expect(engine.indexStats(uid).fieldDistribution).toEqual(distributionOf(engine.getDocuments(uid, { limit: 10_000 }).results));
      await expectSameSearchesAsFreshIndexes(engine, ['books', 'movies', 'restaurants']);
    } finally {
      await ops.close();
      await engine.close();
    }
  });

  test('a failed upgrade holds the queue; canceling it restores the exact pre-upgrade data and version', async () => {
    const before = dataState(db);
    const { engine, ops, upgradeUid } = await openForUpgrade({ upgradeFailAfterIndexes: 2 });
    let write: Task;
    try {
      const failed = await engine.waitForTask(upgradeUid, { timeoutMs: 60_000 });
      expect(failed.status).toBe('failed');
      expect(failed.error?.message).toMatch(/Injected fault after 2/);
      expect(UpgradeJournal.exists(db)).toBe(true);
      const pending = await engine.addDocuments('books', [{ isbn13: 1, title: 'held' }]);
      await new Promise((r) => setTimeout(r, 300));
      expect(engine.getTask(pending.taskUid).status).toBe('enqueued'); // held while the database is half-upgraded
      const cancel = await engine.cancelTasks({ uids: [upgradeUid] });
      expect((await engine.waitForTask(cancel.taskUid)).status).toBe('succeeded');
      expect(engine.getTask(upgradeUid)).toMatchObject({ status: 'canceled', canceledBy: cancel.taskUid });
      write = engine.getTask(pending.taskUid);
    } finally {
      await ops.close();
      await engine.close();
    }
    expect(write.status).toBe('enqueued'); // still held: the database is 0.9.0 again
    expect(dataState(db)).toEqual(before);
    expect(readFileSync(join(db, 'VERSION'), 'utf8')).toBe('0.9.0\n');
    expect(UpgradeJournal.exists(db)).toBe(false);
  });

  test('canceling a running upgrade rolls it back byte for byte', async () => {
    const before = dataState(db);
    const { engine, ops, upgradeUid } = await openForUpgrade({ upgradeDelayPerIndexMs: 400 });
    try {
      while (!UpgradeJournal.exists(db) || new UpgradeJournal_(db).entries() < 1) await new Promise((r) => setTimeout(r, 10));
      const cancel = await engine.cancelTasks({ uids: [upgradeUid] });
      expect((await engine.waitForTask(cancel.taskUid)).status).toBe('succeeded');
      expect(engine.getTask(upgradeUid).status).toBe('canceled');
    } finally {
      await ops.close();
      await engine.close();
    }
    expect(dataState(db)).toEqual(before);
  });

  test('search upgrade (procedure): a timeout cancels the upgrade, waits for the rollback and verifies it', async () => {
    const before = dataState(db);
    process.env.SEARCH_TEST_UPGRADE_DELAY_MS = '1500';
    const steps: string[] = [];
    try {
      const report = await upgradeLocal({ dbPath: db, snapshotDir: join(root, 'snaps'), timeoutMs: 300, onStep: (s) => steps.push(s) });
      expect(report).toMatchObject({ outcome: 'rolled-back', from: '0.9.0', verified: { version: '0.9.0', journal: false } });
      expect(report.error).toMatch(/Timed out/);
      expect(existsSync(report.snapshot!)).toBe(true);
    } finally {
      delete process.env.SEARCH_TEST_UPGRADE_DELAY_MS;
    }
    expect(steps.some((s) => /rolling back/.test(s))).toBe(true);
    expect(dataState(db)).toEqual(before);
  });

  test('killing the process during the upgrade is recoverable: the next start rolls back and upgrades again', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, db], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SEARCH_TEST_UPGRADE_DELAY_MS: '500' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const deadline = Date.now() + 30_000;
    while (!(UpgradeJournal.exists(db) && new UpgradeJournal_(db).entries() >= 1)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the upgrade never started: ${stderr}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(readFileSync(join(db, 'VERSION'), 'utf8').trim()).toBe('0.9.0'); // not finished

    // restart: the interrupted upgrade is detected without any flag and resumed
    const status = checkDatabaseVersion(db);
    expect(status).toEqual({ kind: 'upgrade', from: '0.9.0', to: '1.4.0' });
    // processors are installed before the scheduler starts, so the recovered task finds them
    const engine = await Engine.open({ dbPath: db, logLevel: 'off', skipVersionCheck: true, autoProcess: false });
    const ops = Ops.install(engine);
    engine.scheduler.start();
    try {
      expect(await ops.enqueueUpgrade('0.9.0')).toBeNull(); // the interrupted task is still there
      const [task] = engine.getTasks({ types: ['upgradeDatabase'] }).results;
      const done = await engine.waitForTask(task!.uid, { timeoutMs: 60_000 });
      expect(done.status).toBe('succeeded');
      expect(engine.indexStats('books').fieldDistribution).toEqual(distributionOf(engine.getDocuments('books', { limit: 10_000 }).results));
      expect(readFileSync(join(db, 'VERSION'), 'utf8').trim()).toBe('1.4.0');
      expect(UpgradeJournal.exists(db)).toBe(false);
    } finally {
      await ops.close();
      await engine.close();
    }
  });
});

/** Count the journal's entries (the class keeps the file format private to ops). */
class UpgradeJournal_ {
  constructor(private readonly dbPath: string) {}
  entries(): number {
    return UpgradeJournal.open(this.dbPath)?.entries().length ?? 0;
  }
}

/** The child: open with the upgrade flag, as `search serve --experimental-dumpless-upgrade` does, from the built code. */
const CHILD = `
const db = process.argv[1];
const { Engine } = await import('${join(process.cwd(), 'dist/src/engine/engine.js')}');
const { Ops } = await import('${join(process.cwd(), 'dist/src/engine/ops/service.js')}');
const engine = await Engine.open({ dbPath: db, logLevel: 'off', skipVersionCheck: true, autoProcess: false });
const ops = Ops.install(engine);
engine.scheduler.start();
await ops.enqueueUpgrade('0.9.0');
setInterval(() => {}, 1000);
`;
