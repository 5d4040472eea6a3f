/**
 * Search request validation: the body of `POST /indexes/:uid/search` (and each query of
 * `/multi-search`) -> typed parameters, with the reference's `invalid_search_*` codes and
 * `bad_request` for unknown fields; plus the GET query string -> body conversion.
 */
import { SearchError } from '../errors.js';
import { isSupportedLocale } from '../text/locales.js';
import { describeValue } from '../wire/describe.js';

export type MatchingStrategy = 'last' | 'all' | 'frequency';

export interface SearchParams {
  q: string | null;
  offset: number;
  limit: number;
  page: number | null;
  hitsPerPage: number | null;
  attributesToRetrieve: string[] | null;
  retrieveVectors: boolean;
  attributesToCrop: string[] | null;
  cropLength: number;
  cropMarker: string;
  attributesToHighlight: string[] | null;
  highlightPreTag: string;
  highlightPostTag: string;
  showMatchesPosition: boolean;
  showRankingScore: boolean;
  showRankingScoreDetails: boolean;
  showPerformanceDetails: boolean;
  rankingScoreThreshold: number | null;
  filter: unknown;
  sort: string[] | null;
  distinct: string | null;
  facets: string[] | null;
  matchingStrategy: MatchingStrategy;
  attributesToSearchOn: string[] | null;
  locales: string[] | null;
  /** Passed through to the vector/hybrid module, validated there. */
  hybrid: unknown;
  vector: unknown;
  media: unknown;
}

export const DEFAULT_LIMIT = 20;

/**
 * Bounds on one query, so that its cost and the size of its answer stay proportional to what a
 * client may reasonably ask (README, "Limits"). Each ranking rule and sort criterion is a level of
 * the bucket sort (see sort/parse.ts for MAX_SORT_CRITERIA); a tag or crop marker is copied into every highlighted match of every hit.
 */
export const MAX_LIST_ENTRIES = 1000;
export const MAX_MARKER_LENGTH = 1000;
export const DEFAULT_CROP_LENGTH = 10;

/** camelCase field -> error code suffix. */
const FIELD_CODES: Record<string, string> = {
  q: 'invalid_search_q',
  offset: 'invalid_search_offset',
  limit: 'invalid_search_limit',
  page: 'invalid_search_page',
  hitsPerPage: 'invalid_search_hits_per_page',
  attributesToRetrieve: 'invalid_search_attributes_to_retrieve',
  retrieveVectors: 'invalid_search_retrieve_vectors',
  attributesToCrop: 'invalid_search_attributes_to_crop',
  cropLength: 'invalid_search_crop_length',
  cropMarker: 'invalid_search_crop_marker',
  attributesToHighlight: 'invalid_search_attributes_to_highlight',
  highlightPreTag: 'invalid_search_highlight_pre_tag',
  highlightPostTag: 'invalid_search_highlight_post_tag',
  showMatchesPosition: 'invalid_search_show_matches_position',
  showRankingScore: 'invalid_search_show_ranking_score',
  showRankingScoreDetails: 'invalid_search_show_ranking_score_details',
  showPerformanceDetails: 'invalid_search_show_performance_details',
  rankingScoreThreshold: 'invalid_search_ranking_score_threshold',
  filter: 'invalid_search_filter',
  sort: 'invalid_search_sort',
  distinct: 'invalid_search_distinct',
  facets: 'invalid_search_facets',
  matchingStrategy: 'invalid_search_matching_strategy',
  attributesToSearchOn: 'invalid_search_attributes_to_search_on',
  locales: 'invalid_search_locales',
  hybrid: 'invalid_search_hybrid_query',
  vector: 'invalid_search_vector',
  media: 'invalid_search_media',
  personalize: 'invalid_search_personalize',
};

export const SEARCH_FIELDS = Object.keys(FIELD_CODES);

export function typeError(field: string, expected: string, value: unknown, code = FIELD_CODES[field]!): SearchError {
  return new SearchError(code, `Invalid value type at \`.${field}\`: expected ${expected}, but found ${describeValue(value)}`);
}

function nat(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw typeError(field, 'a positive integer', v);
  return v;
}

function bool(body: Record<string, unknown>, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw typeError(field, 'a boolean', v);
  return v;
}

function str(body: Record<string, unknown>, field: string, nullable = false): string | null | undefined {
  const v = body[field];
  if (v === undefined || (nullable && v === null)) return v as undefined | null;
  if (typeof v !== 'string') throw typeError(field, 'a string', v);
  return v;
}

function tooMany(field: string, count: number, max: number): SearchError {
  return new SearchError(FIELD_CODES[field]!, `Invalid value at \`.${field}\`: expected at most ${max} entries, but found ${count}.`);
}

/** A highlight tag or crop marker, at most MAX_MARKER_LENGTH characters. */
function marker(body: Record<string, unknown>, field: string): string | undefined {
  const v = str(body, field) ?? undefined;
  if (v !== undefined && v.length > MAX_MARKER_LENGTH) {
    throw new SearchError(FIELD_CODES[field]!, `Invalid value at \`.${field}\`: expected at most ${MAX_MARKER_LENGTH} characters, but found ${v.length}.`);
  }
  return v;
}

function strList(body: Record<string, unknown>, field: string): string[] | null | undefined {
  const v = body[field];
  if (v === undefined || v === null) return v as undefined | null;
  if (!Array.isArray(v)) throw typeError(field, 'an array', v);
  if (v.length > MAX_LIST_ENTRIES) throw tooMany(field, v.length, MAX_LIST_ENTRIES);
  v.forEach((item, i) => {
    if (typeof item !== 'string') throw new SearchError(FIELD_CODES[field]!, `Invalid value type at \`.${field}[${i}]\`: expected a string, but found ${describeValue(item)}`);
  });
  return v as string[];
}

/**
 * `personalize` (`{"userContext": "..."}`) is checked and then ignored: the reference reranks with
 * it through Cohere only when started with a personalization API key, and without one answers the
 * results unchanged, which is what a server that calls nothing on the internet does.
 */
function checkPersonalize(value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'object' || Array.isArray(value)) throw typeError('personalize', 'an object', value);
  for (const [key, inner] of Object.entries(value)) {
    if (key !== 'userContext')
      throw new SearchError('invalid_search_personalize', `Unknown field \`${key}\` inside \`.personalize\`: expected one of \`userContext\``);
    if (inner !== null && typeof inner !== 'string')
      throw new SearchError(
        'invalid_search_personalize_user_context',
        `Invalid value type at \`.personalize.userContext\`: expected a string, but found ${describeValue(inner)}`,
      );
  }
}

export function parseSearchParams(body: unknown, options: { allowed?: readonly string[] } = {}): SearchParams {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new SearchError('bad_request', `Invalid value type: expected an object, but found ${describeValue(body)}`);
  }
  const b = body as Record<string, unknown>;
  const allowed = options.allowed ?? SEARCH_FIELDS;
  for (const key of Object.keys(b)) {
    if (!allowed.includes(key)) {
      throw new SearchError('bad_request', `Unknown field \`${key}\`: expected one of ${allowed.map((f) => `\`${f}\``).join(', ')}`);
    }
  }
  const q = str(b, 'q', true) ?? null;
  const threshold = b.rankingScoreThreshold;
  if (threshold !== undefined && threshold !== null) {
    if (typeof threshold !== 'number') throw typeError('rankingScoreThreshold', 'a number', threshold);
    if (threshold < 0 || threshold > 1) {
      throw new SearchError('invalid_search_ranking_score_threshold', `Invalid value at \`.rankingScoreThreshold\`: the value of \`rankingScoreThreshold\` is invalid, expected a float between \`0.0\` and \`1.0\`.`);
    }
  }
  const matchingStrategy = b.matchingStrategy ?? 'last';
  if (matchingStrategy !== 'last' && matchingStrategy !== 'all' && matchingStrategy !== 'frequency') {
    throw new SearchError(
      'invalid_search_matching_strategy',
      `Unknown value \`${typeof matchingStrategy === 'string' ? matchingStrategy : JSON.stringify(matchingStrategy)}\` at \`.matchingStrategy\`: expected one of \`last\`, \`all\`, \`frequency\``,
    );
  }
  const sort = b.sort;
  let sortList: string[] | null = null;
  if (sort !== undefined && sort !== null) {
    if (typeof sort === 'string') sortList = [sort];
    else sortList = strList(b, 'sort') ?? null;
  }
  const facets = strList(b, 'facets') ?? null;
  const locales = strList(b, 'locales') ?? null;
  for (const [i, l] of (locales ?? []).entries()) {
    if (!isSupportedLocale(l)) {
      throw new SearchError('invalid_search_locales', `Unknown value \`${l}\` at \`.locales[${i}]\`: expected one of the supported ISO 639-1 or ISO 639-3 language codes`);
    }
  }
  const distinct = str(b, 'distinct', true) ?? null;
  const filter = b.filter;
  if (filter !== undefined && filter !== null && typeof filter !== 'string' && !Array.isArray(filter)) {
    throw new SearchError('invalid_search_filter', `Invalid value type at \`.filter\`: expected a string or an array, but found ${describeValue(filter)}`);
  }
  checkPersonalize(b.personalize);
  const limit = nat(b, 'limit');
  return {
    q,
    offset: nat(b, 'offset') ?? 0,
    limit: limit ?? DEFAULT_LIMIT,
    page: nat(b, 'page') ?? null,
    hitsPerPage: nat(b, 'hitsPerPage') ?? null,
    attributesToRetrieve: strList(b, 'attributesToRetrieve') ?? null,
    retrieveVectors: bool(b, 'retrieveVectors') ?? false,
    attributesToCrop: strList(b, 'attributesToCrop') ?? null,
    cropLength: nat(b, 'cropLength') ?? DEFAULT_CROP_LENGTH,
    cropMarker: marker(b, 'cropMarker') ?? '…',
    attributesToHighlight: strList(b, 'attributesToHighlight') ?? null,
    highlightPreTag: marker(b, 'highlightPreTag') ?? '<em>',
    highlightPostTag: marker(b, 'highlightPostTag') ?? '</em>',
    showMatchesPosition: bool(b, 'showMatchesPosition') ?? false,
    showRankingScore: bool(b, 'showRankingScore') ?? false,
    showRankingScoreDetails: bool(b, 'showRankingScoreDetails') ?? false,
    showPerformanceDetails: bool(b, 'showPerformanceDetails') ?? false,
    rankingScoreThreshold: (threshold as number | null | undefined) ?? null,
    filter: filter ?? null,
    sort: sortList,
    distinct,
    facets,
    matchingStrategy,
    attributesToSearchOn: strList(b, 'attributesToSearchOn') ?? null,
    locales,
    hybrid: b.hybrid ?? null,
    vector: b.vector ?? null,
    media: b.media ?? null,
  };
}

/** GET /indexes/:uid/search query string -> a body for `parseSearchParams`. */
export function searchQueryToBody(query: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const one = (v: string | string[]) => (Array.isArray(v) ? v[v.length - 1]! : v);
  const list = (v: string) => v.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const v = one(raw);
    switch (key) {
      case 'offset':
      case 'limit':
      case 'page':
      case 'hitsPerPage':
      case 'cropLength': {
        if (!/^\d+$/.test(v)) throw new SearchError(FIELD_CODES[key]!, `Invalid value in parameter \`${key}\`: could not parse \`${v}\` as a positive integer`);
        body[key] = Number(v);
        break;
      }
      case 'rankingScoreThreshold': {
        const n = Number(v);
        if (v.trim() === '' || Number.isNaN(n)) throw new SearchError(FIELD_CODES[key]!, `Invalid value in parameter \`${key}\`: could not parse \`${v}\` as a float`);
        body[key] = n;
        break;
      }
      case 'retrieveVectors':
      case 'showMatchesPosition':
      case 'showRankingScore':
      case 'showRankingScoreDetails':
      case 'showPerformanceDetails': {
        if (v !== 'true' && v !== 'false') throw new SearchError(FIELD_CODES[key]!, `Invalid value in parameter \`${key}\`: could not parse \`${v}\` as a boolean, expected either \`true\` or \`false\``);
        body[key] = v === 'true';
        break;
      }
      case 'attributesToRetrieve':
      case 'attributesToCrop':
      case 'attributesToHighlight':
      case 'facets':
      case 'sort':
      case 'attributesToSearchOn':
      case 'locales':
        body[key] = list(v);
        break;
      case 'vector':
        body[key] = list(v).map(Number);
        break;
      case 'hybridEmbedder':
        body.hybrid = { ...((body.hybrid as object) ?? {}), embedder: v };
        break;
      case 'personalizeUserContext':
        body.personalize = { userContext: v };
        break;
      case 'hybridSemanticRatio':
        body.hybrid = { ...((body.hybrid as object) ?? {}), semanticRatio: Number(v) };
        break;
      default:
        body[key] = v;
    }
  }
  return body;
}
