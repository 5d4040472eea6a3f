/**
 * The `distance` of an embedder (our extension to the reference's settings) over HTTP: accepted
 * values and errors, ranking by that metric, `_rankingScore` per metric, and a change of metric
 * re-linking the stored vectors without losing them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosineSimilarity, gloveOfVariedLength, gloveQueries } from '../data.js';
import { expectErrorShape, startHarness, type Harness } from './harness.js';

const N = 600;
/** GloVe rows given lengths in [0.5, 2) so that cosine, euclidean and dot disagree. */
const vectors = gloveOfVariedLength(N);
const query = Array.from(gloveQueries(1)[0]!);

const metrics: Record<string, (a: number[], b: number[]) => number> = {
  cosine: (a, b) => 1 - cosineSimilarity(a, b),
  euclidean: (a, b) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]!) ** 2, 0)),
  dot: (a, b) => -a.reduce((s, x, i) => s + x * b[i]!, 0),
  hamming: (a, b) => a.reduce((s, x, i) => s + (x > 0 !== b[i]! > 0 ? 1 : 0), 0),
};

/** The documented `_rankingScore` of a distance under each metric. */
const scores: Record<string, (d: number) => number> = {
  cosine: (d) => 1 - d / 2,
  euclidean: (d) => 1 / (1 + d),
  dot: (d) => Math.min(1, Math.max(0, (1 - d) / 2)),
  hamming: (d) => 1 - d / 100,
};

function exact(metric: string, limit: number): Array<{ id: number; distance: number }> {
  return vectors
    .map((v, id) => ({ id, distance: metrics[metric]!(query, v) }))
    .sort((a, b) => a.distance - b.distance || a.id - b.id)
    .slice(0, limit);
}

describe('embedder distance over HTTP', () => {
  let h: Harness;
  const settle = async (reply: { status: number; body: any }) => {
    expect(reply.status).toBe(202);
    return h.wait(reply.body.taskUid);
  };
  const search = async () =>
    (await h.request('POST', '/indexes/v/search', { json: { vector: query, hybrid: { embedder: 'e', semanticRatio: 1 }, limit: 10, showRankingScore: true } })).body;

  beforeAll(async () => {
    h = await startHarness();
    await settle(await h.request('PATCH', '/indexes/v/settings', { json: { embedders: { e: { source: 'userProvided', dimensions: 100 } } } }));
    const docs = vectors.map((v, id) => ({ id, _vectors: { e: v } }));
    expect((await settle(await h.request('POST', '/indexes/v/documents', { json: docs }))).status).toBe('succeeded');
  }, 120_000);
  afterAll(async () => h?.stop());

  it('rejects an unknown metric and a value of the wrong type, naming the field and the choices', async () => {
    const unknown = await h.request('PATCH', '/indexes/v/settings', { json: { embedders: { e: { source: 'userProvided', dimensions: 100, distance: 'manhattan' } } } });
    expect(unknown.status).toBe(400);
    expectErrorShape(unknown.body, 'invalid_settings_embedders');
    expect(unknown.body.message).toBe('Unknown value `manhattan` at `.embedders.e.distance`: expected one of `cosine`, `euclidean`, `dot`, `hamming`');
    const wrongType = await h.request('PATCH', '/indexes/v/settings', { json: { embedders: { e: { distance: 2 } } } });
    expect(wrongType.status).toBe(400);
    expectErrorShape(wrongType.body, 'invalid_settings_embedders');
    expect(wrongType.body.message).toBe('Invalid value type at `.embedders.e.distance`: expected a string, but found a positive integer: `2`');
    // a composite's parts have no metric of their own: the whole embedder has one
    const nested = await h.request('PATCH', '/indexes/v/settings', {
      json: { embedders: { c: { source: 'composite', indexingEmbedder: { source: 'rest', url: 'http://127.0.0.1:1/e', request: { i: '{{text}}' }, response: { e: '{{embedding}}' }, distance: 'dot' }, searchEmbedder: { source: 'rest', url: 'http://127.0.0.1:1/e', request: { i: '{{text}}' }, response: { e: '{{embedding}}' } } } } },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.message).toContain('Field `distance` unavailable for source `rest` when nested in `indexingEmbedder`');
  });

  it('ranks by cosine when no distance is set, and shows no distance in the settings', async () => {
    const settings = (await h.request('GET', '/indexes/v/settings/embedders')).body;
    expect(settings.e.distance).toBeUndefined();
    const body = await search();
    const want = exact('cosine', 10);
    expect(body.hits.map((hit: any) => hit.id)).toEqual(want.map((w) => w.id));
    expect(body.hits[0]._rankingScore).toBeCloseTo(scores.cosine!(want[0]!.distance), 5);
  });

  for (const metric of ['euclidean', 'dot', 'hamming', 'cosine']) {
    it(`re-links the stored vectors for \`${metric}\` and ranks by it, scores mapped into [0, 1]`, async () => {
      const task = await settle(await h.request('PATCH', '/indexes/v/settings', { json: { embedders: { e: { distance: metric } } } }));
      expect(task.status).toBe('succeeded');
      expect((await h.request('GET', '/indexes/v/settings/embedders')).body.e).toEqual({ source: 'userProvided', dimensions: 100, distance: metric });
      expect((await h.request('GET', '/indexes/v/stats')).body.numberOfEmbeddings).toBe(N);
      const body = await search();
      const want = exact(metric, 10);
      const got = body.hits.map((hit: any) => hit.id);
      if (metric === 'hamming') {
        // bit counts tie: every hit must be within the 10th distance, in distance order
        const d = (id: number) => metrics.hamming!(query, vectors[id]!);
        expect(got).toHaveLength(10);
        for (const id of got) expect(d(id)).toBeLessThanOrEqual(want[9]!.distance);
        expect(got.map(d)).toEqual([...got.map(d)].sort((a, b) => a - b));
      } else {
        expect(got).toEqual(want.map((w) => w.id));
      }
      for (const hit of body.hits) {
        expect(hit._rankingScore).toBeGreaterThanOrEqual(0);
        expect(hit._rankingScore).toBeLessThanOrEqual(1);
        expect(hit._rankingScore).toBeCloseTo(scores[metric]!(metrics[metric]!(query, vectors[hit.id]!)), 4);
      }
    }, 60_000);
  }
});
