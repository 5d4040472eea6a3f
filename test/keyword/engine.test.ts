import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { movies as moviesData } from '../data.js';

let engine: Engine;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kw-engine-'));
  engine = await Engine.open({ dbPath: join(dir, 'data.ms'), logLevel: 'off' } as never);
  const movies = moviesData().slice(-2000);
  const task = await engine.addDocuments('movies', movies, { primaryKey: 'id', method: 'replace' });
  expect((await engine.waitForTask(task.taskUid, { timeoutMs: 120_000 })).status).toBe('succeeded');
}, 180_000);
afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('keyword search through the Engine', () => {
  it('searches documents added through the task queue', async () => {
    const r = (await engine.search('movies', { q: 'avngers endgme', limit: 3 })) as { hits: Array<{ title: string }> };
    expect(r.hits[0]!.title).toBe('Avengers: Endgame');
  });
  it('re-indexes on a settings task: searchableAttributes, stop words, synonyms and ranking', async () => {
    const task = await engine.updateSettings('movies', {
      searchableAttributes: ['title'],
      synonyms: { marvel: ['avengers'] },
      sortableAttributes: ['year'],
      filterableAttributes: ['year'],
    });
    expect((await engine.waitForTask(task.taskUid, { timeoutMs: 120_000 })).status).toBe('succeeded');
    const byTitle = (await engine.search('movies', { q: 'Chris Evans', matchingStrategy: 'all' })) as { estimatedTotalHits: number };
    expect(byTitle.estimatedTotalHits).toBe(0); // cast is no longer searchable
    const synonym = (await engine.search('movies', { q: 'marvel', limit: 50 })) as { hits: Array<{ title: string }> };
    expect(synonym.hits.map((h) => h.title)).toContain('Avengers: Endgame');
    const sorted = (await engine.search('movies', { q: 'avengers', sort: ['year:desc'], filter: 'year < 2019', limit: 5 })) as { hits: Array<{ title: string; year: number }> };
    expect(sorted.hits.length).toBeGreaterThan(0);
    for (const h of sorted.hits) expect(h.year).toBeLessThan(2019);
    expect(sorted.hits.map((h) => h.year)).toEqual([...sorted.hits.map((h) => h.year)].sort((a, b) => b - a));
  });
  it('refuses an invalid settings patch before enqueuing', async () => {
    await expect(engine.updateSettings('movies', { rankingRules: ['wrods'] })).rejects.toMatchObject({ code: 'invalid_settings_ranking_rules' });
  });
});
