/**
 * The page reader on a worker thread (src/migrate/qdrant/background-scroll.ts). Its worker script
 * is compiled JavaScript, so this test runs the built modules (dist/, compiled by the global
 * set-up) against the Qdrant test server: pages arrive in order, the worker reads ahead while
 * the caller is busy but stops at its page and byte bounds, and a failing page reaches the
 * caller as the same MigrationError.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { citiesCollection } from '../qdrant-server/fixtures.js';
import { startQdrantServer, type QdrantTestServer } from '../qdrant-server/server.js';

type BackgroundModule = typeof import('../../src/migrate/qdrant/background-scroll.js');
type HttpModule = typeof import('../../src/migrate/qdrant/http.js');
const dist = (file: string) => pathToFileURL(join(process.cwd(), 'dist/src/migrate/qdrant', file)).href;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let qdrant: QdrantTestServer;
let scrollInBackground: BackgroundModule['scrollInBackground'];
let QdrantHttp: HttpModule['QdrantHttp'];

beforeAll(async () => {
  qdrant = await startQdrantServer({ collections: [citiesCollection()] });
  ({ scrollInBackground } = (await import(dist('background-scroll.js'))) as BackgroundModule);
  ({ QdrantHttp } = (await import(dist('http.js'))) as HttpModule);
});
afterAll(async () => {
  await qdrant.close();
});

const options = { start: null, pageSize: 20, withVector: true };

/** Scroll requests Qdrant served while the caller sat on the first page. */
async function servedWhileBusy(ahead: { points: number; bytes: number }): Promise<{ served: number; ids: string[] }> {
  const before = qdrant.counts.scroll;
  const pages = scrollInBackground(new QdrantHttp({ url: qdrant.url }), 'cities', options, ahead);
  const ids: string[] = [];
  const first = await pages.next();
  ids.push(...first.value!.points.map((p) => p.id));
  // the caller is busy until the worker has stopped asking for pages (unchanged for 300 ms)
  let last = -1;
  for (let waited = 0; waited < 10_000 && qdrant.counts.scroll !== last; waited += 300) {
    last = qdrant.counts.scroll;
    await sleep(300);
  }
  const served = qdrant.counts.scroll - before;
  for await (const page of pages) ids.push(...page.points.map((p) => p.id));
  return { served, ids };
}

describe('pages read on a worker thread', () => {
  it('reads ahead while the caller is busy, up to its page bound, and delivers every point once, in order', async () => {
    // 60 points ahead = 3 pages posted and not taken, plus the one the scroll holds and the one it is fetching
    const { served, ids } = await servedWhileBusy({ points: 60, bytes: 1 << 30 });
    expect(served).toBeGreaterThanOrEqual(4);
    expect(served).toBeLessThanOrEqual(5);
    expect(ids).toHaveLength(500);
    expect(new Set(ids).size).toBe(500);
    expect(ids).toEqual([...ids].sort((a, b) => Number(a) - Number(b)));
  });

  it('stops at its byte bound, however many points that is', async () => {
    // one byte: a single page not taken at a time
    const { served, ids } = await servedWhileBusy({ points: 100_000, bytes: 1 });
    expect(served).toBeLessThanOrEqual(3);
    expect(ids).toHaveLength(500);
  });

  it('hands a page that keeps failing to the caller as the same MigrationError, after the pages before it', async () => {
    const n = qdrant.counts.scroll;
    qdrant.faults.rules.push({ route: 'scroll', nth: [n + 3], status: 500 });
    const seen: number[] = [];
    let error: { name?: string; kind?: string; message?: string } | undefined;
    try {
      for await (const page of scrollInBackground(new QdrantHttp({ url: qdrant.url, retry: { retries: 0 } }), 'cities', options)) seen.push(page.points.length);
    } catch (e) {
      error = e as typeof error;
    } finally {
      qdrant.faults.rules = [];
    }
    expect(seen).toEqual([20, 20]);
    expect(error).toMatchObject({ name: 'MigrationError', kind: 'http', message: expect.stringMatching(/^Qdrant answered 500 to POST \/collections\/cities\/points\/scroll/) });
  });
});
