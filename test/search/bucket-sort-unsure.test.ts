/**
 * A rule's bucket may hold documents it has not checked (Unsure in ranking/rules.ts): the bucket
 * sort asks about each before returning it, and a document that belongs to a later bucket of the
 * rule comes from there, with that bucket's rank, never twice, and without having used up its
 * `distinct` value on the way.
 */
import roaring from 'roaring';
import { describe, expect, it } from 'vitest';
import { bucketSort } from '../../src/engine/search/ranking/bucket-sort.js';
import type { Bucket, RankingContext, RankingRule } from '../../src/engine/search/ranking/rules.js';

const { RoaringBitmap32 } = roaring;

/**
 * A rule that puts documents 1-4 in its first bucket, 2 and 4 unchecked; checking finds that 2
 * belongs to its second bucket and 4 to its first. Records what it was asked.
 */
function unsureRule(asked: number[]): RankingRule {
  return {
    key: 'proximity',
    needsTerms: true,
    *split(_docids, active) {
      const unread = new RoaringBitmap32([2, 4]);
      const later: number[] = [];
      const first: Bucket = {
        docids: new RoaringBitmap32([1, 2, 3, 4]),
        active,
        detail: { key: 'proximity', rank: 2, maxRank: 2 },
        unsure: {
          docs: unread,
          admit(docid) {
            if (!unread.has(docid)) return true;
            unread.remove(docid);
            asked.push(docid);
            if (docid === 2) later.push(docid);
            return docid !== 2;
          },
        },
      };
      yield first;
      yield { docids: [...later, 5], active, detail: { key: 'proximity', rank: 1, maxRank: 2 } };
    },
  };
}

/**
 * A later rule that also holds its bucket unchecked, as exactness does with its "starts with the
 * query" candidates: the documents it was not asked about (the search went on without them) it
 * yields again in its second bucket.
 */
function unsureInnerRule(): RankingRule {
  return {
    key: 'exactness',
    needsTerms: true,
    *split(docids, active) {
      const unread = new RoaringBitmap32(docids as number[] | roaring.RoaringBitmap32);
      yield {
        docids,
        active,
        detail: { key: 'exactness', rank: 2, maxRank: 2 },
        unsure: {
          docs: unread,
          admit(docid) {
            unread.remove(docid);
            return true;
          },
        },
      };
      yield { docids: unread.toArray(), active, detail: { key: 'exactness', rank: 1, maxRank: 2 } };
    },
  };
}

// the bucket sort only reads the number of terms from the context for these buckets
const ctx = { terms: [{}, {}] } as unknown as RankingContext;

const sort = (asked: number[], want: number, distinct?: (docid: number) => boolean) =>
  bucketSort([unsureRule(asked)], new RoaringBitmap32([1, 2, 3, 4, 5]), ctx, { want, threshold: null, deadline: null, distinct });

/** The documents as unsureRule ranks them once checked: 2 from its second bucket, once. */
const RANKED = [
  [1, 2],
  [3, 2],
  [4, 2],
  [2, 1],
  [5, 1],
];

describe('unchecked documents in a bucket', () => {
  it('come from the bucket where they belong, once, with its rank', () => {
    const asked: number[] = [];
    const { hits } = sort(asked, 10);
    expect(hits.map((h) => [h.docid, h.details[0]!.rank])).toEqual(RANKED);
    expect(asked).toEqual([2, 4]);
  });

  it('turned away by one rule, do not come back from a later rule under the same bucket', () => {
    const { hits } = bucketSort([unsureRule([]), unsureInnerRule()], new RoaringBitmap32([1, 2, 3, 4, 5]), ctx, { want: 10, threshold: null, deadline: null });
    // 2 is turned away by the first rule before the second is asked about it, so the second
    // yields it again; it still comes once, from the first rule's later bucket
    expect(hits.map((h) => [h.docid, h.details[0]!.rank])).toEqual(RANKED);
  });

  it('are not checked past the page the search needs', () => {
    const asked: number[] = [];
    const { hits } = sort(asked, 1);
    expect(hits.map((h) => h.docid)).toEqual([1]);
    expect(asked).toEqual([]);
  });

  it('do not use up their distinct value in a bucket they are not returned from', () => {
    // 2 and 3 share a value: 2, moved to the later bucket, must leave it to 3
    const value = new Map([[1, 'a'], [2, 'b'], [3, 'b'], [4, 'c'], [5, 'd']]);
    const seen = new Set<string>();
    const distinct = (docid: number) => {
      const v = value.get(docid)!;
      if (seen.has(v)) return false;
      seen.add(v);
      return true;
    };
    const { hits } = sort([], 10, distinct);
    expect(hits.map((h) => h.docid)).toEqual([1, 3, 4, 5]);
  });
});
