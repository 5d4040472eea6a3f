/**
 * Large merges share their layer-0 searches with a helper thread (Graph.insertMany). The helper's
 * script is compiled JavaScript, so this test runs the built graph (dist/, compiled by the global
 * set-up) and checks that the helper ran and that the graph it helped build finds neighbours as
 * well as one built one node at a time.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { baseSubset, DIM, queries } from './glove.js';

type GraphModule = typeof import('../../src/engine/vector/graph.js');
type QuantizerModule = typeof import('../../src/engine/vector/quantizer.js');
type SimdModule = typeof import('../../src/engine/vector/simd.js');
const dist = (file: string) => pathToFileURL(join(process.cwd(), 'dist/src/engine/vector', file)).href;

describe('parallel merge', () => {
  it('a helper thread shares the searches of a large merge, and recall holds', async () => {
    const { Graph } = (await import(dist('graph.js'))) as GraphModule;
    const { Quantizer, int8Scale } = (await import(dist('quantizer.js'))) as QuantizerModule;
    const { QUERY_PTR } = (await import(dist('simd.js'))) as SimdModule;
    // The whole GloVe fixture: the first 4,096 nodes are inserted alone (PARALLEL_MIN in graph.ts),
    // the other 1,904 in eight rounds shared with the helper.
    const n = 6_000;
    const vectors = baseSubset(n);
    const q = new Quantizer('cosine', DIM, false, int8Scale(vectors.slice(0, 2000), 'cosine'));
    const build = (parallel: boolean) => {
      const g = new Graph(q.stride, q.metric, { M: 16, efConstruction: 64 });
      g.ensure(n);
      for (let i = 0; i < n; i++) {
        const p = g.kernels.codePtr(i);
        q.encode(vectors[i]!, g.kernels.bytes, p);
        g.coded(p);
      }
      const slots = Array.from({ length: n }, (_, i) => i);
      if (parallel) g.insertMany(slots);
      else for (const s of slots) g.insert(s);
      return g;
    };
    const cos = (a: Float32Array, b: Float32Array) => {
      let d = 0, na = 0, nb = 0;
      for (let i = 0; i < DIM; i++) { d += a[i]! * b[i]!; na += a[i]! * a[i]!; nb += b[i]! * b[i]!; }
      return d / Math.sqrt(na * nb);
    };
    const qs = queries(100);
    const truth = qs.map((query) => new Set(vectors.map((v, i) => [cos(query, v), i] as const).sort((a, b) => b[0] - a[0]).slice(0, 10).map((x) => x[1])));
    const recall = (g: InstanceType<GraphModule['Graph']>) => {
      let hits = 0;
      qs.forEach((query, i) => {
        q.encode(query, g.kernels.bytes, QUERY_PTR);
        g.coded(QUERY_PTR);
        for (const id of g.search(64).ids.slice(0, 10)) if (truth[i]!.has(id)) hits++;
      });
      return hits / (qs.length * 10);
    };
    const sequential = build(false);
    const parallel = build(true);
    expect(sequential.helperRounds).toBe(0);
    expect(parallel.helperRounds).toBeGreaterThan(0);
    expect(parallel.size).toBe(n);
    const r1 = recall(sequential);
    const r2 = recall(parallel);
    expect(r2).toBeGreaterThan(0.85);
    expect(r2).toBeGreaterThanOrEqual(r1 - 0.02);
  }, 60_000);
});
