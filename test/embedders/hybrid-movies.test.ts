/**
 * End to end, offline: films indexed through the Engine (document task, then a settings task
 * that configures the local huggingFace model and embeds the existing documents), searched with
 * a paraphrase that shares no telling word with the film's text. Keyword search alone does not
 * surface the film; hybrid search ranks it first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import type { Document } from '../../src/engine/types.js';
import { movies } from '../data.js';

const TARGETS = ['Groundhog Day', "Schindler's List"];
/** Films of 1993 with an extract: the first 60, plus the targets wherever they are. */
let cached: Document[] | undefined;
function films(): Document[] {
  if (cached) return cached;
  // The fixture keeps every film of 1993 with an extract: the same films as in the full data set.
  const of1993 = movies().filter((m) => m.extract && m.year === 1993);
  const picked = of1993.slice(0, 60);
  for (const m of of1993) if (TARGETS.includes(m.title as string) && !picked.includes(m)) picked.push(m);
  cached = picked.map(({ id, title, year, genres, extract }) => ({ id, title, year, genres, extract }));
  return cached;
}

describe('hybrid search with the offline local model on films', () => {
  let dir: string;
  let engine: Engine;
  const done = async (p: Promise<{ taskUid: number }>) => engine.waitForTask((await p).taskUid, { timeoutMs: 300_000 });
  const titles = (hits: Document[]) => hits.map((h) => h.title);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'search-hybrid-movies-'));
    engine = await Engine.open({ dbPath: dir, logLevel: 'off' });
    await done(engine.createIndex('movies', { primaryKey: 'id' }));
    expect((await done(engine.addDocuments('movies', films(), { method: 'replace' }))).status).toBe('succeeded');
    const settings = await done(
      engine.updateSettings('movies', {
        filterableAttributes: ['genres'],
        embedders: { local: { source: 'huggingFace', documentTemplate: 'A film titled {{doc.title}}. {{doc.extract}}', documentTemplateMaxBytes: 250 } },
      }),
    );
    expect(settings.error).toBeNull();
    expect(settings.status).toBe('succeeded');
  }, 300_000);

  afterAll(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('embedded every existing document when the embedder was configured', () => {
    const stats = engine.indexStats('movies');
    expect(stats.numberOfEmbeddedDocuments).toBe(films().length);
    expect(stats.numberOfEmbeddings).toBe(films().length);
    const doc = engine.getDocument('movies', '28162', { retrieveVectors: true }) as { _vectors: { local: { embeddings: number[][]; regenerate: boolean } } };
    expect(doc._vectors.local.regenerate).toBe(true);
    expect(doc._vectors.local.embeddings[0]).toHaveLength(512);
    expect(engine.getDocument('movies', '28162')._vectors).toBeUndefined();
  });

  it('finds the film from a paraphrase that keyword search misses', async () => {
    const q = 'a weather reporter stuck reliving the same date again and again';
    const keyword = await engine.search('movies', { q, limit: 10 });
    expect(keyword.hits).toHaveLength(10);
    expect(titles(keyword.hits)).not.toContain('Groundhog Day');

    const hybrid = await engine.search('movies', { q, limit: 10, hybrid: { embedder: 'local', semanticRatio: 0.5 }, showRankingScore: true });
    expect(hybrid.hits[0]!.title).toBe('Groundhog Day');
    expect(hybrid.semanticHitCount).toBeGreaterThan(0);
    expect(hybrid.hits[0]!._rankingScore).toBeGreaterThan(0.5);

    const semantic = await engine.search('movies', { q: 'an industrialist saves his Jewish workers from the Nazis', limit: 3, hybrid: { embedder: 'local', semanticRatio: 1 } });
    expect(titles(semantic.hits)).toContain("Schindler's List");
    expect(semantic.semanticHitCount).toBe(semantic.hits.length);
  }, 60_000);

  it('filters the semantic side and applies rankingScoreThreshold to hits and counts', async () => {
    const q = 'a weather reporter stuck reliving the same date again and again';
    const dramas = await engine.search('movies', { q, filter: 'genres = Drama', hybrid: { embedder: 'local', semanticRatio: 1 }, limit: 5 });
    expect(dramas.hits.length).toBeGreaterThan(0);
    for (const hit of dramas.hits) expect(hit.genres).toContain('Drama');
    expect(titles(dramas.hits)).not.toContain('Groundhog Day');

    const strict = await engine.search('movies', { q, hybrid: { embedder: 'local', semanticRatio: 1 }, rankingScoreThreshold: 0.66, showRankingScore: true, limit: 50 });
    expect(strict.hits.length).toBeGreaterThan(0);
    expect(strict.hits.length).toBeLessThan(films().length);
    for (const hit of strict.hits) expect(hit._rankingScore).toBeGreaterThanOrEqual(0.66);
    expect(strict.estimatedTotalHits).toBe(strict.hits.length);
  }, 60_000);

  it('serves /similar from the stored vectors', async () => {
    const similar = await engine.similar('movies', { id: 28162, embedder: 'local', limit: 5, showRankingScore: true });
    expect(similar.hits).toHaveLength(5);
    expect(titles(similar.hits)).not.toContain('Groundhog Day');
    const scores = similar.hits.map((h) => h._rankingScore as number);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('keeps vectors in sync on update and delete without re-embedding unchanged text', async () => {
    const before = engine.indexStats('movies').numberOfEmbeddings;
    expect((await done(engine.addDocuments('movies', [{ id: 28162, rating: 5 }], { method: 'update' }))).status).toBe('succeeded');
    expect(engine.indexStats('movies').numberOfEmbeddings).toBe(before);
    expect((await done(engine.deleteDocument('movies', '28162'))).status).toBe('succeeded');
    expect(engine.indexStats('movies').numberOfEmbeddings).toBe(before - 1);
    const q = 'a weather reporter stuck reliving the same date again and again';
    const after = await engine.search('movies', { q, hybrid: { embedder: 'local', semanticRatio: 1 }, limit: 5 });
    expect(titles(after.hits)).not.toContain('Groundhog Day');
  }, 60_000);
});
