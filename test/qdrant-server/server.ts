/**
 * A Qdrant-compatible HTTP server for tests, built from the official OpenAPI definition
 * (v1.19.0, committed under fixtures/data/qdrant). It implements the read side a migration uses:
 * service info, collection list/info/exists, aliases, scroll and count. Every request body and
 * query parameter is validated against the operation's schema (strictly: unknown fields are
 * errors), errors use Qdrant's shapes, and faults can be injected per route.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseLossless, stringifyLossless } from '../../src/migrate/qdrant/json.js';
import {
  compareIds,
  lowerBound,
  normalizeUuid,
  type CollectionSpec,
  type PointId,
  type StoredPoint,
  type VectorParams,
} from './collection.js';
import { loadOpenApi, Validator, type OpenApi, type Operation, type Schema } from './schema.js';
import { qdrantOpenApiPath } from '../data.js';

export const OPENAPI_PATH = qdrantOpenApiPath;

export type RouteName = 'root' | 'list' | 'info' | 'exists' | 'aliases' | 'allAliases' | 'scroll' | 'count' | 'retrieve';

/** A fault answers the `nth` (1-based, counted per route) request(s) of a route instead of serving it. */
export interface FaultRule {
  route: RouteName;
  /** Request numbers to hit; e.g. [3] fails the third scroll. */
  nth: number[];
  status: 429 | 500 | 502 | 503;
  retryAfter?: string;
}

export interface Faults {
  rules: FaultRule[];
  /** Delay before answering every scroll page, in ms. */
  scrollDelayMs?: number;
  /** Called when a scroll page is served (1-based); lets a test kill a client mid-migration. */
  onScroll?: (n: number) => void;
}

export interface QdrantServerOptions {
  collections: CollectionSpec[];
  apiKey?: string;
  faults?: Partial<Faults>;
  openApiPath?: string;
}

export interface RequestLogEntry {
  route: RouteName | 'unknown';
  method: string;
  path: string;
  body: unknown;
  status: number;
}

export interface QdrantTestServer {
  url: string;
  faults: Faults;
  requests: RequestLogEntry[];
  /** Validation problems found in requests (each also answered 400). */
  invalidRequests: string[];
  counts: Record<RouteName, number>;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly plain = false,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

interface Route {
  name: RouteName;
  method: string;
  pattern: RegExp;
  openApiPath: string;
}

const ROUTES: Route[] = [
  { name: 'root', method: 'GET', pattern: /^\/$/, openApiPath: '/' },
  { name: 'list', method: 'GET', pattern: /^\/collections$/, openApiPath: '/collections' },
  { name: 'allAliases', method: 'GET', pattern: /^\/aliases$/, openApiPath: '/aliases' },
  { name: 'info', method: 'GET', pattern: /^\/collections\/([^/]+)$/, openApiPath: '/collections/{collection_name}' },
  { name: 'exists', method: 'GET', pattern: /^\/collections\/([^/]+)\/exists$/, openApiPath: '/collections/{collection_name}/exists' },
  { name: 'aliases', method: 'GET', pattern: /^\/collections\/([^/]+)\/aliases$/, openApiPath: '/collections/{collection_name}/aliases' },
  { name: 'scroll', method: 'POST', pattern: /^\/collections\/([^/]+)\/points\/scroll$/, openApiPath: '/collections/{collection_name}/points/scroll' },
  { name: 'retrieve', method: 'POST', pattern: /^\/collections\/([^/]+)\/points$/, openApiPath: '/collections/{collection_name}/points' },
  { name: 'count', method: 'POST', pattern: /^\/collections\/([^/]+)\/points\/count$/, openApiPath: '/collections/{collection_name}/points/count' },
];

export async function startQdrantServer(options: QdrantServerOptions): Promise<QdrantTestServer> {
  const api: OpenApi = loadOpenApi(options.openApiPath ?? OPENAPI_PATH);
  const validator = new Validator(api, true);
  const byName = new Map(options.collections.map((c) => [c.name, c]));
  const aliasOf = new Map<string, string>();
  for (const c of options.collections) for (const a of c.aliases ?? []) aliasOf.set(a, c.name);

  const faults: Faults = { rules: [], ...options.faults };
  const requests: RequestLogEntry[] = [];
  const invalidRequests: string[] = [];
  const counts = Object.fromEntries(ROUTES.map((r) => [r.name, 0])) as Record<RouteName, number>;
  const started = process.hrtime.bigint();

  const collection = (name: string): CollectionSpec => {
    const c = byName.get(name) ?? byName.get(aliasOf.get(name) ?? '');
    if (!c) throw new HttpError(404, `Not found: Collection \`${name}\` doesn't exist!`);
    return c;
  };

  const handle = async (req: IncomingMessage, route: Route, params: string[], url: URL, body: unknown): Promise<unknown> => {
    const op = api.paths[route.openApiPath]?.[route.method.toLowerCase()] as Operation | undefined;
    if (!op) throw new Error(`route ${route.openApiPath} missing from the OpenAPI definition`);
    validateParameters(validator, op, url, invalidRequests);
    if (route.method === 'POST') {
      const schema = op.requestBody?.content['application/json'].schema;
      if (schema) {
        const problems = validator.validate(schema, body ?? {}, 'body');
        if (problems.length > 0) {
          invalidRequests.push(`${route.name}: ${problems.join('; ')}`);
          throw new HttpError(400, `Format error in JSON body: ${problems.join('; ')}`);
        }
      }
    }
    const name = params[0] ? decodeURIComponent(params[0]) : '';
    switch (route.name) {
      case 'root':
        return { title: 'qdrant - vector search engine', version: '1.19.0', commit: null };
      case 'list':
        return { collections: [...byName.keys()].map((n) => ({ name: n })) };
      case 'exists':
        return { exists: byName.has(name) || aliasOf.has(name) };
      case 'allAliases':
        return { aliases: [...aliasOf].map(([alias_name, collection_name]) => ({ alias_name, collection_name })) };
      case 'aliases': {
        const c = collection(name);
        return { aliases: (c.aliases ?? []).map((a) => ({ alias_name: a, collection_name: c.name })) };
      }
      case 'info':
        return collectionInfo(collection(name));
      case 'count':
        return { count: collection(name).points.count };
      case 'retrieve': {
        const c = collection(name);
        const b = body as ScrollBody & { ids: Array<bigint | number | string> };
        const out: unknown[] = [];
        for (const raw of b.ids) {
          const id: PointId = typeof raw === 'string' ? normalizeUuid(raw) : BigInt(raw);
          const i = lowerBound(c.points, id);
          if (i < c.points.count && compareIds(c.points.id(i), id) === 0) out.push(renderPoint(c, c.points.at(i), { ...b, with_vector: b.with_vector ?? false }));
        }
        return out;
      }
      case 'scroll': {
        const c = collection(name);
        const n = counts.scroll;
        if (faults.scrollDelayMs) await new Promise((r) => setTimeout(r, faults.scrollDelayMs));
        const result = scroll(c, (body ?? {}) as ScrollBody);
        faults.onScroll?.(n);
        return result;
      }
    }
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const route = ROUTES.find((r) => r.method === req.method && r.pattern.test(url.pathname));
        const entry: RequestLogEntry = { route: route?.name ?? 'unknown', method: req.method ?? '', path: url.pathname, body: undefined, status: 200 };
        requests.push(entry);
        try {
          checkAuth(req, options.apiKey);
          if (!route) throw new HttpError(404, '', true);
          counts[route.name]++;
          const fault = faults.rules.find((f) => f.route === route.name && f.nth.includes(counts[route.name]));
          if (fault) {
            const headers: Record<string, string> = fault.retryAfter !== undefined ? { 'retry-after': fault.retryAfter } : {};
            const msg = fault.status === 429 ? 'Too many requests: rate limit exceeded' : 'Service internal error: injected fault';
            throw new HttpError(fault.status, msg, false, headers);
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          if (raw.length > 0) {
            try {
              body = parseLossless(raw);
            } catch (e) {
              throw new HttpError(400, `Format error in JSON body: ${(e as Error).message}`);
            }
          }
          entry.body = body;
          const params = url.pathname.match(route.pattern)!.slice(1);
          const result = await handle(req, route, params, url, body);
          send(res, 200, { result, status: 'ok', time: elapsed(started) });
        } catch (e) {
          const err = e instanceof HttpError ? e : new HttpError(500, `Service internal error: ${(e as Error).message}`);
          entry.status = err.status;
          if (err.plain) {
            res.writeHead(err.status, { 'content-type': 'text/plain; charset=utf-8', ...err.headers });
            res.end(err.message);
          } else {
            send(res, err.status, { status: { error: err.message }, time: elapsed(started) }, err.headers);
          }
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    faults,
    requests,
    invalidRequests,
    counts,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}

function elapsed(since: bigint): number {
  return Number(process.hrtime.bigint() - since) / 1e9 / 1000;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(stringifyLossless(body));
}

/** Qdrant answers auth failures in plain text with 401. */
function checkAuth(req: IncomingMessage, apiKey: string | undefined): void {
  if (!apiKey) return;
  const header = req.headers['api-key'];
  const bearer = req.headers.authorization?.replace(/^Bearer\s+/i, '');
  const given = (Array.isArray(header) ? header[0] : header) ?? bearer;
  if (given === undefined) throw new HttpError(401, 'Must provide an API key or an Authorization bearer token', true);
  if (given !== apiKey) throw new HttpError(401, 'Invalid API key or JWT', true);
}

function validateParameters(validator: Validator, op: Operation, url: URL, invalid: string[]): void {
  const declared = new Map((op.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p]));
  for (const [key, raw] of url.searchParams) {
    const p = declared.get(key);
    if (!p) {
      invalid.push(`unknown query parameter ${key}`);
      throw new HttpError(400, `Query deserialize error: unknown field \`${key}\``);
    }
    const value: unknown = /^\d+$/.test(raw) ? Number(raw) : raw === 'true' ? true : raw === 'false' ? false : raw;
    const problems = validator.validate(p.schema, value, key);
    if (problems.length > 0) {
      invalid.push(problems.join('; '));
      throw new HttpError(400, `Query deserialize error: ${problems.join('; ')}`);
    }
  }
}

function collectionInfo(c: CollectionSpec): unknown {
  const vectors: Record<string, unknown> = {};
  const asParams = (v: VectorParams): Record<string, unknown> => ({
    size: v.size,
    distance: v.distance,
    ...(v.multivector_config ? { multivector_config: v.multivector_config } : {}),
    ...(v.quantization_config ? { quantization_config: v.quantization_config } : {}),
  });
  const single = c.vectors && 'size' in c.vectors && typeof c.vectors.size === 'number';
  if (c.vectors && !single) for (const [k, v] of Object.entries(c.vectors as Record<string, VectorParams>)) vectors[k] = asParams(v);
  const payloadSchema: Record<string, unknown> = {};
  for (const [field, idx] of Object.entries(c.payloadIndexes ?? {})) {
    payloadSchema[field] = { data_type: idx.data_type, ...(idx.params ? { params: idx.params } : {}), points: countWithField(c, field) };
  }
  return {
    status: 'green',
    optimizer_status: 'ok',
    indexed_vectors_count: 0,
    points_count: c.points.count,
    segments_count: 1,
    config: {
      params: {
        vectors: single ? asParams(c.vectors as VectorParams) : vectors,
        shard_number: 1,
        replication_factor: 1,
        write_consistency_factor: 1,
        on_disk_payload: true,
        ...(c.sparseVectors ? { sparse_vectors: c.sparseVectors } : {}),
      },
      hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000, max_indexing_threads: 0, on_disk: false },
      optimizer_config: {
        deleted_threshold: 0.2,
        vacuum_min_vector_number: 1000,
        default_segment_number: 0,
        max_segment_size: null,
        memmap_threshold: null,
        indexing_threshold: 10000,
        flush_interval_sec: 5,
        max_optimization_threads: null,
      },
      wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 },
      quantization_config: c.quantization ?? null,
    },
    payload_schema: payloadSchema,
  };
}

function countWithField(c: CollectionSpec, field: string): number {
  // Only small collections declare indexes; a generated collection reports its size.
  if (c.points.count > 10_000) return c.points.count;
  const path = field.replace(/\[\]/g, '').split('.');
  let n = 0;
  for (let i = 0; i < c.points.count; i++) {
    let v: unknown = c.points.at(i).payload;
    for (const k of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    if (v !== undefined && v !== null) n++;
  }
  return n;
}

interface ScrollBody {
  offset?: number | bigint | string | null;
  limit?: number | null;
  with_payload?: boolean | string[] | { include?: string[]; exclude?: string[] } | null;
  with_vector?: boolean | string[];
  filter?: unknown;
  order_by?: unknown;
  shard_key?: unknown;
}

function scroll(c: CollectionSpec, body: ScrollBody): { points: unknown[]; next_page_offset: PointId | null } {
  if (body.filter != null || body.order_by != null || body.shard_key != null) {
    throw new HttpError(400, 'Bad request: this test server serves unfiltered, id-ordered scrolls only');
  }
  const limit = body.limit ?? 10;
  let start = 0;
  if (body.offset != null) {
    const offset: PointId = typeof body.offset === 'string' ? normalizeUuid(body.offset) : BigInt(body.offset);
    start = lowerBound(c.points, offset);
  }
  const end = Math.min(start + limit, c.points.count);
  const points: unknown[] = [];
  for (let i = start; i < end; i++) points.push(renderPoint(c, c.points.at(i), body));
  const next = end < c.points.count ? c.points.id(end) : null;
  if (next !== null && end > 0 && compareIds(c.points.id(end - 1), next) >= 0) throw new Error('points out of order');
  return { points, next_page_offset: next };
}

function renderPoint(c: CollectionSpec, p: StoredPoint, body: ScrollBody): Record<string, unknown> {
  const out: Record<string, unknown> = { id: p.id };
  const wp = body.with_payload ?? true;
  if (wp !== false) out.payload = selectPayload(p.payload ?? {}, wp);
  const wv = body.with_vector ?? false;
  if (wv !== false && p.vector !== null) {
    const single = c.vectors && 'size' in c.vectors && typeof c.vectors.size === 'number' && !c.sparseVectors;
    if (single) out.vector = p.vector;
    else {
      const named = p.vector as Record<string, unknown>;
      out.vector = Array.isArray(wv) ? Object.fromEntries(Object.entries(named).filter(([k]) => wv.includes(k))) : named;
    }
  }
  return out;
}

function selectPayload(payload: Record<string, unknown>, wp: NonNullable<ScrollBody['with_payload']>): Record<string, unknown> {
  if (wp === true) return payload;
  const include = Array.isArray(wp) ? wp : (wp as { include?: string[] }).include;
  const exclude = Array.isArray(wp) ? undefined : (wp as { exclude?: string[] }).exclude;
  return Object.fromEntries(
    Object.entries(payload).filter(([k]) => (include ? include.includes(k) : true) && !(exclude ?? []).includes(k)),
  );
}

export type { Schema };
