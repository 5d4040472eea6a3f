import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { list as tarList } from 'tar';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AuthEnv } from '../../src/engine/auth/auth-env.js';
import { Engine } from '../../src/engine/engine.js';
import { Ops } from '../../src/engine/ops/service.js';
import { importSnapshot } from '../../src/engine/ops/snapshot/snapshot.js';
import type { Engine as EngineType } from '../../src/engine/engine.js';
import { KEY, WEBHOOK, allDocuments, movies, populate, searches } from './helpers/fixture.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'snapshot-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function drain(engine: EngineType): Promise<void> {
  for (const task of engine.getTasks({ statuses: ['enqueued', 'processing'], limit: 10_000 }).results) await engine.waitForTask(task.uid, { timeoutMs: 120_000 });
}

describe('snapshots', () => {
  test('a snapshot taken under concurrent writes opens and holds the same data', async () => {
    const source = join(root, 'data.ms');
    const engine = await Engine.open({ dbPath: source, logLevel: 'off' });
    const auth = AuthEnv.open(source);
    const ops = Ops.install(engine, { snapshotDir: join(root, 'snapshots'), auth });
    await populate(engine, auth, 300);

    // writers and readers keep going while the snapshot is taken
    let writing = true;
    let written = 0;
    const addedBy = new Map<number, Array<Record<string, unknown>>>(); // task uid -> documents it adds
    const writer = (async () => {
      let next = 1000;
      while (writing) {
        const slice = movies.slice(next, next + 20);
        const task = await engine.addDocuments('films', slice);
        addedBy.set(task.taskUid, slice);
        next += 20;
        written++;
        expect(engine.getDocuments('films', { limit: 5 }).results).toHaveLength(5);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await new Promise((r) => setTimeout(r, 50));
    const snapshotTask = await ops.createSnapshot();
    const done = await engine.waitForTask(snapshotTask.taskUid, { timeoutMs: 120_000 });
    await new Promise((r) => setTimeout(r, 50));
    writing = false;
    await writer;
    expect(done.status).toBe('succeeded');
    expect(written).toBeGreaterThan(2);
    const file = join(root, 'snapshots', 'data.ms.snapshot');
    expect(existsSync(file)).toBe(true);
    const entries: string[] = [];
    await tarList({ file, onReadEntry: (e) => { entries.push(e.path); } });
    expect(entries).toEqual(expect.arrayContaining(['VERSION', 'instance-uid', 'tasks/data.mdb', 'auth/data.mdb']));
    expect(entries.filter((e) => /^indexes\/[^/]+\/data\.mdb$/.test(e))).toHaveLength(2);
    // every environment is in it: tasks, auth and the two indexes
    const direct = await ops.snapshotNow(join(root, 'direct'));
    expect(direct.environments).toBe(4);

    await drain(engine);
    const expected = {
      searches: await searches(engine),
      films: allDocuments(engine, 'films'),
      books: allDocuments(engine, 'books'),
      settings: [engine.getSettings('films'), engine.getSettings('books')],
    };
    await ops.close();
    await auth.close();
    await engine.close();

    const restored = join(root, 'restored.ms');
    expect(await importSnapshot(file, restored)).toBe('imported');
    const copy = await Engine.open({ dbPath: restored, logLevel: 'off' });
    const copyAuth = AuthEnv.open(restored);
    try {
      // tasks that were enqueued when the snapshot was taken run again here
      await drain(copy);
      expect(copy.instanceUid).toBe(engine.instanceUid);
      // the snapshot holds the queue as it was: the tasks registered after it are not there;
      // replaying them here must give exactly the source's final state
      const lastUid = Math.max(...copy.getTasks({ limit: 10_000 }).results.map((t) => t.uid));
      const later = [...addedBy].filter(([uid]) => uid > lastUid).sort((a, b) => a[0] - b[0]);
      expect(later.length).toBeLessThan(addedBy.size);
      for (const [, docs] of later) await copy.waitForTask((await copy.addDocuments('films', docs)).taskUid);
      const films = allDocuments(copy, 'films');
      expect(films.length).toBe(expected.films.length);
      films.forEach((doc, i) => expect(doc).toStrictEqual(expected.films[i]));
      expect(allDocuments(copy, 'books')).toStrictEqual(expected.books);
      expect([copy.getSettings('films'), copy.getSettings('books')]).toStrictEqual(expected.settings);
      expect(await searches(copy)).toStrictEqual(expected.searches);
      expect(copyAuth.keys.get(KEY.uid)).toEqual(KEY);
      expect(copyAuth.webhooks.get(WEBHOOK.uuid)).toEqual({ url: WEBHOOK.url, headers: WEBHOOK.headers });
    } finally {
      await copyAuth.close();
      await copy.close();
    }

    await expect(importSnapshot(file, restored)).rejects.toThrow(/already exists.*--ignore-snapshot-if-db-exists/);
    expect(await importSnapshot(file, restored, { ignoreIfDbExists: true })).toBe('skipped-db-exists');
    expect(await importSnapshot(join(root, 'missing.snapshot'), join(root, 'x.ms'), { ignoreMissing: true })).toBe('skipped-missing');
  });
});
