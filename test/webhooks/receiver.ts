/** A local webhook receiver for tests: records every call, decompressed, and can be switched off. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The NDJSON lines, parsed. */
  lines: Array<Record<string, unknown>>;
  raw: string;
}

export class Receiver {
  readonly calls: ReceivedCall[] = [];
  /** Status to answer with (e.g. 500 to simulate a failing receiver). */
  status = 200;
  private server: Server | null = null;
  port = 0;
  private waiters: Array<{ n: number; resolve: () => void }> = [];

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Listen (again) on the same port when `port` is already set, so a URL stays valid across restarts. */
  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const raw = req.headers['content-encoding'] === 'gzip' ? gunzipSync(body).toString('utf8') : body.toString('utf8');
        const lines = raw
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        this.calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, lines, raw });
        res.statusCode = this.status;
        res.end();
        this.waiters = this.waiters.filter((w) => (this.calls.length >= w.n ? (w.resolve(), false) : true));
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `n` calls have been received in total. */
  waitForCalls(n: number, timeoutMs = 10_000): Promise<void> {
    if (this.calls.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`expected ${n} webhook calls, got ${this.calls.length}`)), timeoutMs);
      this.waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }
}
