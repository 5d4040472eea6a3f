import { describe, expect, it } from 'vitest';
import { MigrationError } from '../../src/migrate/errors.js';
import type { QdrantHttp } from '../../src/migrate/qdrant/http.js';
import { QdrantSource } from '../../src/migrate/qdrant/source.js';

/** A scroll endpoint over ids 0..total-1 that records when each page is asked for. */
function fakeQdrant(total: number, failAt?: number) {
  const log: string[] = [];
  const http = {
    baseUrl: 'http://fake',
    async requestSized(_method: string, _path: string, body: { offset?: bigint; limit: number }) {
      const from = body.offset === undefined ? 0 : Number(body.offset);
      log.push(`request ${from}`);
      await new Promise((r) => setTimeout(r, 5));
      if (from === failAt) throw new MigrationError('http', `page at ${from} failed`);
      const ids = Array.from({ length: Math.min(body.limit, total - from) }, (_, i) => from + i);
      const next = from + body.limit < total ? BigInt(from + body.limit) : null;
      return { result: { points: ids.map((id) => ({ id: BigInt(id), payload: { n: id }, vector: [id] })), next_page_offset: next }, length: 10 * ids.length };
    },
  };
  return { source: new QdrantSource(http as unknown as QdrantHttp), log };
}

describe('QdrantSource.scroll', () => {
  it('asks for the next page while the caller works on the current one, never more than one ahead', async () => {
    const { source, log } = fakeQdrant(25);
    const seen: string[] = [];
    for await (const page of source.scroll('c', { start: null, pageSize: 10, withVector: true })) {
      log.push(`got ${page.offset ?? 0}`);
      seen.push(...page.points.map((p) => p.id));
      // the caller is busy: the next page is already on its way, the one after is not
      await new Promise((r) => setTimeout(r, 20));
      log.push(`done ${page.offset ?? 0}`);
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => String(i)));
    expect(log).toEqual(['request 0', 'request 10', 'got 0', 'done 0', 'request 20', 'got 10', 'done 10', 'got 20', 'done 20']);
  });

  it('reports the page sizes of each page, and a failed page when the caller reaches it', async () => {
    const { source } = fakeQdrant(30, 20);
    const lengths: number[] = [];
    await expect(
      (async () => {
        for await (const page of source.scroll('c', { start: null, pageSize: 10, withVector: true })) lengths.push(page.length);
      })(),
    ).rejects.toThrow('page at 20 failed');
    expect(lengths).toEqual([100, 100]);
  });

  it('leaves no unhandled rejection when the caller stops before a failing prefetched page', async () => {
    const { source } = fakeQdrant(30, 10);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      for await (const page of source.scroll('c', { start: null, pageSize: 10, withVector: true })) {
        expect(page.points).toHaveLength(10);
        break;
      }
      await new Promise((r) => setTimeout(r, 30));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
