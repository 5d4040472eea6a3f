/** A real engine in a temporary directory behind a real server on an ephemeral loopback port. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine, type EngineOptions } from '../../src/engine/engine.js';
import { createServer, type ServerOptions, type SearchServer } from '../../src/http/server.js';

export interface Harness {
  engine: Engine;
  server: SearchServer;
  url: string;
  dir: string;
  request(method: string, path: string, o?: RequestOptions): Promise<Reply>;
  /** Wait until a task is finished and return it. */
  wait(taskUid: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export interface RequestOptions {
  /** Sent as JSON with `application/json` unless `raw` or `contentType` say otherwise. */
  json?: unknown;
  raw?: string | Buffer;
  contentType?: string | null;
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export async function startHarness(options: ServerOptions = {}, engineOptions: Pick<EngineOptions, 'searchThreads' | 'logLevel'> = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'search-http-'));
  const engine = await Engine.open({ dbPath: join(dir, 'data.ms'), logLevel: 'off', ...engineOptions });
  const server = createServer(engine, options);
  const { url } = await server.listen('127.0.0.1:0');

  async function request(method: string, path: string, o: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    let body: string | Buffer | undefined;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers['content-type'] = 'application/json';
    }
    // A Buffer, so that fetch adds no Content-Type of its own (it would add text/plain to a string).
    if (o.raw !== undefined) body = typeof o.raw === 'string' ? Buffer.from(o.raw) : o.raw;
    if (o.contentType) headers['content-type'] = o.contentType;
    if (o.contentType === null) delete headers['content-type'];
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
  }

  return {
    engine,
    server,
    url,
    dir,
    request,
    async wait(taskUid: number) {
      return (await engine.waitForTask(taskUid, { timeoutMs: 280_000 })) as unknown as Record<string, unknown>;
    },
    async stop() {
      await server.close();
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The error body every failure must have. */
export function expectErrorShape(body: any, code?: string): void {
  const keys = Object.keys(body ?? {}).sort();
  if (keys.join(',') !== 'code,link,message,type') throw new Error(`not an error body: ${JSON.stringify(body)}`);
  if (typeof body.message !== 'string' || body.message === '') throw new Error('empty message');
  if (body.link !== `https://docs.meilisearch.com/errors#${body.code}`) throw new Error(`bad link ${body.link}`);
  if (code !== undefined && body.code !== code) throw new Error(`expected code ${code}, got ${body.code}: ${body.message}`);
}
