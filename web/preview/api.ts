/**
 * The few calls the page makes outside InstantSearch: list indexes, read an index's settings
 * and primary key, fetch one document. Errors keep the server's Meilisearch error code, so the
 * page can tell "this key is refused" from any other failure.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }

  /** The key is missing, unknown or lacks the action: the page asks for another one. */
  get isAuth(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

export interface IndexSummary {
  uid: string;
  primaryKey: string | null;
}

export interface IndexSettings {
  filterableAttributes: Array<string | { attributePatterns: string[] }>;
  embedders: Record<string, { source?: string }>;
}

export class Api {
  constructor(
    readonly host: string,
    private readonly apiKey: string | null,
  ) {}

  private async get<T>(path: string): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.apiKey) headers.Authorization = `Bearer ${this.apiKey}`;
    const response = await fetch(this.host + path, { headers });
    const body = (await response.json().catch(() => null)) as { message?: string; code?: string } | null;
    if (!response.ok) throw new ApiError(body?.message ?? `HTTP ${response.status}`, response.status, body?.code ?? null);
    return body as T;
  }

  async listIndexes(): Promise<IndexSummary[]> {
    const page = await this.get<{ results: IndexSummary[] }>('/indexes?limit=1000');
    return page.results;
  }

  getIndex(uid: string): Promise<IndexSummary> {
    return this.get(`/indexes/${encodeURIComponent(uid)}`);
  }

  getSettings(uid: string): Promise<IndexSettings> {
    return this.get(`/indexes/${encodeURIComponent(uid)}/settings`);
  }

  getDocument(uid: string, id: string): Promise<Record<string, unknown>> {
    return this.get(`/indexes/${encodeURIComponent(uid)}/documents/${encodeURIComponent(id)}`);
  }
}
