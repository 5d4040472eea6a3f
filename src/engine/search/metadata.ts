/**
 * Search metadata (the reference's `Meili-Include-Metadata` request header): each query's answer
 * names the query with a fresh UUID v7 (`queryUid`, time-ordered, so that analytics can join a
 * later click or conversion to the search that showed the hit), the index searched and its
 * primary key. A single search answers one `metadata` object, each result of a multi-search its
 * own, and a federated search an array with one entry per query, in the order of the queries.
 */
import { randomBytes } from 'node:crypto';

export interface SearchMetadata {
  queryUid: string;
  indexUid: string;
  /** Absent when the index has no primary key yet. */
  primaryKey?: string;
  /** Federated searches only: the query's text, when it is not a placeholder search. */
  query?: string;
}

/** Whether a request asked for metadata: the header set to `true` (any case) or `1`. */
export function wantsMetadata(header: string | string[] | undefined): boolean {
  const value = (Array.isArray(header) ? header[0] : header)?.trim().toLowerCase();
  return value === 'true' || value === '1';
}

/** A UUID v7 (RFC 9562): 48 bits of Unix milliseconds, the version, then 74 random bits. */
export function uuidV7(now = Date.now()): string {
  const bytes = randomBytes(16);
  let ms = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function searchMetadata(indexUid: string, primaryKey: string | null | undefined, query?: string): SearchMetadata {
  const metadata: SearchMetadata = { queryUid: uuidV7(), indexUid };
  if (primaryKey) metadata.primaryKey = primaryKey;
  if (query) metadata.query = query;
  return metadata;
}
