/**
 * Foreign keys (the `foreignKeys` setting): a hit's field that holds document ids of another
 * index is answered with those documents, as that index displays them, instead of the ids
 * (`"actors": [1, 2]` -> `"actors": [{"id": 1, "name": …}, …]`). An id whose document does not
 * exist stays as it is. Only top-level fields are hydrated, and only from the indexes the caller
 * may read (`mayRead`): a key limited to `movies` never receives documents of `actors` this way.
 */
import type { Index } from '../index/index.js';
import type { Settings } from '../settings/types.js';
import type { Document } from '../types.js';

/** Which foreign indexes a request may read documents of; undefined: all (in-process use). */
export type ForeignIndexes = readonly string[] | undefined;

export type IndexLookup = (uid: string) => Index | undefined;

/** Replace the foreign ids of each hit by the documents they name, in place. */
export function hydrateHits(hits: Document[], settings: Settings, lookup: IndexLookup, mayRead: ForeignIndexes): void {
  const keys = settings.foreignKeys.filter((key) => mayRead === undefined || mayRead.includes(key.foreignIndexUid));
  if (keys.length === 0 || hits.length === 0) return;
  for (const { fieldName, foreignIndexUid } of keys) {
    const foreign = lookup(foreignIndexUid);
    if (!foreign) continue;
    const fetch = (id: unknown): unknown => {
      if (typeof id !== 'string' && typeof id !== 'number') return id;
      try {
        return foreign.getDocument(String(id), {});
      } catch {
        return id; // no such document: the id stays
      }
    };
    for (const hit of hits) {
      const value = hit[fieldName];
      if (value === undefined || value === null) continue;
      hit[fieldName] = Array.isArray(value) ? value.map(fetch) : fetch(value);
    }
  }
}

/** The foreign indexes of `settings`, for a caller to authorize before searching. */
export function foreignIndexUids(settings: Settings): string[] {
  return [...new Set(settings.foreignKeys.map((key) => key.foreignIndexUid))];
}
