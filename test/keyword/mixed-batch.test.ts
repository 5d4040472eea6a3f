/**
 * A batch can hold replacements of stored documents and new documents at once: the replacements
 * go through the update path (their stored keys diffed against the new ones), the new documents
 * straight into the batch's deltas, and both meet on the same words, prefixes, pairs and values.
 * The index must then answer exactly as one built from the final documents.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import type { Document } from '../../src/engine/types.js';
import { openTestIndex, type TestIndex } from './helpers.js';

const STORED: Document[] = [
  { id: 'a', title: 'alpha beta gamma', tags: ['old'] },
  { id: 'b', title: 'the lazy dog', tags: ['old', 'dog'] },
  { id: 'c', title: 'the quick brown fox', tags: ['fox'] },
];

/** Replacements and new documents interleaved, so that each kind comes both before and after the other. */
const BATCH: Document[] = [
  { id: 'a', title: 'the quick red fox', tags: ['fox', 'red'] },
  { id: 'd', title: 'the quick red fox jumps', tags: ['fox'] },
  { id: 'b', title: 'the sleepy fox', tags: ['sleepy fox'] },
  { id: 'e', title: 'alpha the quick', tags: ['red'] },
  { id: 'c', title: 'gamma ray', tags: ['old'] },
];

function finalDocuments(): Document[] {
  const byId = new Map<unknown, Document>();
  for (const doc of [...STORED, ...BATCH]) byId.set(doc.id, doc);
  return [...byId.values()];
}

/** Every keystroke of these, and a few whole words. */
const QUERIES = (() => {
  const out = new Set<string>(['beta', 'brown', 'lazy', 'dog', 'old', 'sleepy fox', 'red']);
  for (const text of ['the quick red fox', 'the sleepy fox', 'alpha the quick', 'gamma ray', 'the lazy dog']) {
    for (let n = 1; n <= text.length; n++) if (text[n - 1] !== ' ') out.add(text.slice(0, n));
  }
  return [...out];
})();

/** Per query: the matching documents by id, each with its ranking details (independent of docids). */
function answers(t: TestIndex): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const q of QUERIES) {
    const r = search(t.index, { q, limit: 50, showRankingScoreDetails: true });
    out[q] = r.hits.map((h) => [h.id, h._rankingScoreDetails]).sort((x, y) => String(x[0]).localeCompare(String(y[0])));
  }
  return out;
}

const open: TestIndex[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

function index(): TestIndex {
  const t = openTestIndex();
  open.push(t);
  return t;
}

describe('a batch of replacements and new documents together', () => {
  it('answers as an index built from the final documents, prepared before the transaction', async () => {
    const fresh = index();
    await fresh.addPrepared(finalDocuments());
    const updated = index();
    await updated.addPrepared(STORED);
    await updated.addPrepared(BATCH);
    const expected = answers(fresh);
    // The replaced and the new documents that both hold the pair are found.
    expect((expected['the quick r'] as Array<[string]>).map(([id]) => id)).toEqual(expect.arrayContaining(['a', 'd']));
    expect((expected['beta'] as unknown[]).length).toBe(0);
    expect(answers(updated)).toEqual(expected);
  });

  it('answers the same when the batch is extracted inside the transaction', async () => {
    const fresh = index();
    fresh.add(finalDocuments());
    const updated = index();
    updated.add(STORED);
    updated.add(BATCH);
    expect(answers(updated)).toEqual(answers(fresh));
  });
});
