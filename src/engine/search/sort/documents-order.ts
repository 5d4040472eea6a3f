/**
 * `sort` on the documents routes (`GET /documents`, `POST /documents/fetch`): the page of the
 * candidates in sort order, walking the sort buckets only as far as the page needs. Errors are
 * `invalid_document_sort`; the `sort` ranking rule is not needed, only sortable attributes.
 */
import type { Index } from '../../index/index.js';
import type { Bitmap } from '../../index/store.js';
import { sortBuckets } from './buckets.js';
import { parseSort, type SortCriterion } from './parse.js';

export function sortedDocumentsPage(index: Index, candidates: Bitmap, sort: unknown, page: { offset: number; limit: number }): number[] | null {
  const criteria = parseSort(sort, index.settings, { errorCode: 'invalid_document_sort', requireSortRule: false });
  if (!criteria) return null;
  const end = page.offset + page.limit;
  const out: number[] = [];
  const refine = (bucket: Bitmap, depth: number, criteria: readonly SortCriterion[]): void => {
    if (out.length >= end) return;
    if (depth === criteria.length || bucket.size <= 1) {
      for (const docid of bucket) {
        if (out.length >= end) return;
        out.push(docid);
      }
      return;
    }
    for (const sub of sortBuckets(index.store, bucket, criteria[depth]!)) {
      if (out.length >= end) return;
      refine(sub, depth + 1, criteria);
    }
  };
  refine(candidates, 0, criteria);
  return out.slice(page.offset, end);
}
