/**
 * The one table of error codes. Every failure the engine reports is a `SearchError` carrying one
 * of these codes; the HTTP layer only maps `status` and serialises `toJSON()`, so the wire format
 * (`{message, code, type, link}`) is the same wherever an error comes from: a route, a task, the CLI.
 *
 * Codes follow the public Meilisearch reference. Families such as `invalid_search_*`,
 * `invalid_settings_*` and `invalid_document_*` share one status and type; they are matched by
 * prefix after the explicit entries, so a new parameter needs no new row.
 */

export type ErrorType = 'invalid_request' | 'internal' | 'auth' | 'system';

interface ErrorKind {
  status: number;
  type: ErrorType;
}

const EXPLICIT: Record<string, ErrorKind> = {
  // generic
  bad_request: { status: 400, type: 'invalid_request' },
  not_found: { status: 404, type: 'invalid_request' },
  internal: { status: 500, type: 'internal' },
  invalid_state: { status: 500, type: 'internal' },
  io_error: { status: 500, type: 'system' },
  no_space_left_on_device: { status: 500, type: 'system' },
  too_many_open_files: { status: 500, type: 'system' },
  database_size_limit_reached: { status: 500, type: 'internal' },
  feature_not_enabled: { status: 400, type: 'invalid_request' },
  // payloads
  missing_payload: { status: 400, type: 'invalid_request' },
  malformed_payload: { status: 400, type: 'invalid_request' },
  payload_too_large: { status: 413, type: 'invalid_request' },
  invalid_content_type: { status: 415, type: 'invalid_request' },
  missing_content_type: { status: 415, type: 'invalid_request' },
  // indexes
  index_already_exists: { status: 409, type: 'invalid_request' },
  index_not_found: { status: 404, type: 'invalid_request' },
  index_creation_failed: { status: 500, type: 'internal' },
  invalid_index_uid: { status: 400, type: 'invalid_request' },
  index_primary_key_already_exists: { status: 400, type: 'invalid_request' },
  index_primary_key_multiple_candidates_found: { status: 400, type: 'invalid_request' },
  index_primary_key_no_candidate_found: { status: 400, type: 'invalid_request' },
  immutable_index_uid: { status: 400, type: 'invalid_request' },
  immutable_index_created_at: { status: 400, type: 'invalid_request' },
  immutable_index_updated_at: { status: 400, type: 'invalid_request' },
  invalid_swap_indexes: { status: 400, type: 'invalid_request' },
  invalid_swap_duplicate_index_found: { status: 400, type: 'invalid_request' },
  // documents
  document_not_found: { status: 404, type: 'invalid_request' },
  missing_document_id: { status: 400, type: 'invalid_request' },
  invalid_document_id: { status: 400, type: 'invalid_request' },
  missing_document_filter: { status: 400, type: 'invalid_request' },
  max_fields_limit_exceeded: { status: 400, type: 'invalid_request' },
  edit_documents_by_function_error: { status: 400, type: 'invalid_request' },
  // tasks and batches
  task_not_found: { status: 404, type: 'invalid_request' },
  task_file_not_found: { status: 404, type: 'invalid_request' },
  batch_not_found: { status: 404, type: 'invalid_request' },
  missing_task_filters: { status: 400, type: 'invalid_request' },
  // search
  invalid_search_filter: { status: 400, type: 'invalid_request' },
  invalid_search_sort: { status: 400, type: 'invalid_request' },
  missing_facet_search_facet_name: { status: 400, type: 'invalid_request' },
  facet_search_disabled: { status: 400, type: 'invalid_request' },
  // vectors and embedders
  vector_embedding_error: { status: 400, type: 'invalid_request' },
  invalid_vector_dimensions: { status: 400, type: 'invalid_request' },
  invalid_vectors_type: { status: 400, type: 'invalid_request' },
  invalid_embedder: { status: 400, type: 'invalid_request' },
  not_found_similar_id: { status: 400, type: 'invalid_request' },
  // auth
  missing_authorization_header: { status: 401, type: 'auth' },
  invalid_api_key: { status: 403, type: 'auth' },
  missing_master_key: { status: 401, type: 'auth' },
  api_key_not_found: { status: 404, type: 'invalid_request' },
  api_key_already_exists: { status: 409, type: 'invalid_request' },
  missing_api_key_actions: { status: 400, type: 'invalid_request' },
  missing_api_key_indexes: { status: 400, type: 'invalid_request' },
  missing_api_key_expires_at: { status: 400, type: 'invalid_request' },
  // webhooks
  invalid_webhook_url: { status: 400, type: 'invalid_request' },
  immutable_webhook: { status: 400, type: 'invalid_request' },
  webhook_not_found: { status: 404, type: 'invalid_request' },
  too_many_webhooks: { status: 400, type: 'invalid_request' },
  // dynamic search rules
  dynamic_search_rule_not_found: { status: 404, type: 'invalid_request' },
  // operations
  dump_process_failed: { status: 500, type: 'internal' },
  dump_already_processing: { status: 409, type: 'invalid_request' },
  unretrievable_document: { status: 500, type: 'internal' },
  // the database directory (CLI and start-up)
  database_in_use: { status: 409, type: 'system' },
  database_not_found: { status: 404, type: 'invalid_request' },
};

/** Families matched by prefix when no explicit row exists. */
const FAMILIES: Array<[prefix: string, kind: ErrorKind]> = [
  ['invalid_', { status: 400, type: 'invalid_request' }],
  ['immutable_', { status: 400, type: 'invalid_request' }],
  ['missing_', { status: 400, type: 'invalid_request' }],
];

export function errorKind(code: string): ErrorKind {
  const explicit = EXPLICIT[code];
  if (explicit) return explicit;
  for (const [prefix, kind] of FAMILIES) if (code.startsWith(prefix)) return kind;
  return EXPLICIT.internal!;
}

export function isKnownErrorCode(code: string): boolean {
  return code in EXPLICIT || FAMILIES.some(([prefix]) => code.startsWith(prefix));
}

export interface ErrorBody {
  message: string;
  code: string;
  type: ErrorType;
  link: string;
}

export const ERROR_LINK_BASE = 'https://docs.meilisearch.com/errors#';

export class SearchError extends Error {
  readonly code: string;
  readonly status: number;
  readonly type: ErrorType;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SearchError';
    this.code = code;
    const kind = errorKind(code);
    this.status = kind.status;
    this.type = kind.type;
  }

  toJSON(): ErrorBody {
    return { message: this.message, code: this.code, type: this.type, link: ERROR_LINK_BASE + this.code };
  }
}

/** Turn anything thrown into a SearchError, keeping the cause for logs; unknown failures are `internal`. */
export function toSearchError(error: unknown): SearchError {
  if (error instanceof SearchError) return error;
  const err = error as NodeJS.ErrnoException | undefined;
  // LMDB reports a page it could not write with the system's words, not with an errno code.
  if (err?.code === 'ENOSPC' || /No space left on device/.test(String(err?.message)))
    return new SearchError('no_space_left_on_device', 'No space left on device.', { cause: error });
  if (err?.code === 'EMFILE') return new SearchError('too_many_open_files', 'Too many open files.', { cause: error });
  if (err?.code === 'MDB_MAP_FULL' || /MDB_MAP_FULL/.test(String(err?.message)))
    return new SearchError('database_size_limit_reached', 'The database has reached its maximum size.', { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new SearchError('internal', `An internal error has occurred. \`${message}\`.`, { cause: error });
}

/** A SearchError as it crosses a thread boundary: a server error keeps the stack of its cause for the log. */
export interface WireError {
  code: string;
  message: string;
  stack?: string;
}

export function toWireError(error: unknown): WireError {
  const searchError = toSearchError(error);
  const wire: WireError = { code: searchError.code, message: searchError.message };
  if (searchError.status >= 500) {
    const cause = searchError.cause instanceof Error ? searchError.cause : searchError;
    if (cause.stack) wire.stack = cause.stack;
  }
  return wire;
}

export function fromWireError(wire: WireError): SearchError {
  if (wire.stack === undefined) return new SearchError(wire.code, wire.message);
  const cause = new Error(wire.message);
  cause.stack = wire.stack;
  return new SearchError(wire.code, wire.message, { cause });
}
