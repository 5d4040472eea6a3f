/**
 * Reads a Qdrant collection: config, aliases, exact count, and the points page by page. At most
 * two pages are held: the one the caller works on and the next, requested as soon as the
 * previous one arrived, so that Qdrant prepares and sends it while the caller indexes (an
 * embedded target blocks this thread for seconds at a time while it writes a batch).
 */
import { MigrationError } from '../errors.js';
import { parseCollectionInfo, type CollectionConfig } from './config.js';
import type { QdrantHttp } from './http.js';

/** A point as read: the id already in its string form. */
export interface QdrantPoint {
  id: string;
  idKind: 'integer' | 'uuid';
  payload: Record<string, unknown> | null;
  vector: unknown;
}

export interface ScrollPage {
  /** The offset this page was requested with (null for the first page). */
  offset: string | null;
  points: QdrantPoint[];
  /** Qdrant's `next_page_offset`, as a string; null after the last page. */
  next: string | null;
  /** Length of the page's JSON text: lets callers estimate sizes without serialising again. */
  length: number;
}

export interface ScrollOptions {
  start: string | null;
  pageSize: number;
  /** false, true (all vectors), or the names to fetch. */
  withVector: boolean | string[];
}

/** Checkpoints keep offsets as strings; integer ids must go back to Qdrant as JSON integers. */
export function offsetToWire(offset: string | null): bigint | string | null {
  if (offset === null) return null;
  return /^\d+$/.test(offset) ? BigInt(offset) : offset;
}

export function idToString(id: unknown): { id: string; kind: 'integer' | 'uuid' } {
  if (typeof id === 'bigint' || typeof id === 'number') return { id: BigInt(id).toString(), kind: 'integer' };
  if (typeof id === 'string') return { id, kind: 'uuid' };
  throw new MigrationError('http', `Qdrant returned a point id of unexpected type: ${JSON.stringify(id)}`);
}

export class QdrantSource {
  constructor(readonly http: QdrantHttp) {}

  async listCollections(): Promise<string[]> {
    const r = await this.http.get<{ collections: Array<{ name: string }> }>('/collections');
    return r.collections.map((c) => c.name).sort();
  }

  async allAliases(): Promise<Array<{ alias_name: string; collection_name: string }>> {
    const r = await this.http.get<{ aliases: Array<{ alias_name: string; collection_name: string }> }>('/aliases');
    return r.aliases;
  }

  /** Resolves an alias to its collection; unknown names fail with the list of what exists. */
  async resolve(name: string): Promise<{ collection: string; viaAlias: string | null }> {
    const alias = (await this.allAliases()).find((a) => a.alias_name === name);
    if (alias) return { collection: alias.collection_name, viaAlias: name };
    const exists = await this.http.get<{ exists: boolean }>(`/collections/${encodeURIComponent(name)}/exists`);
    if (!exists.exists) {
      const known = await this.listCollections();
      throw new MigrationError(
        'not_found',
        `Qdrant at ${this.http.baseUrl} has no collection or alias named "${name}"` +
          (known.length ? `; collections: ${known.join(', ')}` : '; it has no collections'),
      );
    }
    return { collection: name, viaAlias: null };
  }

  async readConfig(collection: string): Promise<CollectionConfig> {
    const path = `/collections/${encodeURIComponent(collection)}`;
    const info = await this.http.get<unknown>(path);
    const aliases = await this.http.get<{ aliases: Array<{ alias_name: string }> }>(`${path}/aliases`);
    return parseCollectionInfo(collection, info, aliases.aliases.map((a) => a.alias_name).sort());
  }

  async countExact(collection: string): Promise<number> {
    const r = await this.http.post<{ count: number }>(`/collections/${encodeURIComponent(collection)}/points/count`, { exact: true });
    return Number(r.count);
  }

  /** Points by id (`POST /collections/{name}/points`), for verification. */
  async retrieve(collection: string, ids: string[], withVector: boolean | string[]): Promise<QdrantPoint[]> {
    const r = await this.http.post<Array<{ id: unknown; payload?: Record<string, unknown> | null; vector?: unknown }>>(
      `/collections/${encodeURIComponent(collection)}/points`,
      { ids: ids.map(offsetToWire), with_payload: true, with_vector: withVector },
    );
    return r.map((p) => {
      const { id, kind } = idToString(p.id);
      return { id, idKind: kind, payload: p.payload ?? null, vector: p.vector ?? null };
    });
  }

  async *scroll(collection: string, o: ScrollOptions): AsyncGenerator<ScrollPage> {
    let next = this.page(collection, o, o.start);
    for (;;) {
      const page = await next;
      if (page.next !== null) {
        if (page.next === page.offset) throw new MigrationError('http', `Qdrant returned the same next_page_offset twice (${page.next}); stopping to avoid a loop`);
        next = this.page(collection, o, page.next);
        // Awaited on the next turn; a caller that stops early must not leave it unhandled.
        next.catch(() => {});
      }
      yield page;
      if (page.next === null) return;
    }
  }

  private async page(collection: string, o: ScrollOptions, offset: string | null): Promise<ScrollPage> {
    const body: Record<string, unknown> = { limit: o.pageSize, with_payload: true, with_vector: o.withVector };
    if (offset !== null) body.offset = offsetToWire(offset);
    const { result: r, length } = await this.http.requestSized<{
      points: Array<{ id: unknown; payload?: Record<string, unknown> | null; vector?: unknown }>;
      next_page_offset?: unknown;
    }>('POST', `/collections/${encodeURIComponent(collection)}/points/scroll`, body);
    const points = r.points.map((p) => {
      const { id, kind } = idToString(p.id);
      return { id, idKind: kind, payload: p.payload ?? null, vector: p.vector ?? null };
    });
    const next = r.next_page_offset === null || r.next_page_offset === undefined ? null : idToString(r.next_page_offset).id;
    return { offset, points, next, length };
  }
}
