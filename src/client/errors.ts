/** An error answered by a server with the Meilisearch API, or the failure to reach it. */
export class ClientError extends Error {
  constructor(
    message: string,
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** Meilisearch error code (`index_not_found`, `invalid_api_key`...), when the server sent one. */
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'ClientError';
  }

  get isAuth(): boolean {
    return this.status === 401 || this.status === 403;
  }
}
