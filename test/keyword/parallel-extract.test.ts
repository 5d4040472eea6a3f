/**
 * With SEARCH_PARALLEL_EXTRACTION=1, a large batch of documents new to the index is extracted on
 * two threads (the later part in the extraction thread, see
 * src/engine/search/keyword/parallel-extract.ts): the keyword
 * databases must come out byte for byte as when one thread extracts it all, and searches must
 * rank the same, after later additions, updates and deletions too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import { keywordDbs, POSTING_DBS } from '../../src/engine/search/keyword/layout.js';
import { documentsExtractedElsewhere } from '../../src/engine/search/keyword/parallel-extract.js';
import { movies } from '../data.js';
import { openTestIndex, type TestIndex } from './helpers.js';

const FIELDS = ['title', 'cast', 'genres', 'extract'];

/** Every entry of every keyword database, values as base64 (binary) or JSON. */
function contents(t: TestIndex): Record<string, Array<[unknown, string]>> {
  const dbs = keywordDbs(t.index.store);
  const named: Record<string, { getRange(): Iterable<{ key: unknown; value: unknown }> }> = {
    docs: dbs.docs,
    idBlocks: dbs.idBlocks,
    meta: dbs.meta,
  };
  for (const name of POSTING_DBS) {
    named[name] = dbs[name];
    named[`${name}-tail`] = dbs.tails[name];
  }
  const out: Record<string, Array<[unknown, string]>> = {};
  for (const [name, db] of Object.entries(named)) {
    out[name] = [...db.getRange()].map(({ key, value }) => [key, value instanceof Uint8Array ? Buffer.from(value).toString('base64') : JSON.stringify(value)]);
  }
  return out;
}

const QUERIES = ['the s', 'star wars', 'john', 'the man who', 'love', 'comedy drama', 'a ni', 'of the', 'batman returns', 'zz'];

function ranking(t: TestIndex): unknown[] {
  return QUERIES.map((q) => {
    const r = search(t.index, { q, limit: 20, showRankingScoreDetails: true });
    return [q, r.estimatedTotalHits, r.hits.map((h) => [h.id, h._rankingScoreDetails])];
  });
}

/** Runs `work` with the extraction thread on (it is off by default). */
async function inTwoThreads(work: () => Promise<void>): Promise<void> {
  process.env.SEARCH_PARALLEL_EXTRACTION = '1';
  try {
    await work();
  } finally {
    delete process.env.SEARCH_PARALLEL_EXTRACTION;
  }
}

describe('keyword extraction on two threads', () => {
  const docs = movies();
  let one: TestIndex;
  let two: TestIndex;

  beforeAll(() => {
    one = openTestIndex({ searchableAttributes: FIELDS });
    two = openTestIndex({ searchableAttributes: FIELDS });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  async function both(step: (t: TestIndex) => Promise<void>): Promise<number> {
    let before = documentsExtractedElsewhere();
    await step(one);
    expect(documentsExtractedElsewhere()).toBe(before);
    before = documentsExtractedElsewhere();
    await inTwoThreads(() => step(two));
    return documentsExtractedElsewhere() - before;
  }

  it('writes the same keyword databases as one thread for a first batch of new documents', async () => {
    const elsewhere = await both((t) => t.addPrepared(docs.slice(0, 5000)));
    expect(elsewhere).toBeGreaterThanOrEqual(2000);
    expect(contents(two)).toEqual(contents(one));
    expect(ranking(two)).toEqual(ranking(one));
  }, 180_000);

  it('and for new documents added to a filled index, then updates and deletions', async () => {
    expect(await both((t) => t.addPrepared(docs.slice(5000)))).toBeGreaterThan(1000);
    expect(contents(two)).toEqual(contents(one));
    // updates read what was indexed: they stay in the write thread
    const renamed = docs.slice(0, 2500).map((d) => ({ ...d, title: `${d.title} the return` }));
    expect(await both((t) => t.addPrepared(renamed))).toBe(0);
    await both((t) => t.removePrepared(docs.slice(2500, 2700).map((d) => String(d.id))));
    expect(contents(two)).toEqual(contents(one));
    expect(ranking(two)).toEqual(ranking(one));
  }, 180_000);
});
