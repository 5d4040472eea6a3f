import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AuthEnv } from '../../src/engine/auth/auth-env.js';
import { Engine } from '../../src/engine/engine.js';
import { importDump } from '../../src/engine/ops/dump/import.js';
import { DumpReader } from '../../src/engine/ops/dump/reader.js';
import { Ops } from '../../src/engine/ops/service.js';
import { KEY, WEBHOOK, allDocuments, movies, populate, searches } from './helpers/fixture.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'dump-roundtrip-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('dump round trip through a fresh instance', () => {
  test('documents (with vectors), settings, keys, webhooks, tasks and batches come back identical', async () => {
    const source = join(root, 'source.ms');
    const engine = await Engine.open({ dbPath: source, logLevel: 'off' });
    const auth = AuthEnv.open(source);
    const ops = Ops.install(engine, { dumpDir: join(root, 'dumps'), auth });
    await populate(engine, auth, 400);

    // one document task left enqueued in the dump: it must come back enqueued, with its payload
    await engine.scheduler.stop();
    const pending = await engine.addDocuments('films', [{ id: 999_999_001, title: 'Imported Later' }]);
    const dumpTask = await ops.createDump();
    // the state the dump captures (the dump task changes nothing)
    const expected = {
      searches: await searches(engine),
      films: allDocuments(engine, 'films'),
      books: allDocuments(engine, 'books'),
      settings: { films: engine.getSettings('films'), books: engine.getSettings('books') },
      distribution: engine.indexStats('films').fieldDistribution,
      indexes: engine.listIndexes({}).results,
      tasks: engine.getTasks({ limit: 1000 }).results.filter((t) => t.uid !== dumpTask.taskUid && t.uid !== pending.taskUid),
      batches: engine.getBatches({ limit: 1000 }).results.filter((b) => b.stats.types.dumpCreation === undefined && b.finishedAt !== null),
    };
    engine.scheduler.start();
    const dumped = await engine.waitForTask(dumpTask.taskUid, { timeoutMs: 120_000 });
    expect(dumped.status).toBe('succeeded');
    const dumpUid = dumped.details!.dumpUid as string;
    expect(dumpUid).toMatch(/^\d{8}-\d{9}$/);
    const file = join(root, 'dumps', `${dumpUid}.dump`);
    expect(existsSync(file)).toBe(true);

    // keys are written as Meilisearch writes them (snake_case dates), so that it can import them
    const reader = await DumpReader.open(file);
    const keys = [];
    for await (const key of reader.keys()) keys.push(key);
    await reader.close();
    expect(keys.find((k) => k.uid === KEY.uid)).toEqual({
      uid: KEY.uid, name: KEY.name, description: KEY.description, actions: KEY.actions, indexes: KEY.indexes,
      expires_at: null, created_at: KEY.createdAt, updated_at: KEY.updatedAt,
    });

    await engine.waitForTask(pending.taskUid);
    await ops.close();
    await auth.close();
    await engine.close();

    const target = join(root, 'imported.ms');
    const logs: string[] = [];
    const result = await importDump(file, target, { chunkSize: 100, log: (m) => logs.push(m) });
    expect(result).toMatchObject({ outcome: 'imported', indexes: 2 });
    expect(logs.some((l) => /index `films`: 300 documents imported/.test(l))).toBe(true);

    const copy = await Engine.open({ dbPath: target, logLevel: 'off', autoProcess: false });
    const copyAuth = AuthEnv.open(target);
    try {
      expect(copy.instanceUid).toBe(engine.instanceUid);
      expect(copy.listIndexes({}).results).toEqual(expected.indexes);
      // field by field, vectors included
      const films = allDocuments(copy, 'films');
      expect(films.length).toBe(expected.films.length);
      films.forEach((doc, i) => expect(doc).toStrictEqual(expected.films[i]));
      expect(films.find((d) => d.id === movies[0]!.id)).toMatchObject({ year: 1901, _vectors: { glove: { embeddings: [expect.any(Array)], regenerate: false } } });
      expect(allDocuments(copy, 'books')).toStrictEqual(expected.books);
      expect({ films: copy.getSettings('films'), books: copy.getSettings('books') }).toStrictEqual(expected.settings);
      // same search results: keyword, filtered and sorted, vector
      const results = await searches(copy);
      expect((results[0] as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
      expect((results[2] as { hits: unknown[] }).hits.length).toBe(10);
      expect(results).toStrictEqual(expected.searches);
      expect(copy.indexStats('films').fieldDistribution).toEqual(expected.distribution);
      expect(copyAuth.keys.get(KEY.uid)).toEqual(KEY);
      expect(copyAuth.webhooks.get(WEBHOOK.uuid)).toEqual({ url: WEBHOOK.url, headers: WEBHOOK.headers });
      // finished tasks keep their uids, statuses, details and errors; batches too
      const tasks = copy.getTasks({ limit: 1000 }).results;
      for (const task of expected.tasks) expect(tasks.find((t) => t.uid === task.uid)).toEqual(task);
      expect(tasks.find((t) => t.uid === expected.tasks.find((e) => e.status === 'failed')!.uid)?.error?.code).toBe('invalid_document_id');
      const batches = copy.getBatches({ limit: 1000 }).results;
      for (const batch of expected.batches) expect(batches.find((b) => b.uid === batch.uid)).toEqual(batch);
      // the task that was enqueued at dump time is enqueued again, and runs
      const requeued = copy.getTask(pending.taskUid);
      expect(requeued).toMatchObject({ status: 'enqueued', type: 'documentAdditionOrUpdate', indexUid: 'films' });
      copy.scheduler.start();
      expect((await copy.waitForTask(pending.taskUid)).status).toBe('succeeded');
      expect(copy.getDocument('films', '999999001')).toEqual({ id: 999_999_001, title: 'Imported Later' });
      // new tasks continue the uid sequence
      const next = await copy.createIndex('after-import');
      expect(next.taskUid).toBeGreaterThan(Math.max(...tasks.map((t) => t.uid)));
    } finally {
      await copyAuth.close();
      await copy.close();
    }
  });

  test('a truncated dump leaves no database and no staging directory behind', async () => {
    const { truncate, stat } = await import('node:fs/promises');
    const source = join(root, 'small.ms');
    const engine = await Engine.open({ dbPath: source, logLevel: 'off' });
    const ops = Ops.install(engine, { dumpDir: join(root, 'dumps2') });
    await engine.waitForTask((await engine.addDocuments('films', movies.slice(0, 300))).taskUid);
    const task = await engine.waitForTask((await ops.createDump()).taskUid);
    await ops.close();
    await engine.close();
    const file = join(root, 'dumps2', `${task.details!.dumpUid}.dump`);
    await truncate(file, Math.floor((await stat(file)).size * 0.6));
    const parent = join(root, 'target-parent');
    const target = join(parent, 'db.ms');
    await expect(importDump(file, target)).rejects.toThrow(/cannot be imported: the archive is corrupt or truncated/);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(parent) ? readdirSync(parent) : []).toEqual([]);
    await expect(importDump(join(root, 'nope.dump'), target)).rejects.toThrow(/does not exist.*--ignore-missing-dump/);
    expect((await importDump(join(root, 'nope.dump'), target, { ignoreMissing: true })).outcome).toBe('skipped-missing');
    await expect(importDump(file, source)).rejects.toThrow(/already exists.*--ignore-dump-if-db-exists/);
    expect((await importDump(file, source, { ignoreIfDbExists: true })).outcome).toBe('skipped-db-exists');
  });
});
