/**
 * A real engine and server with keys and webhooks enabled (as `search serve` assembles them), on
 * an ephemeral loopback port. Search methods are stood in by a recorder when the engine has none
 * yet, so that the search routes exist and the test sees exactly what reaches the engine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../../src/engine/engine.js';
import { createSecurity, type Security, type SecurityOptions } from '../../src/http/auth.js';
import type { HttpEngine } from '../../src/http/engine-port.js';
import { createServer, type SearchServer } from '../../src/http/server.js';
import type { RouteModule } from '../../src/http/routes/index.js';

export interface SecuredHarness {
  engine: Engine;
  security: Security;
  server: SearchServer;
  url: string;
  /** Bodies that reached the engine's search methods: [method, indexUid, body]. */
  searches: Array<[string, string | null, any]>;
  /** What the guard was asked for the latest request: the route's action and target index. */
  lastAccess: { action: string | null; indexUid: string | null } | null;
  request(method: string, path: string, o?: { json?: unknown; key?: string | null; headers?: Record<string, string> }): Promise<{ status: number; body: any; text: string }>;
  stop(): Promise<void>;
}

export async function startSecured(
  o: Partial<Omit<SecurityOptions, 'dbPath' | 'scheduler' | 'log' | 'outbox'>> & {
    logs?: string[];
    /** Serve the engine's own search methods (recording what reaches them) instead of stand-ins. */
    realSearch?: boolean;
    /** Further route modules (metrics, preview page…), built once the engine and security exist. */
    routes?: (engine: Engine, security: Security) => RouteModule[];
    /** Use (and keep at stop) this directory, to start again on the same database. */
    dir?: string;
    /** Where the engine's write side runs (default: the engine's choice, a thread on the test machine). */
    writeHost?: 'thread' | 'process';
  } = {},
): Promise<SecuredHarness> {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'search-auth-'));
  const dbPath = join(dir, 'data.ms');
  const engine = await Engine.open({ dbPath, logLevel: 'off', writeHost: o.writeHost });
  const security = createSecurity({
    dbPath,
    env: o.env ?? 'development',
    masterKey: o.masterKey ?? null,
    taskWebhookUrl: o.taskWebhookUrl ?? null,
    taskWebhookAuthorizationHeader: o.taskWebhookAuthorizationHeader ?? null,
    allowedIpNetworks: o.allowedIpNetworks ?? null,
    scheduler: engine.scheduler,
    outbox: engine.webhookOutbox,
    webhookDelivery: o.webhookDelivery,
    log: (level, message) => o.logs?.push(`${level} ${message}`),
  });
  const searches: SecuredHarness['searches'] = [];
  const recorder = (name: 'search' | 'multiSearch' | 'facetSearch' | 'similar') =>
    function (this: unknown, uid: string | unknown, body?: unknown, ...options: unknown[]) {
      const real = (engine as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined>)[name];
      if (o.realSearch && real) {
        searches.push(name === 'multiSearch' ? [name, null, uid] : [name, uid as string, body]);
        // read options (which foreign indexes the key may read) go through as the engine got them
        return name === 'multiSearch' ? real.call(engine, uid, body) : real.call(engine, uid, body, ...options);
      }
      if (name === 'multiSearch') {
        searches.push([name, null, uid]);
        return { results: [] };
      }
      searches.push([name, uid as string, body]);
      return { hits: [], query: '', processingTimeMs: 0, limit: 20, offset: 0, estimatedTotalHits: 0 };
    };
  const engineForHttp = Object.assign(Object.create(engine) as HttpEngine, {
    search: recorder('search'),
    multiSearch: recorder('multiSearch'),
    facetSearch: recorder('facetSearch'),
    similar: recorder('similar'),
  });
  const harness = { lastAccess: null } as SecuredHarness;
  const server = createServer(engineForHttp, {
    guard: (request, access) => {
      harness.lastAccess = access;
      return security.guard(request, access);
    },
    routes: [...security.routes, ...(o.routes?.(engine, security) ?? [])],
  });
  const { url } = await server.listen('127.0.0.1:0');

  return Object.assign(harness, {
    engine,
    security,
    server,
    url,
    searches,
    async request(method, path, ro = {}) {
      const headers: Record<string, string> = { ...(ro.headers ?? {}) };
      if (ro.key) headers.authorization = `Bearer ${ro.key}`;
      let body: Buffer | undefined;
      if (ro.json !== undefined) {
        body = Buffer.from(JSON.stringify(ro.json));
        headers['content-type'] = 'application/json';
      }
      const response = await fetch(url + path, { method, headers, body });
      const text = await response.text();
      let parsed: any;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, body: parsed, text };
    },
    async stop() {
      await server.close();
      await security.close();
      await engine.close();
      if (!o.dir) rmSync(dir, { recursive: true, force: true });
    },
  } satisfies Omit<SecuredHarness, 'lastAccess'>);
}

/** Every (method, path) the server serves, read from fastify's route tree (HEAD aside). */
export function listRoutes(server: SearchServer): Array<{ method: string; path: string }> {
  const tree = server.app.printRoutes({ commonPrefix: false });
  const out: Array<{ method: string; path: string }> = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)(?:├── |└── )(\S+)(?: \(([^)]*)\))?/.exec(line.replace(/\u00a0/g, ' '));
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    const path = (depth > 0 ? stack[depth - 1]! : '') + m[2]!;
    stack[depth] = path;
    for (const method of (m[3] ?? '').split(', ')) if (method !== '' && method !== 'HEAD') out.push({ method, path });
  }
  return out;
}
