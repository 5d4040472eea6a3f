/**
 * The semantic side of search and the hybrid merge.
 *
 * Search parameters `vector`, `hybrid: {embedder, semanticRatio}` and `retrieveVectors` are
 * validated here (`parseSemanticParams`). `semanticRanking` ranks documents by similarity to a
 * query vector (given, or embedded from `q`) within an optional filter bitmap, honouring
 * `rankingScoreThreshold`. `hybridSearch` runs the keyword side through a callback and merges:
 *
 *   - semanticRatio 0: keyword results only; 1: semantic results only;
 *   - in between, both lists (each already sorted) are merged by score weighted by the ratio
 *     (keyword score x (1 - ratio), semantic score x ratio), the semantic hit first on ties,
 *     each document kept once at its best place; `semanticHitCount` counts the returned hits
 *     that came from the semantic side;
 *   - when the keyword results already fill the page with scores good enough that no semantic
 *     hit could outrank them, the query is not embedded at all;
 *   - when embedding the query fails, hybrid search answers with the keyword results (a
 *     semantic-only search fails with `vector_embedding_error`).
 *
 * Everything here works on ranked docids; formatting hits (attributes, highlighting, facets)
 * stays with the keyword search module, which calls these functions.
 */
import { SearchError } from '../errors.js';
import { embedderFor, shiftScore, type Distribution } from '../embedders/index.js';
import { describeValue } from '../embedders/settings.js';
import type { Bitmap, IndexStore } from '../index/store.js';
import { RoaringBitmap32 } from '../index/store.js';
import type { Settings } from '../settings/types.js';
import { vectorsExtension, type VectorsExtension } from '../vector/extension.js';
import type { RuleDetail } from './ranking/score.js';
import type { Index } from '../index/index.js';
import { parseSearchParams, type SearchParams } from './params.js';
import { rankWithRules } from '../search-rules/apply.js';
import { keywordSearch, pagination, presentHit, search, setPaginationFields, type KeywordResult, type SearchOptions, type SearchResponse } from './search.js';
import { computeFacets, distinctFilter } from './seams.js';
import { NO_TRACE, PerformanceTrace } from './performance.js';

export interface RankedHit {
  docid: number;
  /** The ranking score in [0, 1] (`_rankingScore`). */
  score: number;
  /** Rule by rule, as keyword ranking reports them; semantic hits carry one `vectorSort` entry. */
  details: RuleDetail[];
  /** True when the hit comes from the semantic side. */
  semantic?: boolean;
}

export interface Ranking {
  hits: RankedHit[];
  /** Every document matching the query (for estimatedTotalHits, facets). */
  candidates: Bitmap;
}

export interface SemanticParams {
  embedder: string;
  /** 0 = keyword only, 1 = semantic only. */
  semanticRatio: number;
  vector?: Float32Array;
}

/** What search needs from an index. */
export interface SearchableIndex {
  store: IndexStore;
  settings: Settings;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validate `hybrid`, `vector` and `retrieveVectors` of a search body. Returns null for a plain
 * keyword search. `prefix` is `search` or `similar`, for error codes.
 */
export function parseSemanticParams(body: Record<string, unknown>, settings: Settings): SemanticParams | null {
  const { hybrid, vector, retrieveVectors } = body;
  if (retrieveVectors !== undefined && retrieveVectors !== null && typeof retrieveVectors !== 'boolean')
    throw new SearchError('invalid_search_retrieve_vectors', `Invalid value type at \`.retrieveVectors\`: expected a boolean, but found ${describeValue(retrieveVectors)}`);
  const parsedVector = vector === undefined || vector === null ? undefined : parseVector(vector, '.vector', 'invalid_search_vector');
  if (hybrid === undefined || hybrid === null) {
    if (parsedVector) throw new SearchError('missing_search_hybrid', 'Passing `vector` as a parameter requires `hybrid` to be set.');
    return null;
  }
  if (!isObject(hybrid))
    throw new SearchError('invalid_search_hybrid_query', `Invalid value type at \`.hybrid\`: expected an object, but found ${describeValue(hybrid)}`);
  for (const key of Object.keys(hybrid))
    if (key !== 'embedder' && key !== 'semanticRatio')
      throw new SearchError('invalid_search_hybrid_query', `Unknown field \`${key}\` inside \`.hybrid\`: expected one of \`semanticRatio\`, \`embedder\``);
  const ratio = hybrid.semanticRatio ?? 0.5;
  if (typeof ratio !== 'number' || !(ratio >= 0 && ratio <= 1))
    throw new SearchError(
      'invalid_search_semantic_ratio',
      'Invalid value at `.hybrid.semanticRatio`: the value of `semanticRatio` is invalid, expected a float between `0.0` and `1.0`.',
    );
  if (hybrid.embedder === undefined) throw new SearchError('invalid_search_hybrid_query', 'Missing field `embedder` inside `.hybrid`');
  if (typeof hybrid.embedder !== 'string')
    throw new SearchError('invalid_search_embedder', `Invalid value type at \`.hybrid.embedder\`: expected a string, but found ${describeValue(hybrid.embedder)}`);
  const embedder = checkEmbedder(hybrid.embedder, settings, 'invalid_search_embedder');
  if (parsedVector) checkDimensions(parsedVector, embedder, settings);
  return { embedder, semanticRatio: ratio, vector: parsedVector };
}

export function checkEmbedder(name: string, settings: Settings, code: string): string {
  if (!(name in settings.embedders)) throw new SearchError(code, `Cannot find embedder with name \`${name}\`.`);
  return name;
}

function parseVector(value: unknown, path: string, code: string): Float32Array {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'number' && Number.isFinite(v)))
    throw new SearchError(code, `Invalid value type at \`${path}\`: expected an array of floats, but found ${describeValue(value)}`);
  return Float32Array.from(value as number[]);
}

function checkDimensions(vector: Float32Array, embedder: string, settings: Settings): void {
  const config = settings.embedders[embedder]!;
  const expected = (config.dimensions as number | undefined) ?? safeDimensions(config);
  if (expected !== undefined && vector.length !== expected)
    throw new SearchError('invalid_vector_dimensions', `Invalid vector dimensions: expected: \`${expected}\`, found: \`${vector.length}\`.`);
}

function safeDimensions(config: Settings['embedders'][string]): number | undefined {
  try {
    return embedderFor(config).dimensions();
  } catch {
    return undefined;
  }
}

// --- semantic ranking ---------------------------------------------------------------------------

export interface SemanticQuery {
  embedder: string;
  /** The query vector; when absent, `q` is embedded with the embedder's search side. */
  vector?: Float32Array;
  q?: string;
  /** Documents allowed (filter result); all documents when absent. */
  filter?: Bitmap;
  /** How many hits to return, offset included. */
  limit: number;
  rankingScoreThreshold?: number | null;
  /** A document to leave out (the reference document of /similar). */
  exclude?: number;
}

/** Recent query embeddings: paging through results or retyping a query costs no provider call. */
const queryCache = new Map<string, Float32Array>();
const QUERY_CACHE_SIZE = 256;

/** Embed a search query, with the embedder's search side. Throws `vector_embedding_error`. */
export async function embedQuery(settings: Settings, embedder: string, q: string): Promise<Float32Array> {
  const config = settings.embedders[embedder]!;
  const key = `${JSON.stringify(config)}\0${q}`;
  const cached = queryCache.get(key);
  if (cached) {
    queryCache.delete(key); // refresh its place: least recently used goes first
    queryCache.set(key, cached);
    return cached;
  }
  let vector: Float32Array;
  try {
    const instance = embedderFor(config);
    if (!instance.embed)
      throw new Error(`the embedder \`${embedder}\` has source \`userProvided\`: pass the query vector in \`vector\``);
    [vector] = (await instance.embed([q], 'search')) as [Float32Array];
  } catch (error) {
    throw new SearchError('vector_embedding_error', `Error while generating embeddings: ${(error as Error).message}`, { cause: error });
  }
  queryCache.set(key, vector);
  if (queryCache.size > QUERY_CACHE_SIZE) queryCache.delete(queryCache.keys().next().value!);
  return vector;
}

export async function semanticRanking(
  index: SearchableIndex,
  query: SemanticQuery,
  extension: VectorsExtension = vectorsExtension,
): Promise<Ranking> {
  const universe = query.filter ?? index.store.docids();
  const vector = query.vector ?? (await embedQuery(index.settings, query.embedder, query.q ?? ''));
  const config = index.settings.embedders[query.embedder]!;
  const store = extension.vectorStore(index.store, query.embedder);
  if (!store || query.limit <= 0 || universe.size === 0) return { hits: [], candidates: universe };
  const distribution = config.distribution as Distribution | undefined;
  const threshold = query.rankingScoreThreshold ?? undefined;
  const extra = query.exclude !== undefined ? 1 : 0; // keep the page full when the target is left out
  const scored = async (k: number) =>
    (await store.search(vector, k, query.filter))
      .filter((hit) => hit.docid !== query.exclude && universe.has(hit.docid))
      .map((hit) => ({ docid: hit.docid, score: shiftScore(hit.similarity, distribution) }));
  let k = query.limit + extra;
  let found = await scored(k);
  if (threshold !== undefined) {
    // with a threshold, the candidates are every document above it (counts and facets follow):
    // widen the search until the worst hit falls below the threshold
    // (at most maxTotalHits: counts are capped there anyway)
    const cap = Math.min(universe.size, Math.max(query.limit, index.settings.pagination.maxTotalHits)) + extra;
    while (found.length >= k - extra && found.every((hit) => hit.score >= threshold) && k < cap) {
      k = Math.min(cap, k * 4);
      found = await scored(k);
    }
    found = found.filter((hit) => hit.score >= threshold);
  }
  const hits: RankedHit[] = found
    .slice(0, query.limit)
    .map((hit) => ({ docid: hit.docid, score: hit.score, semantic: true, details: [{ key: 'vectorSort', extra: { similarity: hit.score } }] }));
  let candidates = universe;
  if (threshold !== undefined) candidates = new RoaringBitmap32(found.map((hit) => hit.docid));
  else if (query.exclude !== undefined && universe.has(query.exclude)) {
    candidates = universe.clone();
    candidates.remove(query.exclude);
  }
  return { hits, candidates };
}

// --- hybrid -------------------------------------------------------------------------------------

export interface HybridQuery {
  q?: string | null;
  offset: number;
  limit: number;
  filter?: Bitmap;
  rankingScoreThreshold?: number | null;
  semantic: SemanticParams;
  /** A fresh distinct-attribute predicate (stateful: keeps the first hit of each value). */
  distinct?: () => (docid: number) => boolean;
  /** Where the semantic stages' times go (`showPerformanceDetails`). */
  trace?: PerformanceTrace;
}

export interface HybridResult extends Ranking {
  /** Hits of the returned page that came from the semantic side. */
  semanticHitCount: number;
  /** The query vector used, when the semantic side ran. */
  queryVector?: Float32Array;
}

/** The keyword side: ranked hits for `{offset: 0, limit}`, scores included. */
export type KeywordRanker = (window: { offset: number; limit: number }) => Ranking | Promise<Ranking>;

/** Keyword hits whose weighted score reaches this cannot be outranked by any semantic hit. */
const GOOD_ENOUGH = 0.45;

export async function hybridSearch(
  index: SearchableIndex,
  query: HybridQuery,
  keyword: KeywordRanker,
  extension: VectorsExtension = vectorsExtension,
): Promise<HybridResult> {
  const { semanticRatio: ratio } = query.semantic;
  const trace = query.trace ?? NO_TRACE;
  const window = query.offset + query.limit;
  const embed = () => trace.stageAsync('embed query', () => embedQuery(index.settings, query.semantic.embedder, query.q ?? ''));
  const rankSemantic = (vector: Float32Array) =>
    trace.stageAsync('semantic ranking', () =>
      semanticRanking(index, { embedder: query.semantic.embedder, vector, filter: query.filter, limit: window, rankingScoreThreshold: query.rankingScoreThreshold }, extension),
    );
  const page = (hits: RankedHit[]) => hits.slice(query.offset, window);

  if (ratio === 0) {
    const kw = await keyword({ offset: 0, limit: window });
    return { hits: page(kw.hits), candidates: kw.candidates, semanticHitCount: 0 };
  }

  const hasText = (query.q ?? '') !== '';
  const hasQuery = query.semantic.vector !== undefined || hasText;
  // semantic only: asked for, or a vector without words (a placeholder keyword side would only add noise)
  if (ratio === 1 || (query.semantic.vector !== undefined && !hasText)) {
    if (!hasQuery) {
      const kw = await keyword({ offset: 0, limit: window });
      return { hits: page(kw.hits), candidates: kw.candidates, semanticHitCount: 0 };
    }
    const vector = query.semantic.vector ?? (await embed());
    const sem = await rankSemantic(vector);
    const keep = query.distinct?.();
    const hits = page(keep ? sem.hits.filter((h) => keep(h.docid)) : sem.hits);
    return { hits, candidates: sem.candidates, semanticHitCount: hits.length, queryVector: vector };
  }

  const kw = await keyword({ offset: 0, limit: window });
  if (!hasQuery || goodEnough(kw.hits, window, ratio)) return { hits: page(kw.hits), candidates: kw.candidates, semanticHitCount: 0 };

  let vector = query.semantic.vector;
  if (!vector) {
    try {
      vector = await embed();
    } catch {
      // the provider is down or slow: keyword results are still a good answer
      return { hits: page(kw.hits), candidates: kw.candidates, semanticHitCount: 0 };
    }
  }
  const sem = await rankSemantic(vector);
  const merged = trace.stage('merge results', () => mergeRankings(kw.hits, sem.hits, ratio, query.offset, query.limit, query.distinct?.()));
  return {
    hits: merged.hits,
    candidates: RoaringBitmap32.or(kw.candidates, sem.candidates),
    semanticHitCount: merged.semanticHitCount,
    queryVector: vector,
  };
}

function goodEnough(hits: RankedHit[], window: number, ratio: number): boolean {
  return hits.length >= window && hits.every((h) => h.score * (1 - ratio) >= GOOD_ENOUGH);
}

/**
 * Merge two ranked lists by weighted score. Each list keeps its own order (keyword order can
 * come from sort rules, not scores); a document seen already is skipped; offset and limit apply
 * after deduplication.
 */
export function mergeRankings(
  keyword: readonly RankedHit[],
  semantic: readonly RankedHit[],
  ratio: number,
  offset: number,
  limit: number,
  distinct?: (docid: number) => boolean,
): { hits: RankedHit[]; semanticHitCount: number } {
  const seen = new Set<number>();
  const out: RankedHit[] = [];
  let semanticHitCount = 0;
  let i = 0;
  let j = 0;
  let skipped = 0;
  while ((i < keyword.length || j < semantic.length) && out.length < limit) {
    const k = keyword[i];
    const s = semantic[j];
    const takeSemantic = s !== undefined && (k === undefined || s.score * ratio >= k.score * (1 - ratio));
    const hit = takeSemantic ? s! : k!;
    if (takeSemantic) j++;
    else i++;
    if (seen.has(hit.docid)) continue;
    seen.add(hit.docid);
    if (distinct && !distinct(hit.docid)) continue;
    if (skipped < offset) {
      skipped++;
      continue;
    }
    out.push(takeSemantic ? { ...hit, semantic: true } : { ...hit, semantic: false });
    if (takeSemantic) semanticHitCount++;
  }
  return { hits: out, semanticHitCount };
}

/**
 * One part of a hybrid search that dynamic search rules may split (see rankWithRules): the hybrid
 * flow over `filter` narrowed by `restrict`, its keyword side ranked by `keywordSearch` with the
 * same restriction; the keyword terms (for highlighting) are handed to `onTerms`.
 */
export function hybridPart(
  index: Index,
  params: SearchParams,
  semantic: SemanticParams,
  filter: Bitmap | undefined,
  window: { offset: number; limit: number },
  trace: PerformanceTrace,
  restrict: ((universe: Bitmap) => Bitmap) | null,
  onTerms: (terms: KeywordResult['terms']) => void,
  extension: VectorsExtension = vectorsExtension,
): Promise<HybridResult> {
  const distinctField = params.distinct ?? index.settings.distinctAttribute;
  return hybridSearch(
    index,
    {
      q: params.q,
      ...window,
      filter: restrict ? restrict(filter ?? index.store.docids()) : filter,
      rankingScoreThreshold: params.rankingScoreThreshold,
      semantic,
      distinct: distinctField ? () => distinctFilter(index, distinctField) : undefined,
      trace,
    },
    ({ limit }) => {
      const result = keywordSearch(index, params, limit, trace, restrict);
      onTerms(result.terms);
      return { hits: result.hits, candidates: result.candidates };
    },
    extension,
  );
}

// --- the search route -----------------------------------------------------------------------

export type HybridSearchResponse = SearchResponse & { semanticHitCount?: number };

/**
 * `POST /indexes/:uid/search` with vectors: plain keyword search when the body has neither
 * `hybrid` nor `vector`, otherwise the hybrid flow with hits formatted like keyword hits
 * (highlighting uses the query words), facets over the merged candidates and `semanticHitCount`.
 */
export async function searchWithVectors(
  index: Index,
  body: unknown,
  extension: VectorsExtension = vectorsExtension,
  options: SearchOptions = {},
): Promise<HybridSearchResponse> {
  const started = performance.now();
  const params = parseSearchParams(body);
  const settings = index.settings;
  const semantic = parseSemanticParams({ hybrid: params.hybrid, vector: params.vector }, settings);
  if (!semantic) return search(index, body, options);
  // keyword only: exactly the keyword response (its counts honour the threshold), nothing embedded
  if (semantic.semanticRatio === 0) return { ...search(index, body, options), semanticHitCount: 0 };

  const trace = new PerformanceTrace(params.showPerformanceDetails);
  const paging = pagination(params, settings);
  const filter = params.filter !== null ? trace.stage('evaluate filter', () => index.filterDocids(params.filter, 'invalid_search_filter')) : undefined;
  let terms: KeywordResult['terms'] = [];
  const effects = options.rules ? trace.stage('dynamic search rules', () => options.rules!(index, params.q ?? '', params.filter)) : null;
  const ruledSearch = effects !== null && (effects.pins.length > 0 || effects.scales.length > 0);
  // with rules, each part is ranked from the top and the page is cut from the merged list
  const want = paging.want + (effects?.pins.length ?? 0);
  let semanticHitCount = 0;
  const ruled = await rankWithRules(
    index,
    effects,
    () => filter ?? index.store.docids(),
    async (restrict) => {
      const part = await hybridPart(index, params, semantic, filter, ruledSearch ? { offset: 0, limit: want } : { offset: paging.skip, limit: paging.take }, trace, restrict, (t) => (terms = t), extension);
      semanticHitCount += part.semanticHitCount;
      return { hits: part.hits, candidates: part.candidates, total: part.candidates.size };
    },
  );
  const page = ruledSearch ? ruled.hits.slice(paging.skip, paging.skip + paging.take) : ruled.hits;
  if (ruledSearch) semanticHitCount = page.filter((h) => (h as { semantic?: boolean }).semantic === true).length;
  const result = { hits: page, candidates: ruled.candidates, semanticHitCount };
  const hits = trace.stage('format', () => result.hits.map((h) => presentHit(index, h, params, terms, options.serialized === true)));
  const response: HybridSearchResponse = { hits, query: params.q ?? '', processingTimeMs: 0 };
  setPaginationFields(response, paging, params, Math.min(ruled.total, settings.pagination.maxTotalHits));
  if (params.facets) Object.assign(response, trace.stage('facet distribution', () => computeFacets(index, result.candidates, params.facets!, settings)));
  response.semanticHitCount = result.semanticHitCount;
  const elapsed = performance.now() - started;
  response.processingTimeMs = Math.round(elapsed);
  if (trace.enabled) {
    trace.add('', elapsed);
    response.performanceDetails = trace.details();
  }
  return response;
}

