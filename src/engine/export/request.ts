/**
 * An export request as the task keeps it (its payload), checked before it is enqueued, and the
 * task details the reference shows for it: the URL, the API key redacted, the payload size in
 * words, and per index pattern its filter and `overrideSettings`.
 */
import { hideSecret } from '../auth/redact.js';
import { INVALID_PATTERN_HINT, isValidIndexPattern, patternMatches } from '../auth/index-pattern.js';
import { SearchError } from '../errors.js';
import { parseFilter } from '../search/filter/parser.js';
import { formatPayloadSize } from './payload-size.js';

export interface ExportIndexSettings {
  filter: unknown;
  overrideSettings: boolean;
}

export interface ExportRequest {
  url: string;
  apiKey: string | null;
  /** Bytes; null: the default. */
  payloadSize: number | null;
  /** Index uid pattern -> what to send of the indexes it matches. */
  indexes: Record<string, ExportIndexSettings>;
}

/** Every index when the request names none, as the reference. */
export const ALL_INDEXES: Readonly<Record<string, ExportIndexSettings>> = { '*': { filter: null, overrideSettings: false } };

/** Check what the shape alone cannot tell: an http(s) URL, valid patterns, filters that parse. */
export function checkExportRequest(request: ExportRequest): ExportRequest {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw new SearchError('invalid_export_url', `Invalid value at \`.url\`: \`${request.url}\` is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new SearchError('invalid_export_url', `Invalid value at \`.url\`: \`${request.url}\` is not an http or https URL.`);
  for (const [pattern, settings] of Object.entries(request.indexes)) {
    if (!isValidIndexPattern(pattern))
      throw new SearchError('invalid_export_indexes_patterns', `Invalid value at \`.indexes\`: \`${pattern}\` is not a valid index uid pattern. ${INVALID_PATTERN_HINT}`);
    // the syntax now; whether the attributes are filterable is known when the index is read
    parseFilter(settings.filter, 'invalid_export_index_filter');
  }
  return request;
}

/** The details of an enqueued export (`indexes` keyed by pattern, in the reference's sorted order). */
export function exportDetails(request: ExportRequest): Record<string, unknown> {
  const indexes: Record<string, ExportIndexSettings> = {};
  for (const pattern of Object.keys(request.indexes).sort()) indexes[pattern] = { ...request.indexes[pattern]! };
  return {
    url: request.url,
    ...(request.apiKey !== null ? { apiKey: hideSecret(request.apiKey) } : {}),
    ...(request.payloadSize !== null ? { payloadSize: formatPayloadSize(request.payloadSize) } : {}),
    indexes,
  };
}

/**
 * Each index to export with the settings of the first pattern (in sorted order, as the
 * reference's ordered map) that matches it.
 */
export function matchIndexes(request: ExportRequest, uids: readonly string[]): Array<{ uid: string; settings: ExportIndexSettings }> {
  const patterns = Object.keys(request.indexes).sort();
  const out: Array<{ uid: string; settings: ExportIndexSettings }> = [];
  for (const uid of [...uids].sort()) {
    const pattern = patterns.find((p) => patternMatches(p, uid));
    if (pattern !== undefined) out.push({ uid, settings: request.indexes[pattern]! });
  }
  return out;
}
