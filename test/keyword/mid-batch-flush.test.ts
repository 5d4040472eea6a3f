/**
 * A batch whose deltas outgrow their bound is merged into LMDB mid-batch, flush after flush
 * inside its write transaction, each flush merging into what the previous ones wrote (and
 * sending a grown list's later additions to its tail). The default bound is only reached past
 * some 30,000 documents, so here it is lowered: the databases and the answers must be those of
 * the same documents written in one flush.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import { setFlushThreshold } from '../../src/engine/search/keyword/extension.js';
import { keywordDbs, POSTING_DBS } from '../../src/engine/search/keyword/layout.js';
import type { Document } from '../../src/engine/types.js';
import { movies as moviesData } from '../data.js';
import { dumpKeyword, openTestIndex, type TestIndex } from './helpers.js';

const SETTINGS = { searchableAttributes: ['title', 'cast', 'genres', 'extract'] };
/** Pending postings of some ten of these films: the 1,500 of a batch take 145 flushes. */
const LOW_BOUND = 2_000;

const QUERIES = ['the', 'love story', 'star wa', 'war of the', 'john', 'american drama', 'the restored', 'restored cut', 'comedy film', 'th'];

function sameAnswers(x: TestIndex, y: TestIndex): void {
  for (const q of QUERIES) {
    const query = { q, limit: 100, showRankingScoreDetails: true, attributesToRetrieve: ['id'] };
    const [rx, ry] = [search(x.index, query), search(y.index, query)];
    expect({ q, total: rx.estimatedTotalHits, hits: rx.hits }).toEqual({ q, total: ry.estimatedTotalHits, hits: ry.hits });
  }
}

const tailCount = (t: TestIndex): number => {
  const dbs = keywordDbs(t.index.store);
  return POSTING_DBS.reduce((sum, name) => sum + dbs.tails[name].getKeysCount(), 0);
};

const copies = (docs: Document[]): Document[] => docs.map((d) => JSON.parse(JSON.stringify(d)) as Document);

describe('a batch merged mid-batch, flush after flush', () => {
  let films: Document[];
  const open: TestIndex[] = [];
  const index = (): TestIndex => {
    const t = openTestIndex(SETTINGS);
    open.push(t);
    return t;
  };

  beforeAll(() => {
    films = moviesData().slice(0, 1_800);
  });
  afterEach(() => setFlushThreshold());
  afterAll(async () => {
    for (const t of open.splice(0)) await t.close();
  });

  it('writes the databases one flush would, whether extraction began before the transaction or in it', async () => {
    const oneFlush = index();
    oneFlush.add(copies(films.slice(0, 1_500)));
    expect(tailCount(oneFlush)).toBe(0);

    setFlushThreshold(LOW_BOUND);
    // the task processors' path: extraction up to the bound before the transaction, the rest in it
    const prepared = index();
    await prepared.addPrepared(copies(films.slice(0, 1_500)));
    // everything in the transaction
    const inTransaction = index();
    inTransaction.add(copies(films.slice(0, 1_500)));

    for (const t of [prepared, inTransaction]) {
      // lists that grew long in an early flush took the later flushes' additions into tails
      expect(tailCount(t)).toBeGreaterThan(0);
      expect(dumpKeyword(t)).toEqual(dumpKeyword(oneFlush));
      sameAnswers(t, oneFlush);
    }
  }, 120_000);

  it('replacements, partial updates, new documents and deletions flushed mid-batch end as a fresh build of the result', async () => {
    const base = films.slice(0, 1_500);
    const replaced = base.slice(0, 120).map((m) => ({ ...m, title: `${String(m.title)} the restored cut`, extract: undefined }));
    const patched = base.slice(120, 180).map((m) => ({ id: m.id, genres: ['Comedy', 'Film'] }));
    const added = films.slice(1_500, 1_800);
    const removed = [...base.slice(300, 360), ...added.slice(0, 20)].map((m) => String(m.id));

    setFlushThreshold(LOW_BOUND);
    const incremental = index();
    await incremental.addPrepared(copies(base));
    // one batch of replacements and new documents interleaved, the update path meeting new keys
    const mixed: Document[] = [];
    for (let i = 0; i < Math.max(replaced.length, added.length); i++) mixed.push(...[replaced[i], added[i]].filter((d): d is Document => d !== undefined));
    await incremental.addPrepared(copies(mixed));
    incremental.add(copies(patched), 'update');
    await incremental.removePrepared(removed);
    setFlushThreshold();

    const gone = new Set(removed);
    const byId = new Map<unknown, Document>();
    for (const m of [...base, ...added]) byId.set(m.id, m);
    for (const r of replaced) byId.set(r.id, r);
    for (const p of patched) byId.set(p.id, { ...byId.get(p.id)!, ...p });
    const fresh = index();
    fresh.add(copies([...byId.values()].filter((m) => !gone.has(String(m.id)))));

    expect(dumpKeyword(incremental)).toEqual(dumpKeyword(fresh));
    sameAnswers(incremental, fresh);
    expect(search(incremental.index, { q: 'restored cut', limit: 200 }).estimatedTotalHits).toBeGreaterThanOrEqual(replaced.length);
  }, 120_000);
});
