/**
 * `POST /multi-search`: several queries in one request, answered one by one (`results`), or, with
 * `federation`, merged into one ranked list: every query's hits ordered by ranking score times
 * the query's weight, with `_federation` telling where each hit came from; facets per index
 * (`facetsByIndex`) and optionally merged (`mergeFacets`).
 */
import { SearchError } from '../errors.js';
import type { Index } from '../index/index.js';
import { parseSearchParams, SEARCH_FIELDS, type SearchParams } from './params.js';
import { keywordPart, keywordSearch, presentHit, search, type Hit, type KeywordResult, type PaginationFields, type RuleResolver, type SearchResponse } from './search.js';
import { rankWithRules, rankWithRulesSync } from '../search-rules/apply.js';
import { placePins } from '../search-rules/rules.js';
import { computeFacets, type FacetResult } from './seams.js';
import { hybridPart, parseSemanticParams } from './hybrid.js';
import { RoaringBitmap32, type Bitmap } from '../index/store.js';
import type { RankedHit } from './ranking/bucket-sort.js';
import { docFacetValues } from './facets/databases.js';
import { PerformanceTrace, type PerformanceDetails } from './performance.js';
import { validateIndexUid } from '../index/registry.js';

export type ResolveIndex = (uid: string) => Index;
export type SearchOne = (index: Index, body: unknown) => SearchResponse | Promise<SearchResponse>;

export interface FederatedResponse extends PaginationFields {
  hits: Hit[];
  processingTimeMs: number;
  facetsByIndex?: Record<string, IndexFacets>;
  semanticHitCount?: number;
  performanceDetails?: PerformanceDetails;
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

/** `rules`: dynamic search rules for the federated path (`searchOne` applies them to each query otherwise). */
export async function multiSearch(resolveIndex: ResolveIndex, body: unknown, searchOne: SearchOne = search, rules?: RuleResolver): Promise<MultiSearchResponse> {
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
  return federatedSearch(resolveIndex, readQueries(body, true), federation, rules);
}

const FEDERATION_FIELDS = ['offset', 'limit', 'page', 'hitsPerPage', 'facetsByIndex', 'mergeFacets', 'distinct', 'showPerformanceDetails'];

/** One index's facets in a federated answer, under the names the reference gives them there. */
export interface IndexFacets {
  distribution: FacetResult['facetDistribution'];
  stats: FacetResult['facetStats'];
}

interface FederationSpec {
  skip: number;
  take: number;
  paged: boolean;
  offset: number;
  limit: number;
  page: number | null;
  hitsPerPage: number | null;
  facetsByIndex: Record<string, unknown> | null;
  mergeFacets: Record<string, unknown> | null;
  distinct: string | null;
  showPerformanceDetails: boolean;
}

function readFederation(federation: Record<string, unknown>, specs: QuerySpec[]): FederationSpec {
  for (const key of Object.keys(federation)) {
    if (!FEDERATION_FIELDS.includes(key)) throw new SearchError('bad_request', `Unknown field \`${key}\` inside \`.federation\`: expected one of ${FEDERATION_FIELDS.map((f) => `\`${f}\``).join(', ')}`);
  }
  const code = (key: string) => `invalid_multi_search_${key.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())}`;
  const nat = (key: string): number | null => {
    const v = federation[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
      throw new SearchError(code(key), `Invalid value type at \`.federation.${key}\`: expected a positive integer, but found ${JSON.stringify(v)}`);
    }
    return v;
  };
  const offset = nat('offset') ?? 0;
  const limit = nat('limit') ?? 20;
  const page = nat('page');
  const hitsPerPage = nat('hitsPerPage');
  const paged = page !== null || hitsPerPage !== null;
  const facetsByIndex = federation.facetsByIndex ?? null;
  if (facetsByIndex !== null && !isObject(facetsByIndex)) throw new SearchError('invalid_multi_search_facets_by_index', 'Invalid value type at `.federation.facetsByIndex`: expected an object');
  const mergeFacets = federation.mergeFacets ?? null;
  if (mergeFacets !== null && !isObject(mergeFacets)) throw new SearchError('invalid_multi_search_merge_facets', 'Invalid value type at `.federation.mergeFacets`: expected an object');
  const distinct = federation.distinct ?? null;
  if (distinct !== null && typeof distinct !== 'string') {
    throw new SearchError(code('distinct'), `Invalid value type at \`.federation.distinct\`: expected a string, but found ${JSON.stringify(distinct)}`);
  }
  if (distinct !== null) {
    // One distinct for the whole merged list: a query-level one would contradict it.
    specs.forEach((spec, i) => {
      if (spec.body.distinct !== undefined && spec.body.distinct !== null) {
        throw new SearchError(
          'invalid_multi_search_query_distinct',
          `Inside \`.queries[${i}]\`: Using \`distinct\` in a federated query is not allowed when \`federation.distinct\` is set.\n - Hint: remove \`distinct\` from query #${i} or remove \`distinct\` from the federation`,
        );
      }
    });
  }
  const show = federation.showPerformanceDetails ?? false;
  if (typeof show !== 'boolean') {
    throw new SearchError(code('showPerformanceDetails'), `Invalid value type at \`.federation.showPerformanceDetails\`: expected a boolean, but found ${JSON.stringify(show)}`);
  }
  return {
    skip: paged ? Math.max(0, ((page ?? 1) - 1) * (hitsPerPage ?? 20)) : offset,
    take: paged ? (page === 0 ? 0 : hitsPerPage ?? 20) : limit,
    paged,
    offset,
    limit,
    page,
    hitsPerPage,
    facetsByIndex,
    mergeFacets,
    distinct,
    showPerformanceDetails: show,
  };
}

interface Candidate {
  query: number;
  index: Index;
  params: SearchParams;
  hit: RankedHit;
  weighted: number;
  terms: KeywordResult['terms'];
}

/**
 * Every query's ranked hits, best weighted score first (ties keep query order, then each query's
 * own order), with `federation.distinct` applied across indexes: the first hit of each value wins.
 * Each query ranks `want` hits; with a distinct attribute the merged list can come out shorter
 * than the page needs, so the queries are asked again for more until it is full or exhausted.
 */
/** How far past the page the queries are re-ranked to fill it with distinct hits. */
const MAX_DISTINCT_WIDENING = 16;

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

async function mergedCandidates(resolveIndex: ResolveIndex, specs: QuerySpec[], f: FederationSpec, trace: PerformanceTrace, rules?: RuleResolver) {
  const needed = f.skip + f.take;
  let want = needed;
  for (;;) {
    const all: Candidate[] = [];
    const pinned: Array<{ hit: Candidate; position: number }> = [];
    const matched: Bitmap[] = [];
    let total = 0;
    let exhausted = true;
    const turn = new Turn();
    for (const [i, spec] of specs.entries()) {
      await turn.yieldIfLong();
      const index = inside(i, () => resolveIndex(spec.indexUid)) as Index;
      const params = inside(i, () => parseSearchParams(spec.body)) as SearchParams;
      if (f.distinct !== null) params.distinct = f.distinct;
      const queryTrace = trace.child(`queries[${i}]`);
      let result: RankedQuery;
      try {
        result = await rankQuery(index, params, want, queryTrace, rules);
      } catch (e) {
        if (e instanceof SearchError) throw new SearchError(e.code, `Inside \`.queries[${i}]\`: ${e.message}`);
        throw e;
      }
      total += Math.min(result.totalHits, index.settings.pagination.maxTotalHits);
      matched.push(result.candidates);
      if (result.hits.length >= want) exhausted = false;
      for (const hit of result.hits) all.push({ query: i, index, params, hit, weighted: hit.score * (hit.scale ?? 1) * spec.weight, terms: result.terms });
      for (const pin of result.pins) pinned.push({ hit: { query: i, index, params, hit: pin.hit, weighted: pin.hit.score * spec.weight, terms: result.terms }, position: pin.position });
    }
    const merged = trace.stage('merge results', () => {
      all.sort((a, b) => b.weighted - a.weighted || a.query - b.query);
      // pins keep their positions in the merged list (queries in order, each in its rules' precedence)
      return placePins(f.distinct === null ? all : keepDistinct(all, f.distinct), pinned);
    });
    // Bounded: a field with few distinct values among many hits would otherwise re-rank without end.
    if (merged.length >= needed || exhausted || f.distinct === null || want >= needed * MAX_DISTINCT_WIDENING) return { merged, total, matched };
    want *= 2;
  }
}

interface RankedQuery {
  hits: RankedHit[];
  /** Every document the query matched (for facets). */
  candidates: Bitmap;
  totalHits: number;
  terms: KeywordResult['terms'];
  /** Documents dynamic search rules pin, with their positions (not in `hits`). */
  pins: Array<{ hit: RankedHit; position: number }>;
}

/**
 * One query's ranked hits: keyword ranking, or the hybrid flow when the query has `hybrid` (or
 * `vector`), so that a federated query ranks exactly as the same query sent alone would, its
 * `rankingScoreThreshold` included.
 */
async function rankQuery(index: Index, params: SearchParams, want: number, trace: PerformanceTrace, rules?: RuleResolver): Promise<RankedQuery> {
  const effects = rules ? trace.stage('dynamic search rules', () => rules(index, params.q ?? '', params.filter)) : null;
  const filtered = () => (params.filter !== null ? index.filterDocids(params.filter, 'invalid_search_filter') : index.store.docids());
  const semantic = parseSemanticParams({ hybrid: params.hybrid, vector: params.vector }, index.settings);
  if (!semantic || semantic.semanticRatio === 0) {
    const ruled = rankWithRulesSync(index, effects, filtered, (restrict) => keywordPart(keywordSearch(index, params, want, trace, restrict)));
    return { hits: ruled.organic, pins: ruled.pins, candidates: ruled.candidates, totalHits: ruled.total, terms: ruled.main.terms };
  }
  const filter = params.filter !== null ? trace.stage('evaluate filter', () => index.filterDocids(params.filter, 'invalid_search_filter')) : undefined;
  let terms: KeywordResult['terms'] = [];
  const ruled = await rankWithRules(index, effects, filtered, async (restrict) => {
    const result = await hybridPart(index, params, semantic, filter, { offset: 0, limit: want }, trace, restrict, (t) => (terms = t));
    return { hits: result.hits, candidates: result.candidates, total: result.candidates.size };
  });
  return { hits: ruled.organic, pins: ruled.pins, candidates: ruled.candidates, totalHits: ruled.total, terms };
}

function keepDistinct(candidates: Candidate[], field: string): Candidate[] {
  const seen = new Set<string>();
  return candidates.filter((c) => {
    const values = docFacetValues(c.index.store, field, c.hit.docid);
    if (!values || values.length === 0) return true;
    const keys = values.map((v) => `${typeof v}:${v}`);
    if (keys.some((k) => seen.has(k))) return false;
    for (const k of keys) seen.add(k);
    return true;
  });
}

async function federatedSearch(resolveIndex: ResolveIndex, specs: QuerySpec[], federation: Record<string, unknown>, rules?: RuleResolver): Promise<FederatedResponse> {
  const started = performance.now();
  const f = readFederation(federation, specs);
  const trace = new PerformanceTrace(f.showPerformanceDetails, 'federating results');
  const { merged, total, matched } = await mergedCandidates(resolveIndex, specs, f, trace, rules);
  const page = merged.slice(f.skip, f.skip + f.take);
  const hits = trace.stage('format', () =>
    page.map((c) => {
      const hit = presentHit(c.index, c.hit, c.params, c.terms);
      hit._federation = { indexUid: specs[c.query]!.indexUid, queriesPosition: c.query, weightedRankingScore: c.weighted };
      return hit;
    }),
  );
  const response: FederatedResponse = { hits, processingTimeMs: 0 };
  if (specs.some((s) => s.body.hybrid !== undefined && s.body.hybrid !== null))
    response.semanticHitCount = page.filter((c) => (c.hit as { semantic?: boolean }).semantic === true).length;
  if (f.paged) {
    const hpp = f.hitsPerPage ?? 20;
    Object.assign(response, { hitsPerPage: hpp, page: f.page ?? 1, totalPages: hpp === 0 ? 0 : Math.ceil(total / hpp), totalHits: total });
  } else Object.assign(response, { limit: f.limit, offset: f.offset, estimatedTotalHits: total });
  if (f.facetsByIndex) trace.stage('facet distribution', () => addFacets(response, resolveIndex, specs, f, matched));
  const elapsed = performance.now() - started;
  response.processingTimeMs = Math.round(elapsed);
  if (trace.enabled) {
    trace.add('', elapsed);
    response.performanceDetails = trace.details();
  }
  return response;
}

/**
 * `facetsByIndex`: each index's distribution over the documents its queries matched (`matched`,
 * one bitmap per query); or, with `mergeFacets`, one merged distribution.
 */
function addFacets(response: FederatedResponse, resolveIndex: ResolveIndex, specs: QuerySpec[], f: FederationSpec, matched: Bitmap[]): void {
  const byIndex: Record<string, FacetResult> = {};
  for (const [uid, facets] of Object.entries(f.facetsByIndex!)) {
    validateIndexUid(uid, 'invalid_multi_search_facets_by_index');
    // Facets come from the documents the queries matched: an index no query searches has none,
    // and reading its settings would tell about an index the request never searched.
    if (!specs.some((s) => s.indexUid === uid)) {
      throw new SearchError('invalid_multi_search_facets_by_index', `Inside \`.federation.facetsByIndex.${uid}\`: Index \`${uid}\` is not used in queries.`);
    }
    if (!Array.isArray(facets) || facets.some((x) => typeof x !== 'string')) throw new SearchError('invalid_multi_search_facets_by_index', `Invalid value type at \`.federation.facetsByIndex.${uid}\`: expected an array of strings`);
    const index = resolveIndex(uid);
    const union = RoaringBitmap32.orMany(matched.filter((_, i) => specs[i]!.indexUid === uid));
    byIndex[uid] = computeFacets(index, union, facets as string[], index.settings);
  }
  if (!f.mergeFacets) {
    response.facetsByIndex = Object.fromEntries(Object.entries(byIndex).map(([uid, r]) => [uid, { distribution: r.facetDistribution, stats: r.facetStats }]));
    return;
  }
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
  const max = typeof f.mergeFacets.maxValuesPerFacet === 'number' ? f.mergeFacets.maxValuesPerFacet : null;
  if (max !== null) for (const field of Object.keys(merged.facetDistribution)) merged.facetDistribution[field] = Object.fromEntries(Object.entries(merged.facetDistribution[field]!).slice(0, max));
  response.facetDistribution = merged.facetDistribution;
  response.facetStats = merged.facetStats;
}

export { SEARCH_FIELDS };
