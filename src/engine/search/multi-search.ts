/**
 * `POST /multi-search`: several queries in one request, answered one by one (`results`), or, with
 * `federation`, merged into one ranked list: every query's hits ordered by ranking score times
 * the query's weight, with `_federation` telling where each hit came from; facets per index
 * (`facetsByIndex`) and optionally merged (`mergeFacets`).
 */
import { SearchError } from '../errors.js';
import type { Index } from '../index/index.js';
import { parseSearchParams, SEARCH_FIELDS, type SearchParams } from './params.js';
import { keywordSearch, presentHit, search, type Hit, type PaginationFields, type SearchResponse } from './search.js';
import { computeFacets, type FacetResult } from './seams.js';
import { RoaringBitmap32 } from '../index/store.js';
import { validateIndexUid } from '../index/registry.js';

export type ResolveIndex = (uid: string) => Index;
export type SearchOne = (index: Index, body: unknown) => SearchResponse | Promise<SearchResponse>;

export interface FederatedResponse extends PaginationFields {
  hits: Hit[];
  processingTimeMs: number;
  facetsByIndex?: Record<string, FacetResult>;
  facetDistribution?: FacetResult['facetDistribution'];
  facetStats?: FacetResult['facetStats'];
}

export type MultiSearchResponse = { results: Array<SearchResponse & { indexUid: string }> } | FederatedResponse;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Errors inside one query say which one. */
function inside(i: number, fn: () => unknown): unknown {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SearchError) throw new SearchError(e.code, `Inside \`.queries[${i}]\`: ${e.message}`);
    throw e;
  }
}

interface QuerySpec {
  indexUid: string;
  body: Record<string, unknown>;
  weight: number;
}

function readQueries(body: Record<string, unknown>, federated: boolean): QuerySpec[] {
  const queries = body.queries;
  if (!Array.isArray(queries)) {
    throw new SearchError('bad_request', `Invalid value type at \`.queries\`: expected an array, but found ${JSON.stringify(queries ?? null)}`);
  }
  return queries.map((q, i) => {
    if (!isObject(q)) throw new SearchError('bad_request', `Invalid value type at \`.queries[${i}]\`: expected an object, but found ${JSON.stringify(q)}`);
    const { indexUid, federationOptions, ...rest } = q;
    if (typeof indexUid !== 'string') {
      throw new SearchError(indexUid === undefined ? 'missing_index_uid' : 'invalid_index_uid', `Inside \`.queries[${i}]\`: ${indexUid === undefined ? 'Missing field `indexUid`' : `\`${JSON.stringify(indexUid)}\` is not a valid index uid.`}`);
    }
    inside(i, () => validateIndexUid(indexUid));
    let weight = 1;
    if (federationOptions !== undefined && federationOptions !== null) {
      if (!federated) {
        throw new SearchError('invalid_multi_search_federation_options', `Inside \`.queries[${i}]\`: Using \`federationOptions\` is not allowed in a non-federated search.\n - Hint: remove \`federationOptions\` from query #${i} or add \`federation\` to the request.`);
      }
      if (!isObject(federationOptions)) throw new SearchError('invalid_multi_search_federation_options', `Invalid value type at \`.queries[${i}].federationOptions\`: expected an object`);
      const w = federationOptions.weight;
      if (w !== undefined) {
        if (typeof w !== 'number' || w < 0) throw new SearchError('invalid_multi_search_weight', `Invalid value at \`.queries[${i}].federationOptions.weight\`: the value of \`weight\` is invalid, expected a positive float (>= 0.0).`);
        weight = w;
      }
    }
    if (federated) {
      for (const key of ['offset', 'limit', 'page', 'hitsPerPage']) {
        if (rest[key] !== undefined) {
          throw new SearchError('invalid_multi_search_query_pagination', `Inside \`.queries[${i}]\`: Using pagination options is not allowed in federated queries.\n - Hint: remove \`${key}\` from query #${i} or remove \`federation\` from the request`);
        }
      }
      if (rest.facets !== undefined) {
        throw new SearchError('invalid_multi_search_query_facets', `Inside \`.queries[${i}]\`: Using facets is not allowed in federated queries.\n - Hint: remove \`facets\` from query #${i} or remove \`federation\` from the request\n - Hint: pass \`federation.facetsByIndex.${indexUid}: ${JSON.stringify(rest.facets)}\` for facets in federated search`);
      }
    }
    return { indexUid, body: rest, weight };
  });
}

export async function multiSearch(resolveIndex: ResolveIndex, body: unknown, searchOne: SearchOne = search): Promise<MultiSearchResponse> {
  if (!isObject(body)) throw new SearchError('bad_request', 'Invalid value type: expected an object');
  for (const key of Object.keys(body)) {
    if (key !== 'queries' && key !== 'federation') throw new SearchError('bad_request', `Unknown field \`${key}\`: expected one of \`queries\`, \`federation\``);
  }
  const federation = body.federation;
  if (federation === undefined || federation === null) {
    const specs = readQueries(body, false);
    const results: Array<SearchResponse & { indexUid: string }> = [];
    const turn = new Turn();
    for (const [i, spec] of specs.entries()) {
      await turn.yieldIfLong();
      let response: SearchResponse;
      try {
        response = await searchOne(resolveIndex(spec.indexUid), spec.body);
      } catch (e) {
        if (e instanceof SearchError) throw new SearchError(e.code, `Inside \`.queries[${i}]\`: ${e.message}`);
        throw e;
      }
      results.push({ indexUid: spec.indexUid, ...response });
    }
    return { results };
  }
  if (!isObject(federation)) throw new SearchError('invalid_multi_search_federation', 'Invalid value type at `.federation`: expected an object');
  return federatedSearch(resolveIndex, readQueries(body, true), federation);
}

const FEDERATION_FIELDS = ['offset', 'limit', 'page', 'hitsPerPage', 'facetsByIndex', 'mergeFacets'];

/**
 * Searches run one after the other on the thread that serves them, which may be the one answering
 * HTTP (no search threads): a request of thousands of queries lets other requests in between
 * (`/health` must not wait seconds for it).
 */
class Turn {
  private started = performance.now();
  constructor(private readonly sliceMs = 10) {}
  async yieldIfLong(): Promise<void> {
    if (performance.now() - this.started < this.sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.started = performance.now();
  }
}

async function federatedSearch(resolveIndex: ResolveIndex, specs: QuerySpec[], federation: Record<string, unknown>): Promise<FederatedResponse> {
  const started = performance.now();
  for (const key of Object.keys(federation)) {
    if (!FEDERATION_FIELDS.includes(key)) throw new SearchError('bad_request', `Unknown field \`${key}\` inside \`.federation\`: expected one of ${FEDERATION_FIELDS.map((f) => `\`${f}\``).join(', ')}`);
  }
  const nat = (key: string): number | null => {
    const v = federation[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
      const code = `invalid_multi_search_${key.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())}`;
      throw new SearchError(code, `Invalid value type at \`.federation.${key}\`: expected a positive integer, but found ${JSON.stringify(v)}`);
    }
    return v;
  };
  const offset = nat('offset') ?? 0;
  const limit = nat('limit') ?? 20;
  const page = nat('page');
  const hitsPerPage = nat('hitsPerPage');
  const paged = page !== null || hitsPerPage !== null;
  const skip = paged ? Math.max(0, ((page ?? 1) - 1) * (hitsPerPage ?? 20)) : offset;
  const take = paged ? (page === 0 ? 0 : hitsPerPage ?? 20) : limit;
  const facetsByIndexSpec = federation.facetsByIndex ?? null;
  if (facetsByIndexSpec !== null && !isObject(facetsByIndexSpec)) throw new SearchError('invalid_multi_search_facets_by_index', 'Invalid value type at `.federation.facetsByIndex`: expected an object');
  const mergeFacetsSpec = federation.mergeFacets ?? null;
  if (mergeFacetsSpec !== null && !isObject(mergeFacetsSpec)) throw new SearchError('invalid_multi_search_merge_facets', 'Invalid value type at `.federation.mergeFacets`: expected an object');

  interface Candidate {
    query: number;
    index: Index;
    params: SearchParams;
    hit: import('./ranking/bucket-sort.js').RankedHit;
    weighted: number;
    terms: ReturnType<typeof keywordSearch>['terms'];
  }
  const all: Candidate[] = [];
  let total = 0;
  const turn = new Turn();
  for (const [i, spec] of specs.entries()) {
    await turn.yieldIfLong();
    const index = inside(i, () => resolveIndex(spec.indexUid)) as Index;
    const params = inside(i, () => parseSearchParams(spec.body)) as SearchParams;
    const result = inside(i, () => keywordSearch(index, params, skip + take)) as ReturnType<typeof keywordSearch>;
    total += Math.min(result.totalHits, index.settings.pagination.maxTotalHits);
    for (const hit of result.hits) all.push({ query: i, index, params, hit, weighted: hit.score * spec.weight, terms: result.terms });
  }
  // Highest weighted score first; ties keep query order, then each query's own order.
  all.sort((a, b) => b.weighted - a.weighted || a.query - b.query);
  const hits = all.slice(skip, skip + take).map((c) => {
    const hit = presentHit(c.index, c.hit, c.params, c.terms);
    hit._federation = { indexUid: specs[c.query]!.indexUid, queriesPosition: c.query, weightedRankingScore: c.weighted };
    return hit;
  });
  const response: FederatedResponse = { hits, processingTimeMs: 0 };
  if (paged) {
    const hpp = hitsPerPage ?? 20;
    Object.assign(response, { hitsPerPage: hpp, page: page ?? 1, totalPages: hpp === 0 ? 0 : Math.ceil(total / hpp), totalHits: total });
  } else Object.assign(response, { limit, offset, estimatedTotalHits: total });
  if (facetsByIndexSpec) {
    const byIndex: Record<string, FacetResult> = {};
    for (const [uid, facets] of Object.entries(facetsByIndexSpec)) {
      validateIndexUid(uid, 'invalid_multi_search_facets_by_index');
      // Facets come from the documents the queries matched: an index no query searches has none,
      // and reading its settings would tell about an index the request never searched.
      if (!specs.some((s) => s.indexUid === uid)) {
        throw new SearchError('invalid_multi_search_facets_by_index', `Inside \`.federation.facetsByIndex.${uid}\`: Index \`${uid}\` is not used in queries.`);
      }
      if (!Array.isArray(facets) || facets.some((f) => typeof f !== 'string')) throw new SearchError('invalid_multi_search_facets_by_index', `Invalid value type at \`.federation.facetsByIndex.${uid}\`: expected an array of strings`);
      const index = resolveIndex(uid);
      const candidates = specs
        .map((s, i) => ({ s, i }))
        .filter(({ s }) => s.indexUid === uid)
        .map(({ s }) => keywordSearch(index, parseSearchParams(s.body), 0).candidates);
      const union = RoaringBitmap32.orMany(candidates);
      byIndex[uid] = computeFacets(index, union, facets as string[], index.settings);
    }
    if (mergeFacetsSpec) {
      const merged: FacetResult = { facetDistribution: {}, facetStats: {} };
      for (const result of Object.values(byIndex)) {
        for (const [field, values] of Object.entries(result.facetDistribution)) {
          const into = (merged.facetDistribution[field] ??= {});
          for (const [value, count] of Object.entries(values)) into[value] = (into[value] ?? 0) + count;
        }
        for (const [field, stats] of Object.entries(result.facetStats)) {
          const s = merged.facetStats[field];
          merged.facetStats[field] = s ? { min: Math.min(s.min, stats.min), max: Math.max(s.max, stats.max) } : { ...stats };
        }
      }
      const max = typeof mergeFacetsSpec.maxValuesPerFacet === 'number' ? mergeFacetsSpec.maxValuesPerFacet : null;
      if (max !== null) for (const f of Object.keys(merged.facetDistribution)) merged.facetDistribution[f] = Object.fromEntries(Object.entries(merged.facetDistribution[f]!).slice(0, max));
      response.facetDistribution = merged.facetDistribution;
      response.facetStats = merged.facetStats;
    } else response.facetsByIndex = byIndex;
  }
  response.processingTimeMs = Math.round(performance.now() - started);
  return response;
}

export { SEARCH_FIELDS };
