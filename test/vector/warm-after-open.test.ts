/**
 * The warm-up at `Engine.open` (engine.ts `warm`): every index's vector graphs are loaded and
 * searched once (`open` waits for that, `warmWaitMs` at most), then keyword searches run in the
 * background. It must change no answer, and an engine closed while it runs must close cleanly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { baseSubset, DIM, queries } from './glove.js';

describe('warm-up after open', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vector-warm-'));
  const vectors = baseSubset(3000);
  const qs = queries(20);

  const search = (engine: Engine, q: Float32Array) =>
    engine.search('glove', { vector: Array.from(q), hybrid: { embedder: 'default', semanticRatio: 1 }, limit: 10, showRankingScore: true });
  const answers = async (engine: Engine) => Promise.all(qs.map(async (q) => (await search(engine, q)).hits.map((h) => [h.id, h._rankingScore])));

  beforeAll(async () => {
    const engine = await Engine.open({ dbPath: dir, logLevel: 'off' });
    const done = async (p: Promise<{ taskUid: number }>) => {
      const task = await engine.waitForTask((await p).taskUid, { timeoutMs: 60_000 });
      expect(task.status).toBe('succeeded');
    };
    await done(engine.createIndex('glove', { primaryKey: 'id' }));
    await done(engine.createIndex('empty', { primaryKey: 'id' }));
    await done(engine.updateSettings('glove', { embedders: { default: { source: 'userProvided', dimensions: DIM } } }));
    await done(engine.addDocuments('glove', vectors.map((v, id) => ({ id, _vectors: { default: Array.from(v) } })), { method: 'replace' }));
    await engine.close();
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('answers are the same with and without it, before and after it has run', async () => {
    const cold = await Engine.open({ dbPath: dir, logLevel: 'off', warm: false });
    const expected = await answers(cold);
    await cold.close();
    expect(expected[0]![0]![0]).toBeDefined();

    const early = await Engine.open({ dbPath: dir, logLevel: 'off' });
    expect(await answers(early)).toEqual(expected);
    await early.close();

    const late = await Engine.open({ dbPath: dir, logLevel: 'off' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await answers(late)).toEqual(expected);
    await late.close();
  }, 60_000);

  test('open waits for the vector warm-up by default, or not at all with warmWaitMs 0: same answers', async () => {
    const cold = await Engine.open({ dbPath: dir, logLevel: 'off', warm: false });
    const expected = await answers(cold);
    await cold.close();
    for (const warmWaitMs of [0, undefined, 60_000]) {
      const engine = await Engine.open({ dbPath: dir, logLevel: 'off', ...(warmWaitMs === undefined ? {} : { warmWaitMs }) });
      expect(await answers(engine)).toEqual(expected);
      await engine.close();
    }
    // the empty index and a database without vectors open as before
    const other = mkdtempSync(join(tmpdir(), 'vector-warm-none-'));
    try {
      const engine = await Engine.open({ dbPath: other, logLevel: 'off', warmWaitMs: 60_000 });
      expect(engine.indexes.uids()).toEqual([]);
      await engine.close();
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 60_000);

  test('an engine closed while it warms up closes cleanly', async () => {
    for (let i = 0; i < 3; i++) {
      const engine = await Engine.open({ dbPath: dir, logLevel: 'off' });
      await engine.close();
    }
    const engine = await Engine.open({ dbPath: dir, logLevel: 'off' });
    expect((await search(engine, qs[0]!)).hits).toHaveLength(10);
    await engine.close();
  }, 60_000);
});
