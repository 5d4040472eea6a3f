/**
 * The warm-up an engine runs when it opens (Engine.warm, search/warm-queries.ts): keyword searches
 * made from each index's words, answers dropped. What users see: the same answers as an engine
 * that did not warm, and an engine that closes while warming closes cleanly.
 */
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { warmQueries } from '../../src/engine/search/warm-queries.js';
import { tempEngine } from './helpers.js';

const MOVIES = [
  { id: 1, title: 'Star Wars', overview: 'A farm boy joins the rebellion against the galactic empire' },
  { id: 2, title: 'The Empire Strikes Back', overview: 'The rebels flee the empire across the galaxy' },
  { id: 3, title: 'Return of the Jedi', overview: 'The rebellion attacks the second death star' },
  { id: 4, title: 'Star Trek', overview: 'The crew of the starship enterprise explores space' },
  { id: 5, title: 'Galaxy Quest', overview: 'Actors from a space show are taken for real heroes' },
];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A database holding `MOVIES` in index `movies`, closed; its path. */
async function movieDatabase(): Promise<string> {
  const { engine, dbPath } = await tempEngine();
  dirs.push(dbPath);
  const task = await engine.addDocuments('movies', MOVIES, { primaryKey: 'id' });
  expect((await engine.waitForTask(task.taskUid)).status).toBe('succeeded');
  await engine.close();
  return dbPath;
}

const QUERIES = ['star', 'sta', 's', 'the empire', 'the emp', 'galxy', 'rebellion star'];

async function answers(engine: Engine): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const body = (await engine.answer({ kind: 'search', uid: 'movies', body: { q, showRankingScore: true } })).toString();
    out.push(body.replace(/"processingTimeMs":\d+/, ''));
  }
  return out;
}

describe('engine warm-up at open', () => {
  it('makes its queries from the index words: a word, its prefix, two words, a typo, a first letter', async () => {
    const dbPath = await movieDatabase();
    const engine = await Engine.open({ dbPath, logLevel: 'off', warm: false });
    try {
      const queries = warmQueries(engine.indexes.get('movies')).map((body) => body.q);
      expect(queries.length).toBeGreaterThan(10);
      expect(queries).toContain('empire');
      expect(queries).toContain('emp');
      expect(queries.some((q) => q.startsWith('empire '))).toBe(true);
      expect(queries.some((q) => q.length === 1)).toBe(true);
    } finally {
      await engine.close();
    }
  });

  it('answers exactly as an engine that did not warm', async () => {
    const dbPath = await movieDatabase();
    const cold = await Engine.open({ dbPath, logLevel: 'off', warm: false });
    const expected = await answers(cold);
    await cold.close();
    const warmed = await Engine.open({ dbPath, logLevel: 'off', warm: true });
    try {
      // searches sent at once interleave with the warm-up; later ones after it
      expect(await answers(warmed)).toEqual(expected);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await answers(warmed)).toEqual(expected);
      expect(warmed.getTasks({}).results.every((t) => t.status === 'succeeded')).toBe(true);
    } finally {
      await warmed.close();
    }
  });

  it('closes cleanly while warming', async () => {
    const dbPath = await movieDatabase();
    for (let i = 0; i < 3; i++) {
      const engine = await Engine.open({ dbPath, logLevel: 'off', warm: true });
      await engine.close();
    }
    const engine = await Engine.open({ dbPath, logLevel: 'off', warm: false });
    try {
      expect(engine.indexStats('movies').numberOfDocuments).toBe(MOVIES.length);
    } finally {
      await engine.close();
    }
  });
});

describe('engine warm-up after a commit', () => {
  it('answers searches during and after it as an engine that does not warm', async () => {
    const { engine: cold, dbPath: coldPath } = await tempEngine({ warm: false });
    dirs.push(coldPath);
    const warmPath = `${coldPath}-warm`;
    dirs.push(warmPath);
    const warmed = await Engine.open({ dbPath: warmPath, logLevel: 'off', warm: true, warmAfterCommit: true });
    try {
      for (const engine of [cold, warmed]) {
        const task = await engine.addDocuments('movies', MOVIES.slice(0, 3), { primaryKey: 'id' });
        expect((await engine.waitForTask(task.taskUid)).status).toBe('succeeded');
      }
      // the warm-up of the first commit is under way: searches interleave with it
      expect(await answers(warmed)).toEqual(await answers(cold));
      for (const engine of [cold, warmed]) {
        const task = await engine.addDocuments('movies', MOVIES.slice(3), { primaryKey: 'id' });
        expect((await engine.waitForTask(task.taskUid)).status).toBe('succeeded');
      }
      expect(await answers(warmed)).toEqual(await answers(cold));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await answers(warmed)).toEqual(await answers(cold));
    } finally {
      await cold.close();
      await warmed.close();
    }
  });

  it('lets an index be deleted and the engine close while it warms', async () => {
    const { engine, dbPath } = await tempEngine({ warm: true, warmAfterCommit: true });
    dirs.push(dbPath);
    const added = await engine.addDocuments('movies', MOVIES, { primaryKey: 'id' });
    expect((await engine.waitForTask(added.taskUid)).status).toBe('succeeded');
    const deleted = await engine.deleteIndex('movies');
    expect((await engine.waitForTask(deleted.taskUid)).status).toBe('succeeded');
    const again = await engine.addDocuments('movies', MOVIES.slice(0, 2), { primaryKey: 'id' });
    expect((await engine.waitForTask(again.taskUid)).status).toBe('succeeded');
    await engine.close();
    const reopened = await Engine.open({ dbPath, logLevel: 'off', warm: false });
    try {
      expect(reopened.indexStats('movies').numberOfDocuments).toBe(2);
    } finally {
      await reopened.close();
    }
  });
});

describe('engine warm-up once, in idle time (warmCodeOnce, as in a server search thread)', () => {
  it('answers searches sent during and after it as an engine that does not warm, and closes cleanly while it waits for idle time', async () => {
    const { engine: cold, dbPath: coldPath } = await tempEngine({ warm: false });
    dirs.push(coldPath);
    const warmPath = `${coldPath}-warm`;
    dirs.push(warmPath);
    const warmed = await Engine.open({ dbPath: warmPath, logLevel: 'off', warm: true, warmCodeOnce: true });
    try {
      for (const engine of [cold, warmed]) {
        const task = await engine.addDocuments('movies', MOVIES.slice(0, 3), { primaryKey: 'id' });
        expect((await engine.waitForTask(task.taskUid)).status).toBe('succeeded');
      }
      // searches one after another: the warm-up waits for a pause
      expect(await answers(warmed)).toEqual(await answers(cold));
      // a pause: the warm-up runs, then searches interleave with what is left of it
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await answers(warmed)).toEqual(await answers(cold));
      for (const engine of [cold, warmed]) {
        const task = await engine.addDocuments('movies', MOVIES.slice(3), { primaryKey: 'id' });
        expect((await engine.waitForTask(task.taskUid)).status).toBe('succeeded');
      }
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await answers(warmed)).toEqual(await answers(cold));
    } finally {
      await cold.close();
      await warmed.close();
    }
  });
});
