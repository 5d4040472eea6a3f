import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SearchError } from '../../src/engine/errors.js';
import { AddressPolicy, setOutboundPolicy } from '../../src/engine/net/index.js';
import { updateEmbedders } from '../../src/engine/embedders/settings.js';
import { RoaringBitmap32 } from '../../src/engine/index/store.js';
import { hybridSearch, mergeRankings, parseSemanticParams, semanticRanking, type RankedHit, type Ranking } from '../../src/engine/search/hybrid.js';
import { similarDocuments } from '../../src/engine/search/similar.js';
import { presentVectors } from '../../src/engine/vector/extension.js';
import { defaultSettings } from '../../src/engine/settings/types.js';
import type { Document } from '../../src/engine/types.js';
import { Harness } from './harness.js';
import { startFakeProvider, type FakeProvider } from './fake-provider.js';

const settings = { ...defaultSettings(), embedders: updateEmbedders({}, { manual: { source: 'userProvided', dimensions: 2 } }) };
const hit = (docid: number, score: number): RankedHit => ({ docid, score, details: [] });

describe('parseSemanticParams', () => {
  const error = (body: Record<string, unknown>) => {
    try {
      parseSemanticParams(body, settings);
    } catch (e) {
      return e as SearchError;
    }
    throw new Error('expected an error');
  };

  it('reads hybrid with its default ratio and a vector', () => {
    expect(parseSemanticParams({ q: 'x' }, settings)).toBeNull();
    const parsed = parseSemanticParams({ hybrid: { embedder: 'manual' }, vector: [1, 0] }, settings)!;
    expect(parsed.semanticRatio).toBe(0.5);
    expect(Array.from(parsed.vector!)).toEqual([1, 0]);
  });

  it('rejects bad parameters with the reference codes', () => {
    expect(error({ vector: [1, 0] }).code).toBe('missing_search_hybrid');
    expect(error({ hybrid: { embedder: 'manual', semanticRatio: 1.5 } }).code).toBe('invalid_search_semantic_ratio');
    expect(error({ hybrid: { embedder: 'nope' } }).message).toBe('Cannot find embedder with name `nope`.');
    expect(error({ hybrid: { embedder: 'nope' } }).code).toBe('invalid_search_embedder');
    expect(error({ hybrid: 'manual' }).code).toBe('invalid_search_hybrid_query');
    expect(error({ hybrid: { embedder: 'manual' }, vector: [1, 0, 0] }).code).toBe('invalid_vector_dimensions');
    expect(error({ hybrid: { embedder: 'manual' }, vector: ['a'] }).code).toBe('invalid_search_vector');
    expect(error({ retrieveVectors: 'yes' }).code).toBe('invalid_search_retrieve_vectors');
  });
});

describe('mergeRankings', () => {
  it('weights scores by the ratio, deduplicates, and pages after deduplication', () => {
    const keyword = [hit(1, 1.0), hit(2, 0.6), hit(3, 0.2)];
    const semantic = [hit(9, 0.9), hit(2, 0.85), hit(8, 0.3)];
    // ratio 0.5: 1 (0.5) > 9 (0.45) > 2 (0.425, semantic copy) > 2 keyword (0.3, dup) > 8 (0.15) > 3 (0.1)
    const merged = mergeRankings(keyword, semantic, 0.5, 0, 10);
    expect(merged.hits.map((h) => h.docid)).toEqual([1, 9, 2, 8, 3]);
    expect(merged.semanticHitCount).toBe(3);
    const page = mergeRankings(keyword, semantic, 0.5, 1, 2);
    expect(page.hits.map((h) => h.docid)).toEqual([9, 2]);
    expect(page.semanticHitCount).toBe(2);
    // a high ratio favours the semantic list
    expect(mergeRankings(keyword, semantic, 0.9, 0, 2).hits.map((h) => h.docid)).toEqual([9, 2]);
  });

  it('applies a distinct predicate after deduplication', () => {
    const seen = new Set<number>();
    const byParity = (docid: number) => (seen.has(docid % 2) ? false : (seen.add(docid % 2), true));
    const merged = mergeRankings([hit(1, 1), hit(3, 0.9)], [hit(5, 0.95), hit(2, 0.5)], 0.5, 0, 10, byParity);
    expect(merged.hits.map((h) => h.docid)).toEqual([1, 2]);
  });

  it('keeps each list in its own order (keyword order may come from sort rules)', () => {
    const keyword = [hit(1, 0.2), hit(2, 0.9)];
    expect(mergeRankings(keyword, [], 0.5, 0, 10).hits.map((h) => h.docid)).toEqual([1, 2]);
  });
});

describe('hybrid and similar search on an index', () => {
  let h: Harness;
  let provider: FakeProvider;
  // 2-d vectors on a circle: angle decides similarity
  const at = (deg: number) => [Math.cos((deg * Math.PI) / 180), Math.sin((deg * Math.PI) / 180)];
  const docs: Document[] = [
    { id: 'a', genre: 'x', _vectors: { manual: at(0) } },
    { id: 'b', genre: 'y', _vectors: { manual: at(10) } },
    { id: 'c', genre: 'x', _vectors: { manual: at(60) } },
    { id: 'd', genre: 'y', _vectors: { manual: at(170) } },
    { id: 'e', genre: 'x' },
  ];

  beforeAll(async () => {
    process.env.SEARCH_EMBEDDER_RETRY_BASE_MS = '5';
    process.env.SEARCH_EMBEDDER_MAX_ATTEMPTS = '2';
    setOutboundPolicy(AddressPolicy.parse('127.0.0.1/32'));
    provider = await startFakeProvider(2);
  });
  afterAll(async () => {
    setOutboundPolicy(AddressPolicy.publicOnly());
    await provider.close();
  });
  beforeEach(async () => {
    h = new Harness();
    await h.setEmbedders(
      updateEmbedders({}, {
        manual: { source: 'userProvided', dimensions: 2 },
        remote: { source: 'rest', url: `${provider.url}/rest/single`, request: { query: { text: '{{text}}' } }, response: { output: { vector: '{{embedding}}' } }, dimensions: 2 },
      }),
    );
    provider.failures.length = 0;
    await h.add(docs);
  });
  afterEach(async () => h.close());

  const ids = (hits: RankedHit[]) => hits.map((x) => h.store.getDocument(x.docid)!.id);
  const keywordOnly = (ranked: string[], score = 0.8) => (): Ranking => ({
    hits: ranked.map((id) => ({ docid: h.docid(id), score, details: [] })),
    candidates: new RoaringBitmap32(ranked.map((id) => h.docid(id))),
  });

  it('ranks by similarity, honours filters and rankingScoreThreshold', async () => {
    const all = await semanticRanking(h.index, { embedder: 'manual', vector: Float32Array.from(at(5)), limit: 10 }, h.extension);
    expect(ids(all.hits)).toEqual(['a', 'b', 'c', 'd']);
    expect(all.hits[0]!.score).toBeGreaterThan(0.99);
    expect(all.hits[3]!.score).toBeLessThan(0.1);
    const genreX = new RoaringBitmap32([h.docid('a'), h.docid('c'), h.docid('e')]);
    const filtered = await semanticRanking(h.index, { embedder: 'manual', vector: Float32Array.from(at(5)), limit: 10, filter: genreX }, h.extension);
    expect(ids(filtered.hits)).toEqual(['a', 'c']);
    const threshold = await semanticRanking(h.index, { embedder: 'manual', vector: Float32Array.from(at(5)), limit: 10, rankingScoreThreshold: 0.75 }, h.extension);
    expect(ids(threshold.hits)).toEqual(['a', 'b', 'c']);
    expect(threshold.candidates.size).toBe(3);
  });

  it('semanticRatio 1 returns semantic hits only; 0 keyword hits only', async () => {
    const semantic = await hybridSearch(h.index, { q: 'anything', offset: 0, limit: 2, semantic: { embedder: 'manual', semanticRatio: 1, vector: Float32Array.from(at(55)) } }, keywordOnly(['e']), h.extension);
    expect(ids(semantic.hits)).toEqual(['c', 'b']);
    expect(semantic.semanticHitCount).toBe(2);
    const keyword = await hybridSearch(h.index, { q: 'anything', offset: 0, limit: 2, semantic: { embedder: 'manual', semanticRatio: 0, vector: Float32Array.from(at(55)) } }, keywordOnly(['e', 'd']), h.extension);
    expect(ids(keyword.hits)).toEqual(['e', 'd']);
    expect(keyword.semanticHitCount).toBe(0);
  });

  it('searches by vector alone when there is no query text', async () => {
    const result = await hybridSearch(h.index, { q: '', offset: 0, limit: 2, semantic: { embedder: 'manual', semanticRatio: 0.5, vector: Float32Array.from(at(170)) } }, keywordOnly(['e', 'a'], 1), h.extension);
    expect(ids(result.hits)).toEqual(['d', 'c']);
    expect(result.semanticHitCount).toBe(2);
  });

  it('merges both sides in between', async () => {
    const result = await hybridSearch(h.index, { q: 'q', offset: 0, limit: 3, semantic: { embedder: 'manual', semanticRatio: 0.5, vector: Float32Array.from(at(170)) } }, keywordOnly(['e', 'a'], 0.5), h.extension);
    expect(ids(result.hits)).toEqual(['d', 'e', 'a']);
    expect(result.semanticHitCount).toBe(1);
    expect(result.candidates.size).toBe(5);
  });

  it('skips the semantic side when keyword hits are good enough', async () => {
    provider.received.length = 0;
    const result = await hybridSearch(h.index, { q: 'q', offset: 0, limit: 2, semantic: { embedder: 'remote', semanticRatio: 0.5 } }, keywordOnly(['e', 'a'], 0.95), h.extension);
    expect(ids(result.hits)).toEqual(['e', 'a']);
    expect(provider.received).toHaveLength(0);
  });

  it('falls back to keyword results when the query cannot be embedded; semantic-only fails', async () => {
    provider.failures.push(503, 503);
    const result = await hybridSearch(h.index, { q: 'q', offset: 0, limit: 2, semantic: { embedder: 'remote', semanticRatio: 0.5 } }, keywordOnly(['e'], 0.3), h.extension);
    expect(ids(result.hits)).toEqual(['e']);
    expect(result.semanticHitCount).toBe(0);
    provider.failures.push(503, 503);
    const error = await hybridSearch(h.index, { q: 'q', offset: 0, limit: 2, semantic: { embedder: 'remote', semanticRatio: 1 } }, keywordOnly(['e']), h.extension).catch((e) => e);
    expect(error).toBeInstanceOf(SearchError);
    expect(error.code).toBe('vector_embedding_error');
  });

  const index = () => ({
    store: h.store,
    settings: h.store.settings,
    filterDocids: (filter: unknown) => {
      const [, value] = String(filter).split(' = ');
      const out = new RoaringBitmap32();
      for (const { key, value: doc } of h.store.documents.getRange()) if (doc.genre === value) out.add(key);
      return out;
    },
    present: (docid: number, doc: Document, fields: readonly string[] | null | undefined, retrieveVectors = false) => {
      const shown = presentVectors(h.extension, { store: h.store, settings: h.store.settings }, docid, doc, { retrieveVectors });
      return fields ? Object.fromEntries(Object.entries(shown).filter(([k]) => fields.includes(k) || k === '_vectors')) : shown;
    },
  });

  it('/similar returns the nearest documents except the target, with filters and scores', async () => {
    const response = await similarDocuments(index(), { id: 'a', embedder: 'manual', showRankingScore: true }, h.extension);
    expect(response.hits.map((x) => x.id)).toEqual(['b', 'c', 'd']);
    expect(response.hits[0]!._rankingScore).toBeGreaterThan(0.99);
    expect(response).toMatchObject({ id: 'a', offset: 0, limit: 20 });
    const filtered = await similarDocuments(index(), { id: 'a', embedder: 'manual', filter: 'genre = y', attributesToRetrieve: ['id'], limit: 1, showRankingScoreDetails: true }, h.extension);
    expect(filtered.hits).toEqual([{ id: 'b', _rankingScoreDetails: { vectorSort: { order: 0, similarity: expect.any(Number) } } }]);
    const threshold = await similarDocuments(index(), { id: 'a', embedder: 'manual', rankingScoreThreshold: 0.5 }, h.extension);
    expect(threshold.hits.map((x) => x.id)).toEqual(['b', 'c']);
    const withVectors = await similarDocuments(index(), { id: 'a', embedder: 'manual', limit: 1, retrieveVectors: true }, h.extension);
    expect((withVectors.hits[0]!._vectors as any).manual.regenerate).toBe(false);
  });

  it('/similar errors', async () => {
    const err = (body: unknown) => similarDocuments(index(), body, h.extension).catch((e) => e as SearchError);
    expect((await err({ id: 'zzz', embedder: 'manual' })).code).toBe('not_found_similar_id');
    expect((await err({ id: 'zzz', embedder: 'manual' })).status).toBe(400);
    expect((await err({ id: 'a', embedder: 'nope' })).code).toBe('invalid_similar_embedder');
    expect((await err({ id: 'a b', embedder: 'manual' })).code).toBe('invalid_similar_id');
    expect((await err({ id: 'a', embedder: 'manual', limit: -1 })).code).toBe('invalid_similar_limit');
    expect((await err({ id: 'a', embedder: 'manual', rankingScoreThreshold: 2 })).code).toBe('invalid_similar_ranking_score_threshold');
    expect((await err({ embedder: 'manual' })).code).toBe('bad_request');
  });
});

describe('distribution', () => {
  it('maps the described score distribution onto mean 0.5 and sigma 0.4, clamped to ]0, 1]', async () => {
    const { shiftScore } = await import('../../src/engine/embedders/distribution.js');
    expect(shiftScore(0.8, undefined)).toBe(0.8);
    const d = { mean: 0.7, sigma: 0.1 };
    expect(shiftScore(0.7, d)).toBeCloseTo(0.5);
    expect(shiftScore(0.8, d)).toBeCloseTo(0.9);
    expect(shiftScore(0.95, d)).toBe(1);
    expect(shiftScore(0.2, d)).toBe(Number.EPSILON);
  });
});
