import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SearchError } from '../../src/engine/errors.js';
import { AddressPolicy, setOutboundPolicy } from '../../src/engine/net/index.js';
import { updateEmbedders } from '../../src/engine/embedders/settings.js';
import { presentVectors } from '../../src/engine/vector/extension.js';
import { Harness } from './harness.js';
import { startFakeProvider, toyEmbedding, type FakeProvider } from './fake-provider.js';

let provider: FakeProvider;
let h: Harness;

beforeAll(async () => {
  process.env.SEARCH_EMBEDDER_RETRY_BASE_MS = '5';
  process.env.SEARCH_EMBEDDER_MAX_ATTEMPTS = '2';
  setOutboundPolicy(AddressPolicy.parse('127.0.0.1/32'));
  provider = await startFakeProvider(8);
});
afterAll(async () => {
  setOutboundPolicy(AddressPolicy.publicOnly());
  await provider.close();
});
beforeEach(() => {
  h = new Harness();
  provider.received.length = 0;
  provider.failures.length = 0;
});
afterEach(async () => h.close());

const manual = () => updateEmbedders({}, { manual: { source: 'userProvided', dimensions: 3 } });
const rest = () =>
  updateEmbedders({}, {
    gen: {
      source: 'rest',
      url: `${provider.url}/rest/batch`,
      request: { inputs: ['{{text}}', '{{..}}'] },
      response: { results: [{ vec: '{{embedding}}' }, '{{..}}'] },
      documentTemplate: '{{doc.title}}',
    },
  });

const shown = (id: string) => {
  const docid = h.docid(id);
  return presentVectors(h.extension, h.index, docid, h.store.getDocument(docid)!, { retrieveVectors: true })._vectors as Record<string, any>;
};
const failure = async (p: Promise<unknown>) => {
  const error = await p.then(() => undefined, (e) => e);
  expect(error).toBeInstanceOf(SearchError);
  return error as SearchError;
};

describe('_vectors with a userProvided embedder', () => {
  beforeEach(async () => h.setEmbedders(manual()));

  it('accepts every documented shape and returns them with retrieveVectors', async () => {
    await h.add([
      { id: 'single', _vectors: { manual: [1, 0, 0] } },
      { id: 'multi', _vectors: { manual: [[0, 1, 0], [0, 0, 1]] } },
      { id: 'object', _vectors: { manual: { embeddings: [0.5, 0.5, 0], regenerate: false } } },
      { id: 'none', _vectors: { manual: null } },
      { id: 'absent' },
    ]);
    expect(shown('single').manual).toEqual({ embeddings: [[1, 0, 0]], regenerate: false });
    expect(shown('multi').manual).toEqual({ embeddings: [[0, 1, 0], [0, 0, 1]], regenerate: false });
    expect(shown('object').manual).toEqual({ embeddings: [[0.5, 0.5, 0]], regenerate: false });
    expect(shown('none').manual.embeddings).toEqual([]);
    expect(shown('absent').manual.embeddings).toEqual([]);
    const store = h.extension.vectorStore(h.store, 'manual')!;
    expect(store.count()).toBe(4);
    expect(h.store.main.get('embeddingStats')).toEqual({ numberOfEmbeddings: 4, numberOfEmbeddedDocuments: 3 });
    const hidden = presentVectors(h.extension, h.index, h.docid('single'), h.store.getDocument(h.docid('single'))!, { retrieveVectors: false });
    expect(hidden).toEqual({ id: 'single' });
  });

  it('rejects wrong dimensions and wrong shapes with the reference codes, writing nothing', async () => {
    const dims = await failure(h.add([{ id: 'a', _vectors: { manual: [1, 2] } }]));
    expect(dims.code).toBe('invalid_vector_dimensions');
    expect(dims.message).toBe('Invalid vector dimensions: expected: `3`, found: `2`.');
    const type = await failure(h.add([{ id: 'a', _vectors: { manual: 'nope' } }]));
    expect(type.code).toBe('invalid_vectors_type');
    expect(type.message).toMatch(/^Bad embedder configuration in the document with id: `a`\. Invalid value type at `\._vectors\.manual`/);
    const notObject = await failure(h.add([{ id: 'b', _vectors: [1, 2, 3] }]));
    expect(notObject.code).toBe('invalid_vectors_type');
    expect(notObject.message).toMatch(/The `_vectors` field in the document with id: `b` is not an object/);
    const mixed = await failure(h.add([{ id: 'c', _vectors: { manual: [[1, 2, 3], 4] } }]));
    expect(mixed.code).toBe('invalid_vectors_type');
    const noRegenerate = await failure(h.add([{ id: 'd', _vectors: { manual: { embeddings: [1, 2, 3] } } }]));
    expect(noRegenerate.message).toMatch(/Missing field `regenerate`/);
    expect(h.store.documentCount).toBe(0);
  });

  it('follows updates and deletions', async () => {
    await h.add([{ id: 'a', _vectors: { manual: [1, 0, 0] } }, { id: 'b', _vectors: { manual: [0, 1, 0] } }]);
    await h.add([{ id: 'a', _vectors: { manual: [0, 0, 1] } }]);
    const store = h.extension.vectorStore(h.store, 'manual')!;
    expect(Array.from(store.get(h.docid('a'))![0]!)).toEqual([0, 0, 1]);
    const docidB = h.docid('b');
    await h.remove(['b']);
    expect(store.get(docidB)).toBeUndefined();
    expect(h.store.main.get('embeddingStats')).toEqual({ numberOfEmbeddings: 1, numberOfEmbeddedDocuments: 1 });
  });

  it('drops the vectors of a removed embedder', async () => {
    await h.add([{ id: 'a', _vectors: { manual: [1, 0, 0] } }]);
    await h.setEmbedders({});
    await h.add([{ id: 'z' }]);
    expect(h.extension.vectorStore(h.store, 'manual')).toBeUndefined();
    expect(h.store.main.get('embeddingStats')).toEqual({ numberOfEmbeddings: 0, numberOfEmbeddedDocuments: 0 });
  });
});

describe('generated embeddings', () => {
  it('embeds existing documents when an embedder is configured, then only what changed', async () => {
    await h.add([{ id: '1', title: 'shark attack' }, { id: '2', title: 'love in paris' }]);
    await h.setEmbedders(rest());
    expect(provider.received).toHaveLength(1);
    expect(provider.received[0]!.body.inputs.sort()).toEqual(['love in paris', 'shark attack']);
    expect(Array.from(h.extension.vectorStore(h.store, 'gen')!.get(h.docid('1'))![0]!)).toEqual(toyEmbedding('shark attack'));
    expect(shown('1').gen.regenerate).toBe(true);

    provider.received.length = 0;
    // same rendered text (only a field outside the template changed): no provider call
    await h.add([{ id: '1', title: 'shark attack', year: 1975 }], 'update');
    expect(provider.received).toHaveLength(0);
    await h.add([{ id: '2', title: 'love in rome' }], 'update');
    expect(provider.received.map((r) => r.body.inputs)).toEqual([['love in rome']]);
    expect(Array.from(h.extension.vectorStore(h.store, 'gen')!.get(h.docid('2'))![0]!)).toEqual(toyEmbedding('love in rome'));
  });

  it('keeps user vectors (regenerate: false) instead of generating', async () => {
    await h.setEmbedders(rest());
    const mine = [1, 2, 3, 4, 5, 6, 7, 8];
    await h.add([{ id: '1', title: 'x', _vectors: { gen: { embeddings: mine, regenerate: false } } }]);
    expect(provider.received).toHaveLength(0);
    expect(shown('1').gen).toEqual({ embeddings: [mine], regenerate: false });
  });

  it('fails the batch with vector_embedding_error naming the documents when the provider fails', async () => {
    await h.setEmbedders(rest());
    provider.failures.push(500, 500);
    const error = await failure(h.add([{ id: 'doc-1', title: 'a' }, { id: 'doc-2', title: 'b' }]));
    expect(error.code).toBe('vector_embedding_error');
    expect(error.message).toMatch(/embedder `gen` for documents `doc-1`, `doc-2`: .*answered 500/);
    expect(h.store.documentCount).toBe(0);
  });

  it('fails on vectors of unexpected dimensions from the provider', async () => {
    await h.setEmbedders(updateEmbedders({}, { gen: { ...rest().gen, dimensions: 4 } }));
    const error = await failure(h.add([{ id: '1', title: 'a' }]));
    expect(error.code).toBe('vector_embedding_error');
    expect(error.message).toMatch(/8 dimensions.*4/);
  });

  it('re-embeds when the template changes', async () => {
    await h.setEmbedders(rest());
    await h.add([{ id: '1', title: 'shark', overview: 'teeth' }]);
    provider.received.length = 0;
    const before = h.settings;
    const next = updateEmbedders(before.embedders, { gen: { documentTemplate: '{{doc.overview}}' } });
    expect(h.extension.needsReindex(before, { ...before, embedders: next })).toBe(true);
    const apiKeyOnly = updateEmbedders(before.embedders, { gen: { apiKey: 'new-key' } });
    expect(h.extension.needsReindex(before, { ...before, embedders: apiKeyOnly })).toBe(false);
    await h.setEmbedders(next);
    expect(provider.received.map((r) => r.body.inputs)).toEqual([['teeth']]);
  });
});

describe('embeddings given with regenerate: true', () => {
  it('are used once, then regenerated when the text changes or the embedder changes', async () => {
    await h.setEmbedders(rest());
    const given = [9, 9, 9, 9, 9, 9, 9, 9];
    await h.add([{ id: '1', title: 'shark', _vectors: { gen: { embeddings: given, regenerate: true } } }]);
    expect(provider.received).toHaveLength(0);
    const store = () => h.extension.vectorStore(h.store, 'gen')!;
    expect(Array.from(store().get(h.docid('1'))![0]!)).toEqual(given);
    // the stored document still carries the hint: a text change must not reuse it
    await h.add([{ id: '1', title: 'whale' }], 'update');
    expect(provider.received.map((r) => r.body.inputs)).toEqual([['whale']]);
    expect(Array.from(store().get(h.docid('1'))![0]!)).toEqual(toyEmbedding('whale'));
    provider.received.length = 0;
    await h.setEmbedders(updateEmbedders(h.settings.embedders, { gen: { documentTemplate: 'film: {{doc.title}}' } }));
    expect(provider.received.map((r) => r.body.inputs)).toEqual([['film: whale']]);
  });
});

describe('re-indexing after a settings change', () => {
  it('embeds only for the embedder that changed', async () => {
    await h.add([{ id: '1', title: 'shark' }, { id: '2', title: 'whale', _vectors: { manual: [1, 2, 3] } }]);
    await h.setEmbedders({ ...rest(), ...manual() });
    expect(provider.received).toHaveLength(1);
    provider.received.length = 0;
    const second = updateEmbedders({}, { other: { ...rest().gen, documentTemplate: 'title: {{doc.title}}' } }).other!;
    await h.setEmbedders({ ...h.settings.embedders, other: second });
    // one call, for `other` only; `gen` and `manual` keep their vectors
    expect(provider.received.map((r) => r.body.inputs.sort())).toEqual([['title: shark', 'title: whale']]);
    expect(Array.from(h.extension.vectorStore(h.store, 'gen')!.get(h.docid('1'))![0]!)).toEqual(toyEmbedding('shark'));
    expect(Array.from(h.extension.vectorStore(h.store, 'manual')!.get(h.docid('2'))![0]!)).toEqual([1, 2, 3]);
    expect(h.store.main.get('embeddingStats')).toEqual({ numberOfEmbeddings: 5, numberOfEmbeddedDocuments: 5 });
    provider.received.length = 0;
    const { other: _dropped, ...withoutOther } = h.settings.embedders;
    await h.setEmbedders(withoutOther);
    expect(provider.received).toHaveLength(0);
    expect(h.extension.vectorStore(h.store, 'other')).toBeUndefined();
    expect(h.store.main.get('embeddingStats')).toEqual({ numberOfEmbeddings: 3, numberOfEmbeddedDocuments: 3 });
  });

  it('re-renders the default template when searchable attributes change, embedding only changed texts', async () => {
    await h.setEmbedders(updateEmbedders({}, { gen: { ...rest().gen, documentTemplate: null } }));
    await h.add([{ id: '1', title: 'shark', secret: 'x' }, { id: '2', title: 'whale' }]);
    provider.received.length = 0;
    const before = h.settings;
    const after = { ...before, searchableAttributes: ['id', 'title'] };
    expect(h.extension.needsReindex(before, after)).toBe(true);
    const changes = (await import('../../src/engine/index/pipeline.js')).fullReindexChanges(h.store);
    const prepared = await h.extension.prepare(changes, after, h.store);
    h.store.write(() => {
      h.store.setSettings(after);
      h.extension.clear(h.store);
      h.extension.apply(changes, { store: h.store, settings: after, prepared });
    });
    // only document 1 renders differently once `secret` is no longer searchable
    expect(provider.received.map((r) => r.body.inputs)).toEqual([['id: 1\ntitle: shark\n']]);
  });
});

describe('provider drift', () => {
  it('fails the batch when a provider starts answering other dimensions, keeping the stored vectors', async () => {
    await h.setEmbedders(updateEmbedders({}, { gen: { source: 'ollama', model: 'm', url: `${provider.url}/api/embed`, documentTemplate: '{{doc.title}}' } }));
    await h.add([{ id: '1', title: 'shark' }]);
    provider.dimensions = 4;
    try {
      const error = await failure(h.add([{ id: '2', title: 'whale' }]));
      expect(error.code).toBe('vector_embedding_error');
      expect(error.message).toMatch(/`2`.*4 dimensions/);
      expect(h.extension.vectorStore(h.store, 'gen')!.get(h.docid('1'))![0]).toHaveLength(8);
      expect(h.store.documentCount).toBe(1);
    } finally {
      provider.dimensions = 8;
    }
  });
});

describe('composite embedder', () => {
  it('embeds documents with the indexing side; changing the search side re-embeds nothing', async () => {
    const side = (path: string) => ({ source: 'ollama', model: 'm', url: `${provider.url}${path}` });
    await h.setEmbedders(updateEmbedders({}, { c: { source: 'composite', indexingEmbedder: { ...side('/api/embed'), documentTemplate: '{{doc.title}}' }, searchEmbedder: side('/api/embeddings') } }));
    await h.add([{ id: '1', title: 'shark' }]);
    expect(provider.received.map((r) => r.path)).toEqual(['/api/embed']);
    expect(Array.from(h.extension.vectorStore(h.store, 'c')!.get(h.docid('1'))![0]!)).toEqual(toyEmbedding('shark'));
    provider.received.length = 0;
    const before = h.settings;
    const embedders = updateEmbedders(before.embedders, { c: { searchEmbedder: { ...side('/api/embeddings'), model: 'other' } } });
    expect(h.extension.needsReindex(before, { ...before, embedders })).toBe(false);
  });
});

describe('turning binary quantization on', () => {
  it('quantizes the stored vectors without calling the provider again', async () => {
    await h.setEmbedders(rest());
    await h.add([{ id: '1', title: 'shark' }, { id: '2', title: 'whale' }]);
    provider.received.length = 0;
    await h.setEmbedders(updateEmbedders(h.settings.embedders, { gen: { binaryQuantized: true } }));
    expect(provider.received).toHaveLength(0);
    expect(Array.from(h.extension.vectorStore(h.store, 'gen')!.get(h.docid('2'))![0]!)).toEqual(toyEmbedding('whale'));
    expect(h.store.main.get('embeddingStats')).toEqual({ numberOfEmbeddings: 2, numberOfEmbeddedDocuments: 2 });
    // a later text change embeds again
    await h.add([{ id: '2', title: 'orca' }], 'update');
    expect(provider.received.map((r) => r.body.inputs)).toEqual([['orca']]);
  });
});
