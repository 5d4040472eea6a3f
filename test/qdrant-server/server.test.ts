import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QdrantClient } from '@qdrant/js-client-rest';
import { parseLossless } from '../../src/migrate/qdrant/json.js';
import { arraySource, type CollectionSpec } from './collection.js';
import { citiesCollection, edgeCollection, LEDGER_EDGE_IDS, ledgerCollection, moviesCollection } from './fixtures.js';
import { loadOpenApi, Validator } from './schema.js';
import { OPENAPI_PATH, startQdrantServer, type QdrantTestServer } from './server.js';

const api = loadOpenApi(OPENAPI_PATH);
const validator = new Validator(api, false);

function responseSchema(path: string, method: string): Record<string, unknown> {
  const op = (api.paths[path] as Record<string, { responses: Record<string, { content: Record<string, { schema: Record<string, unknown> }> }> }>)[method]!;
  return op.responses['200']!.content['application/json']!.schema;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown;
  try {
    json = parseLossless(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

describe('Qdrant test server', () => {
  let server: QdrantTestServer;
  const mixed: CollectionSpec = {
    name: 'mixed',
    vectors: { size: 2, distance: 'Euclid' },
    points: arraySource([
      { id: 'ffffffff-0000-4000-8000-000000000000', payload: { k: 'u3' }, vector: [1, 1] },
      { id: 5n, payload: { k: 'i5' }, vector: [1, 1] },
      { id: '00000000-0000-4000-8000-000000000001', payload: { k: 'u1' }, vector: [1, 1] },
      { id: 2n ** 64n - 1n, payload: { k: 'max' }, vector: [1, 1] },
      { id: 3n, payload: { k: 'i3' }, vector: [1, 1] },
      { id: '7fffffff-0000-4000-8000-000000000000', payload: { k: 'u2' }, vector: [1, 1] },
    ]),
  };

  beforeAll(async () => {
    server = await startQdrantServer({
      collections: [mixed, citiesCollection(50), moviesCollection(20), ledgerCollection(), edgeCollection(8)],
      apiKey: 'secret',
    });
  });
  afterAll(async () => server.close());
  const h = { 'api-key': 'secret' };

  it('scrolls integer ids before UUIDs with an inclusive offset and next_page_offset', async () => {
    const seen: string[] = [];
    let offset: unknown = null;
    const offsets: unknown[] = [];
    do {
      const r = await post(`${server.url}/collections/mixed/points/scroll`, `{"limit":2,"with_payload":true,"offset":${offset === null ? 'null' : typeof offset === 'string' ? JSON.stringify(offset) : String(offset)}}`, h);
      expect(r.status).toBe(200);
      expect(validator.validate(responseSchema('/collections/{collection_name}/points/scroll', 'post'), r.json)).toEqual([]);
      for (const p of r.json.result.points) seen.push(p.payload.k);
      offset = r.json.result.next_page_offset;
      offsets.push(offset);
    } while (offset !== null);
    expect(seen).toEqual(['i3', 'i5', 'max', 'u1', 'u2', 'u3']);
    // the offset is the first id of the next page, and 2^64-1 arrives exact
    expect(offsets[0]).toBe(2n ** 64n - 1n);
    expect(offsets[1]).toBe('7fffffff-0000-4000-8000-000000000000');
    // inclusive: starting at an existing id returns it first; at a missing id, the next one
    const incl = await post(`${server.url}/collections/mixed/points/scroll`, { offset: 5, limit: 1 }, h);
    expect(incl.json.result.points[0].id).toBe(5);
    const gap = await post(`${server.url}/collections/mixed/points/scroll`, { offset: 4, limit: 1 }, h);
    expect(gap.json.result.points[0].id).toBe(5);
    expect(gap.json.result.next_page_offset).toBe(2n ** 64n - 1n);
  });

  it('defaults like Qdrant: limit 10, payload on, vectors off', async () => {
    const r = await post(`${server.url}/collections/cities/points/scroll`, {}, h);
    expect(r.json.result.points).toHaveLength(10);
    expect(r.json.result.points[0].payload).toBeDefined();
    expect(r.json.result.points[0].vector).toBeUndefined();
  });

  it('answers named, sparse and multi vectors in their output shapes', async () => {
    const r = await post(`${server.url}/collections/edge/points/scroll`, { limit: 8, with_vector: true }, h);
    expect(validator.validate(responseSchema('/collections/{collection_name}/points/scroll', 'post'), r.json)).toEqual([]);
    const v = r.json.result.points.find((p: any) => p.vector.keywords).vector;
    expect(v.keywords).toEqual({ indices: expect.any(Array), values: expect.any(Array) });
    expect(v.colbert).toHaveLength(2);
    const only = await post(`${server.url}/collections/movies/points/scroll`, { limit: 1, with_vector: ['plot'] }, h);
    expect(Object.keys(only.json.result.points[0].vector)).toEqual(['plot']);
  });

  it('rejects requests that do not conform to the OpenAPI schema, in Qdrant error shape', async () => {
    for (const bad of [{ limit: 0 }, { limit: 'ten' }, { with_vectors: true }, { offset: 'not-a-uuid' }, { offset: -1 }]) {
      const r = await post(`${server.url}/collections/cities/points/scroll`, bad, h);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.json.status.error).toMatch(/Format error in JSON body/);
      expect(typeof r.json.time).toBe('number');
    }
    const count = await post(`${server.url}/collections/cities/points/count`, { exact: 'yes' }, h);
    expect(count.status).toBe(400);
    expect(server.invalidRequests.length).toBeGreaterThanOrEqual(6);
  });

  it('answers 401 in plain text for a missing or wrong api-key, and 404 for an unknown collection', async () => {
    const none = await fetch(`${server.url}/collections`);
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toMatch(/text\/plain/);
    expect(await none.text()).toMatch(/API key/);
    const wrong = await fetch(`${server.url}/collections`, { headers: { 'api-key': 'nope' } });
    expect(wrong.status).toBe(401);
    const missing = await fetch(`${server.url}/collections/nope`, { headers: h });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: { error: 'Not found: Collection `nope` doesn\'t exist!' } });
  });

  it('serves the official @qdrant/js-client-rest, whose requests all validate', async () => {
    const client = new QdrantClient({ url: server.url, apiKey: 'secret', checkCompatibility: false });
    const before = server.invalidRequests.length;
    const info = await client.getCollection('ledger');
    expect(validator.validate(responseSchema('/collections/{collection_name}', 'get'), { result: info, status: 'ok', time: 0 })).toEqual([]);
    expect(Object.keys(info.payload_schema).sort()).toEqual(['active', 'at', 'depot', 'note', 'price', 'qty', 'ref', 'sku']);
    expect(info.config.quantization_config).toEqual({ binary: { always_ram: true } });
    const page = await client.scroll('ledger', { limit: 200, with_payload: true, with_vector: true });
    expect(page.points).toHaveLength(120);
    // the official client parses ids into doubles: 2^64-1 comes back rounded, which is why the migration parses itself
    expect(page.points[119]!.id).toBe(18446744073709552000);
    expect((await client.count('ledger', { exact: true })).count).toBe(120);
    expect((await client.getCollectionAliases('cities')).aliases).toEqual([{ alias_name: 'cities_live', collection_name: 'cities' }]);
    expect(server.invalidRequests.length).toBe(before);
  });

  it('keeps every integer id of the ledger exact through a lossless parse', async () => {
    const r = await post(`${server.url}/collections/ledger/points/scroll`, { limit: 200, with_payload: false }, h);
    const ids = r.json.result.points.map((p: any) => BigInt(p.id));
    expect(ids.slice(0, 2)).toEqual(LEDGER_EDGE_IDS.slice(0, 2));
    expect(ids.slice(-7)).toEqual(LEDGER_EDGE_IDS.slice(2));
  });

  it('injects 429 with Retry-After, 500 on page N and slow pages', async () => {
    server.faults.rules.push({ route: 'scroll', nth: [server.counts.scroll + 1], status: 429, retryAfter: '2' });
    const limited = await post(`${server.url}/collections/cities/points/scroll`, {}, h);
    expect(limited.status).toBe(429);
    server.faults.rules.push({ route: 'scroll', nth: [server.counts.scroll + 2], status: 500 });
    expect((await post(`${server.url}/collections/cities/points/scroll`, {}, h)).status).toBe(200);
    const failed = await post(`${server.url}/collections/cities/points/scroll`, {}, h);
    expect(failed.status).toBe(500);
    expect(failed.json.status.error).toMatch(/injected/);
    server.faults.scrollDelayMs = 150;
    const t0 = Date.now();
    await post(`${server.url}/collections/cities/points/scroll`, {}, h);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    server.faults.scrollDelayMs = 0;
  });
});
