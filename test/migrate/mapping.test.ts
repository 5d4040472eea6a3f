import { describe, expect, it } from 'vitest';
import type { CollectionConfig } from '../../src/migrate/qdrant/config.js';
import { parseCollectionInfo } from '../../src/migrate/qdrant/config.js';
import { PointMapper, planMapping, type MappingOptions } from '../../src/migrate/qdrant/mapping.js';
import { MappingReport } from '../../src/migrate/qdrant/report.js';
import type { QdrantPoint } from '../../src/migrate/qdrant/source.js';

const keep: MappingOptions = { vectors: 'keep', unsupported: 'skip', binaryQuantized: false };

function config(over: Partial<CollectionConfig>): CollectionConfig {
  return { name: 'c', aliases: [], pointsCount: 0, dense: [], sparse: [], quantization: null, payloadIndexes: [], ...over };
}

function point(id: string, payload: Record<string, unknown> | null, vector: unknown = null): QdrantPoint {
  return { id, idKind: /^\d+$/.test(id) ? 'integer' : 'uuid', payload, vector };
}

describe('collection config', () => {
  it('reads unnamed, named, multi and sparse vectors, quantization and payload indexes', () => {
    const c = parseCollectionInfo(
      'x',
      {
        points_count: 3,
        config: {
          params: {
            vectors: { a: { size: 4, distance: 'Dot', quantization_config: { binary: {} } }, m: { size: 2, distance: 'Cosine', multivector_config: { comparator: 'max_sim' } } },
            sparse_vectors: { s: { modifier: 'idf' } },
          },
          quantization_config: { scalar: { type: 'int8' } },
        },
        payload_schema: { 'tags[]': { data_type: 'keyword', points: 3 }, at: { data_type: 'datetime', points: 1 } },
      },
      ['alias1'],
    );
    expect(c.dense).toEqual([
      { name: 'a', size: 4, distance: 'Dot', multivector: false, quantization: 'binary' },
      { name: 'm', size: 2, distance: 'Cosine', multivector: true, quantization: 'scalar' },
    ]);
    expect(c.sparse).toEqual([{ name: 's', modifier: 'idf' }]);
    expect(c.payloadIndexes.map((p) => `${p.key}:${p.type}`)).toEqual(['at:datetime', 'tags[]:keyword']);
    expect(c.aliases).toEqual(['alias1']);
  });
});

describe('mapping table', () => {
  it('point id -> "id" string; primary key id', () => {
    const plan = planMapping(config({}), keep);
    const m = new PointMapper(plan, new MappingReport());
    expect(plan.primaryKey).toBe('id');
    expect(m.map(point('18446744073709551615', { a: 1 }))).toEqual({ id: '18446744073709551615', a: 1 });
    expect(m.map(point('550e8400-e29b-41d4-a716-446655440000', null))).toEqual({ id: '550e8400-e29b-41d4-a716-446655440000' });
  });

  it('payload -> top-level fields, nested kept; reserved names renamed predictably and reported', () => {
    const report = new MappingReport();
    const m = new PointMapper(planMapping(config({}), keep), report);
    const doc = m.map(point('1', { id: 'x', _geo: 'y', _vectors: [1], _private: { a: 1 }, payload_id: 'taken', nested: { id: 2, _k: 3 } }));
    expect(doc).toEqual({
      id: '1',
      payload_payload_id: 'x',
      payload__geo: 'y',
      payload__vectors: [1],
      payload__private: { a: 1 },
      payload_id: 'taken',
      nested: { id: 2, _k: 3 },
    });
    expect(report.toJSON().renamed.map((e) => `${e.what} ${e.detail} x${e.count}`)).toEqual([
      '_geo -> payload__geo (reserved name) x1',
      '_private -> payload__private (reserved name) x1',
      '_vectors -> payload__vectors (reserved name) x1',
      'id -> payload_payload_id (reserved name) x1',
    ]);
  });

  it('geo {lat, lon} -> _geo {lat, lng}, filterable and sortable; the source field moves', () => {
    const c = config({ payloadIndexes: [{ key: 'place.loc', type: 'geo', points: 1 }] });
    const plan = planMapping(c, keep);
    expect(plan.settings.filterableAttributes).toContain('_geo');
    expect(plan.settings.sortableAttributes).toContain('_geo');
    const report = new MappingReport();
    const original = { place: { loc: { lat: 48.85, lon: 2.35 }, name: 'Paris' } };
    const doc = new PointMapper(plan, report).map(point('1', original));
    expect(doc).toEqual({ id: '1', place: { name: 'Paris' }, _geo: { lat: 48.85, lng: 2.35 } });
    expect(original.place.loc).toEqual({ lat: 48.85, lon: 2.35 }); // the point itself is not modified
    expect(report.toJSON().converted[0]).toMatchObject({ what: 'place.loc', count: 1 });
  });

  it('payload indexes -> filterable; numeric and datetime also sortable; text -> searchable', () => {
    const types = ['keyword', 'integer', 'float', 'bool', 'datetime', 'uuid', 'text'] as const;
    const plan = planMapping(config({ payloadIndexes: types.map((t) => ({ key: `f_${t}`, type: t, points: 1 })).concat([{ key: 'tags[]', type: 'keyword', points: 1 }, { key: '_hidden', type: 'keyword', points: 1 }]) }), keep);
    expect(plan.settings.filterableAttributes.sort()).toEqual(['f_bool', 'f_datetime', 'f_float', 'f_integer', 'f_keyword', 'f_uuid', 'payload__hidden', 'tags'].sort());
    expect(plan.settings.sortableAttributes.sort()).toEqual(['f_datetime', 'f_float', 'f_integer']);
    expect(plan.settings.searchableAttributes).toEqual(['f_text']);
  });

  it('unnamed vector -> embedder "default"; named vectors -> one userProvided embedder each', () => {
    const unnamed = planMapping(config({ dense: [{ name: null, size: 3, distance: 'Cosine', multivector: false, quantization: null }] }), keep);
    expect(unnamed.settings.embedders).toEqual({ default: { source: 'userProvided', dimensions: 3 } });
    expect(unnamed.withVector).toBe(true);
    expect(new PointMapper(unnamed, new MappingReport()).map(point('1', {}, [0.1, 0.2, 0.3]))).toEqual({ id: '1', _vectors: { default: [0.1, 0.2, 0.3] } });

    const named = planMapping(
      config({
        dense: [
          { name: 'text', size: 2, distance: 'Cosine', multivector: false, quantization: null },
          { name: 'image', size: 3, distance: 'Euclid', multivector: false, quantization: null },
        ],
      }),
      keep,
    );
    // the source's metric is carried over: Euclid -> distance euclidean, and no warning
    expect(named.settings.embedders).toEqual({ text: { source: 'userProvided', dimensions: 2 }, image: { source: 'userProvided', dimensions: 3, distance: 'euclidean' } });
    expect(named.warnings).toEqual([]);
    const report = new MappingReport();
    const m = new PointMapper(named, report);
    // a point lacking a named vector: the document has no embedding for that embedder
    expect(m.map(point('2', {}, { text: [1, 0] }))).toEqual({ id: '2', _vectors: { text: [1, 0] } });
    expect(report.toJSON().skipped[0]).toMatchObject({ what: 'vector image', count: 1 });
    // ranked by their own metric, Euclid vectors need not be unit length
    m.map(point('3', {}, { text: [1, 0], image: [3, 4, 0] }));
    expect(m.norms.get('image')).toBeUndefined();
  });

  it('a target without the distance setting (remote Meilisearch) stops on Dot and Euclid unless told to rank by cosine', () => {
    const c = config({ dense: [{ name: 'image', size: 3, distance: 'Euclid', multivector: false, quantization: null }] });
    const remote = { ...keep, distanceSetting: false };
    expect(() => planMapping(c, remote)).toThrow(/no distance setting.*--db-path.*--rank-by-cosine/s);
    const cosine = planMapping(c, { ...remote, rankByCosine: true });
    expect(cosine.settings.embedders).toEqual({ image: { source: 'userProvided', dimensions: 3 } });
    expect(cosine.warnings.join('\n')).toMatch(/Euclid: ranked by cosine on the target/);
    // ranked by cosine, the vectors are checked for unit length
    const m = new PointMapper(cosine, new MappingReport());
    m.map(point('3', {}, { image: [3, 4, 0] }));
    expect(m.norms.get('image')).toEqual({ total: 1, notUnit: 1 });
    const dot = config({ dense: [{ name: null, size: 3, distance: 'Dot', multivector: false, quantization: null }] });
    expect(planMapping(dot, keep).settings.embedders).toEqual({ default: { source: 'userProvided', dimensions: 3, distance: 'dot' } });
  });

  it('Manhattan, sparse and multivectors are reported and skipped unless converted', () => {
    const c = config({
      dense: [
        { name: 'm', size: 2, distance: 'Manhattan', multivector: false, quantization: null },
        { name: 'colbert', size: 2, distance: 'Cosine', multivector: true, quantization: null },
      ],
      sparse: [{ name: 'bm', modifier: null }],
    });
    const skipped = planMapping(c, keep);
    expect(skipped.settings.embedders).toEqual({});
    expect(skipped.withVector).toBe(false);
    expect(skipped.warnings).toHaveLength(3);
    expect(skipped.warnings[0]).toMatch(/Manhattan distance, which has no equivalent here: skipped\. To copy it anyway, pass --unsupported-vectors convert .*or re-embed/);
    const conv = planMapping(c, { ...keep, unsupported: 'convert' });
    expect(Object.keys(conv.settings.embedders!)).toEqual(['m', 'colbert']);
    expect(conv.settings.embedders!.m).toEqual({ source: 'userProvided', dimensions: 2, distance: 'euclidean' });
    const doc = new PointMapper(conv, new MappingReport()).map(point('1', {}, { m: [1, 2], colbert: [[1, 0], [0, 1]], bm: { indices: [3], values: [0.5] } }));
    expect(doc).toEqual({ id: '1', _vectors: { m: [1, 2], colbert: [[1, 0], [0, 1]] }, qdrant_sparse: { bm: { indices: [3], values: [0.5] } } });
  });

  it('binary quantization -> binaryQuantized only when asked', () => {
    const c = config({ dense: [{ name: null, size: 8, distance: 'Dot', multivector: false, quantization: 'binary' }] });
    expect(planMapping(c, keep).settings.embedders!.default).toEqual({ source: 'userProvided', dimensions: 8, distance: 'dot' });
    expect(planMapping(c, { ...keep, binaryQuantized: true }).settings.embedders!.default).toEqual({ source: 'userProvided', dimensions: 8, distance: 'dot', binaryQuantized: true });
  });

  it('--vectors skip drops vectors; reembed needs embedders from settings and adds a template', () => {
    const c = config({ dense: [{ name: null, size: 3, distance: 'Cosine', multivector: false, quantization: null }], payloadIndexes: [{ key: 'title', type: 'text', points: 1 }] });
    const skip = planMapping(c, { ...keep, vectors: 'skip' });
    expect(skip.settings.embedders).toBeUndefined();
    expect(new PointMapper(skip, new MappingReport()).map(point('1', { title: 't' }, [1, 2, 3]))).toEqual({ id: '1', title: 't' });
    expect(() => planMapping(c, { ...keep, vectors: 'reembed' })).toThrow(/embedder-from-settings/);
    const re = planMapping(c, { ...keep, vectors: 'reembed', embedders: { mini: { source: 'rest', url: 'http://127.0.0.1:1/embed' } } });
    expect(re.settings.embedders).toEqual({ mini: { source: 'rest', url: 'http://127.0.0.1:1/embed', documentTemplate: '{{doc.title}}' } });
    expect(re.withVector).toBe(false);
  });

  it('embedders from a settings file replace the derived ones; their vectors are sent with regenerate false', () => {
    const c = config({ dense: [{ name: null, size: 2, distance: 'Cosine', multivector: false, quantization: null }] });
    const plan = planMapping(c, { ...keep, embedders: { default: { source: 'rest', url: 'http://127.0.0.1:1', dimensions: 2 } } });
    expect(plan.settings.embedders!.default!.source).toBe('rest');
    expect(new PointMapper(plan, new MappingReport()).map(point('1', {}, [1, 0]))).toEqual({ id: '1', _vectors: { default: { embeddings: [1, 0], regenerate: false } } });
  });

  it('payload integers beyond 2^53 become numbers and are reported as lossy', () => {
    const report = new MappingReport();
    const doc = new PointMapper(planMapping(config({}), keep), report).map(point('1', { big: 2n ** 60n + 1n, nested: { b: [5n] } }));
    expect(doc).toEqual({ id: '1', big: 2 ** 60, nested: { b: [5] } });
    expect(report.toJSON().converted.map((e) => e.what)).toEqual(['big', 'nested.b']);
  });
});
