/**
 * Error codes of failed tasks in dumps v1 to v5, renamed along the reference's chain to the
 * codes of today (a code the chain does not know becomes `unretrievable_error_code`).
 */
import { ERROR_LINK_BASE, errorKind, type ErrorBody } from '../../../errors.js';

/** v1/v2 code names (and v3's, once snake_cased) -> the v4 names. */
const TO_V4: Record<string, string> = {
  create_index: 'index_creation_failed',
  missing_primary_key: 'primary_key_inference_failed',
  primary_key_already_present: 'index_primary_key_already_exists',
  filter: 'invalid_filter',
  sort: 'invalid_sort',
  invalid_store: 'invalid_store_file',
  invalid_token: 'invalid_api_key',
  retrieve_document: 'unretrievable_document',
  search_documents: 'search_error',
  dump_already_in_progress: 'dump_already_processing',
};

const V2_KNOWN = new Set([
  'index_already_exists', 'index_not_found', 'invalid_index_uid', 'invalid_state', 'max_fields_limit_exceeded',
  'missing_document_id', 'invalid_document_id', 'bad_parameter', 'bad_request', 'database_size_limit_reached',
  'document_not_found', 'internal', 'invalid_geo_field', 'invalid_ranking_rule', 'missing_authorization_header',
  'no_space_left_on_device', 'dump_not_found', 'task_not_found', 'payload_too_large', 'unsupported_media_type',
  'dump_process_failed', 'invalid_content_type', 'missing_content_type', 'malformed_payload', 'missing_payload',
  'malformed_dump', 'unretrievable_error_code',
]);

/** A v1/v2 `errorCode` or a v3 `code` (`IndexNotFound`) as the v4 code name. */
export function legacyCodeToV4(code: string): string {
  const snake = /^[A-Z]/.test(code) ? code.replace(/[A-Z]/g, (c, i: number) => `${i ? '_' : ''}${c.toLowerCase()}`) : code;
  return TO_V4[snake] ?? (V2_KNOWN.has(snake) ? snake : 'unretrievable_error_code');
}

/** v4/v5 code names -> today's (v6). */
const TO_V6: Record<string, string> = {
  invalid_min_word_length_for_typo: 'invalid_settings_typo_tolerance',
  primary_key_inference_failed: 'index_primary_key_no_candidate_found',
  invalid_filter: 'invalid_settings_filterable_attributes',
  invalid_sort: 'invalid_settings_sortable_attributes',
  invalid_geo_field: 'invalid_document_geo_field',
  invalid_ranking_rule: 'invalid_settings_ranking_rules',
  missing_parameter: 'bad_request',
  immutable_field: 'bad_request',
};

const V6_KEPT = new Set([
  'index_creation_failed', 'index_already_exists', 'index_not_found', 'invalid_index_uid', 'invalid_state',
  'index_primary_key_already_exists', 'max_fields_limit_exceeded', 'missing_document_id', 'invalid_document_id',
  'bad_parameter', 'bad_request', 'database_size_limit_reached', 'document_not_found', 'internal', 'invalid_store_file',
  'invalid_api_key', 'missing_authorization_header', 'no_space_left_on_device', 'dump_not_found', 'task_not_found',
  'payload_too_large', 'unretrievable_document', 'unsupported_media_type', 'dump_already_processing',
  'dump_process_failed', 'invalid_content_type', 'missing_content_type', 'malformed_payload', 'missing_payload',
  'api_key_not_found', 'invalid_api_key_actions', 'invalid_api_key_indexes', 'invalid_api_key_expires_at',
  'invalid_api_key_description', 'invalid_api_key_name', 'invalid_api_key_uid', 'api_key_already_exists',
]);

export function v4CodeToV6(code: string): string {
  return TO_V6[code] ?? (V6_KEPT.has(code) ? code : 'unretrievable_error_code');
}

/** Types the shared error table does not hold for these old codes. */
const TYPES: Record<string, ErrorBody['type']> = {
  bad_parameter: 'invalid_request',
  dump_not_found: 'invalid_request',
  unsupported_media_type: 'invalid_request',
  unretrievable_error_code: 'invalid_request',
  invalid_store_file: 'internal',
};

/** The error of a failed task, as the reference's v6 `ResponseError`. */
export function v6Error(message: string, code: string): ErrorBody {
  return { message, code, type: TYPES[code] ?? errorKind(code).type, link: ERROR_LINK_BASE + code };
}
