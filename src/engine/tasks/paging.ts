/**
 * One page of a cursor list (`GET /tasks`, `GET /batches`) read from a bitmap of uids by rank:
 * newest first unless `reverse`, starting at `from`, `next` the uid that follows the page. The
 * cost is the page's, whatever the size of the set.
 */
import type { Bitmap } from './store.js';

export interface CursorQuery {
  from?: number;
  limit?: number;
  reverse?: boolean;
}

export function cursorPage(set: Bitmap, query: CursorQuery): { uids: number[]; next: number | null } {
  const limit = query.limit ?? 20;
  const from = query.from === undefined ? undefined : Math.min(query.from, 0xffffffff);
  const at = (rank: number) => (rank >= 0 ? (set.select(rank) ?? null) : null);
  const uids: number[] = [];
  if (query.reverse) {
    // ascending from the first uid >= from
    const first = from === undefined || from === 0 ? 0 : set.rank(from - 1);
    for (let rank = first; uids.length < limit; rank++) {
      const uid = at(rank);
      if (uid === null) break;
      uids.push(uid);
    }
    return { uids, next: at(first + limit) };
  }
  // descending from the last uid <= from
  const last = (from === undefined ? set.size : set.rank(from)) - 1;
  for (let rank = last; rank >= 0 && uids.length < limit; rank--) uids.push(at(rank)!);
  return { uids, next: at(last - limit) };
}
