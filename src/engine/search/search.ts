/**
 * Keyword search over one index: `search(index, body)` validates the request, resolves the query
 * terms against the keyword databases, ranks the candidates with the ranking rules (bucket sort),
 * paginates and formats the hits.
 */
import roaring from 'roaring';
import { SearchError } from '../errors.js';
import type { Index } from '../index/index.js';
import type { RuleEffects } from '../search-rules/rules.js';
import { rankWithRulesSync, type RankedPart } from '../search-rules/apply.js';
import type { Bitmap } from '../index/store.js';
import type { Settings } from '../settings/types.js';
import type { Document } from '../types.js';
import { analyzerFor } from './keyword/analyzer.js';
import { attributeRank, coversPath, isSearchable } from './keyword/fields.js';
import { keywordReader } from './keyword/reader.js';
import { parseSearchParams, type SearchParams } from './params.js';
import { parseQuery } from './query/parse.js';
import { negatedDocids, resolveTerms, type ResolvedTerm } from './query/resolve.js';
import { bucketSort, type RankedHit } from './ranking/bucket-sort.js';
import { MatchAnalyzer } from './ranking/matches.js';
import { BUILTIN_RULES, toBitmap, type RankingContext, type RankingRule } from './ranking/rules.js';
import { detailsObject } from './ranking/score.js';
import { formatDocument, matcherFor, matchesPosition, type FormatOptions } from './format.js';
import { displayedHit } from './hit-bytes.js';
import { hitGeoDistance } from './geo/query.js';
import { NO_TRACE, PerformanceTrace, type PerformanceDetails } from './performance.js';
import { checkDistinct, computeFacets, customRankingRule, distinctFilter, filterDocids, parseSortParam, sortRules, type FacetResult } from './seams.js';

const { RoaringBitmap32 } = roaring;

export type Hit = Document & {
  _formatted?: Document;
  _matchesPosition?: Record<string, Array<{ start: number; length: number }>>;
  _rankingScore?: number;
  _rankingScoreDetails?: Record<string, unknown>;
};

/** The pagination envelope: `offset`/`limit` with an estimate, or `page`/`hitsPerPage` with exact totals. */
export interface PaginationFields {
  limit?: number;
  offset?: number;
  estimatedTotalHits?: number;
  hitsPerPage?: number;
  page?: number;
  totalPages?: number;
  totalHits?: number;
}

export interface SearchResponse extends PaginationFields {
  hits: Hit[];
  query: string;
  processingTimeMs: number;
  facetDistribution?: FacetResult['facetDistribution'];
  facetStats?: FacetResult['facetStats'];
  performanceDetails?: PerformanceDetails;
}

/** Ranked candidates of a keyword search, before formatting: what hybrid and federated search merge. */
export interface KeywordResult {
  hits: RankedHit[];
  /** All documents matching the query and filter (for counts and facets). */
  candidates: Bitmap;
  totalHits: number;
  terms: ResolvedTerm[];
  degraded: boolean;
}

/** What dynamic search rules do to a search of `index` with this query and filter (see search-rules/). */
export type RuleResolver = (index: Index, q: string, filter: unknown) => RuleEffects | null;

/** How long a search ranks before it answers with what it has, when the index sets no `searchCutoffMs`. */
export const DEFAULT_SEARCH_CUTOFF_MS = 1500;

export interface SearchOptions {
  /** Dynamic search rules (see search-rules/apply.ts). */
  rules?: RuleResolver;
  /** The response will only be turned into JSON (see presentHit). */
  serialized?: boolean;
}

export function search(index: Index, body: unknown, options: SearchOptions = {}): SearchResponse {
  const started = performance.now();
  const params = parseSearchParams(body);
  const settings = index.settings;
  const trace = new PerformanceTrace(params.showPerformanceDetails);
  const paging = pagination(params, settings);
  const effects = options.rules ? trace.stage('dynamic search rules', () => options.rules!(index, params.q ?? '', params.filter)) : null;
  const want = paging.want + (effects?.pins.length ?? 0);
  const ruled = rankWithRulesSync(
    index,
    effects,
    () => (params.filter !== null ? filterDocids(index, params.filter) : index.store.docids()),
    (restrict) => keywordPart(keywordSearch(index, params, want, trace, restrict)),
  );
  const ranked = ruled.hits;
  const total = ruled.total;
  const result = ruled.main;
  const hits = trace.stage('format', () =>
    ranked.slice(paging.skip, paging.skip + paging.take).map((h) => presentHit(index, h, params, result.terms, options.serialized === true)),
  );
  const response: SearchResponse = { hits, query: params.q ?? '', processingTimeMs: 0 };
  setPaginationFields(response, paging, params, Math.min(total, settings.pagination.maxTotalHits));
  if (params.facets) Object.assign(response, trace.stage('facet distribution', () => computeFacets(index, ruled.candidates, params.facets!, settings)));
  const elapsed = performance.now() - started;
  response.processingTimeMs = Math.round(elapsed);
  if (trace.enabled) {
    trace.add('', elapsed);
    response.performanceDetails = trace.details();
  }
  return response;
}

/** A keyword result as one part of a ruled ranking (search-rules/apply.ts). */
export function keywordPart(result: KeywordResult): KeywordResult & RankedPart {
  return Object.assign(result, { total: result.totalHits });
}

export interface Paging {
  mode: 'offset' | 'pages';
  skip: number;
  take: number;
  /** How many ranked documents are needed. */
  want: number;
  page: number;
  hitsPerPage: number;
}

/** Offset/limit or page/hitsPerPage -> the slice of ranked hits to return, within maxTotalHits. */
export function pagination(p: SearchParams, settings: Settings): Paging {
  const max = settings.pagination.maxTotalHits;
  if (p.page !== null || p.hitsPerPage !== null) {
    const page = p.page ?? 1;
    const hitsPerPage = p.hitsPerPage ?? 20;
    const skip = page === 0 ? max : (page - 1) * hitsPerPage;
    const end = Math.min(max, skip + hitsPerPage);
    return { mode: 'pages', skip: Math.min(skip, max), take: Math.max(0, end - skip), want: end, page, hitsPerPage };
  }
  const skip = Math.min(p.offset, max);
  const end = Math.min(max, p.offset + p.limit);
  return { mode: 'offset', skip, take: Math.max(0, end - skip), want: end, page: 0, hitsPerPage: 0 };
}

/** The pagination envelope of a response: `estimatedTotalHits` or `totalHits`/`totalPages`. */
export function setPaginationFields(response: PaginationFields, paging: Paging, params: SearchParams, total: number): void {
  if (paging.mode === 'pages') {
    response.hitsPerPage = paging.hitsPerPage;
    response.page = paging.page;
    response.totalPages = paging.hitsPerPage === 0 ? 0 : Math.ceil(total / paging.hitsPerPage);
    response.totalHits = total;
  } else {
    response.limit = params.limit;
    response.offset = params.offset;
    response.estimatedTotalHits = total;
  }
}

/** Field ids to search in for `attributesToSearchOn`, or null for all. */
function searchFids(params: SearchParams, settings: Settings, paths: readonly string[]): number[] | null {
  const on = params.attributesToSearchOn;
  if (!on || on.includes('*')) return null;
  for (const attr of on) {
    if (!settings.searchableAttributes.some((s) => s === '*' || coversPath(s, attr) || coversPath(attr, s))) {
      const available = settings.searchableAttributes.join(', ');
      throw new SearchError('invalid_search_attributes_to_search_on', `Attribute \`${attr}\` is not searchable. Available searchable attributes are: \`${available}\`.`);
    }
  }
  const fids: number[] = [];
  paths.forEach((path, fid) => {
    if (on.some((a) => coversPath(a, path)) && isSearchable(path, settings.searchableAttributes)) fids.push(fid);
  });
  return fids;
}

function rankingRules(settings: Settings, params: SearchParams, placeholder: boolean): RankingRule[] {
  const sort = parseSortParam(params.sort, settings);
  const rules: RankingRule[] = [];
  for (const name of settings.rankingRules) {
    if (name === 'sort') {
      if (sort) rules.push(...sortRules(sort));
      continue;
    }
    // `attribute` is the former name of attributeRank + wordPosition.
    const builtin = name === 'attribute' ? [BUILTIN_RULES.attributeRank!, BUILTIN_RULES.wordPosition!] : BUILTIN_RULES[name] ? [BUILTIN_RULES[name]!] : null;
    if (builtin) {
      if (!placeholder) rules.push(...builtin);
      continue;
    }
    const custom = customRankingRule(name);
    if (custom) rules.push(custom);
  }
  return rules;
}

export function keywordSearch(
  index: Index,
  params: SearchParams,
  want: number,
  trace: PerformanceTrace = NO_TRACE,
  restrict: ((universe: Bitmap) => Bitmap) | null = null,
): KeywordResult {
  const settings = index.settings;
  const store = index.store;
  const started = Date.now();
  const analyzer = analyzerFor(settings);
  const reader = keywordReader(store);
  const filtered: Bitmap = params.filter !== null ? trace.stage('evaluate filter', () => filterDocids(index, params.filter)) : store.docids();
  const universe = restrict ? restrict(filtered) : filtered;
  const parsed = trace.stage('tokenize query', () => parseQuery(params.q ?? '', analyzer, params.locales));
  const { terms, candidates, paths, fids } = trace.stage('evaluate query', () => evaluateQuery(params, settings, parsed, universe, reader, analyzer));
  const placeholder = terms.length === 0;
  const distinctField = params.distinct ?? settings.distinctAttribute;
  if (params.distinct) checkDistinct(settings, params.distinct);
  const rules = rankingRules(settings, params, placeholder);
  const fidRanks = paths.map((p, fid) => attributeRank(p, fid, settings));
  const distinctRanks = [...new Set(fidRanks)].sort((a, b) => a - b);
  const rankIndex = new Map(distinctRanks.map((r, i) => [r, i]));
  const ctx: RankingContext = {
    store,
    settings,
    terms,
    matches: new MatchAnalyzer(reader, terms, fids ? new Set(fids) : null),
    matchingStrategy: params.matchingStrategy,
    fidRank: (fid) => rankIndex.get(fidRanks[fid] ?? 0) ?? 0,
    maxFidRank: Math.max(1, distinctRanks.length),
    reader,
    fids,
    ...enumerableWords(terms, reader),
  };
  const cutoff = settings.searchCutoffMs ?? DEFAULT_SEARCH_CUTOFF_MS;
  let sorted: ReturnType<typeof bucketSort>;
  try {
    sorted = trace.stage('keyword ranking', () =>
      bucketSort(rules, candidates, ctx, {
        want,
        threshold: params.rankingScoreThreshold,
        deadline: started + cutoff,
        distinct: distinctField ? distinctFilter(index, distinctField) : undefined,
      }),
    );
  } finally {
    ctx.matches.release();
  }
  // Documents below the threshold count nowhere: not in the totals, not in the facet distribution.
  if (sorted.aboveThresholdDocids) {
    const above = new RoaringBitmap32(sorted.aboveThresholdDocids);
    return { hits: sorted.hits, candidates: above, totalHits: sorted.aboveThreshold, terms, degraded: sorted.degraded };
  }
  return { hits: sorted.hits, candidates: toBitmap(candidates), totalHits: candidates.size, terms, degraded: sorted.degraded };
}

/** The documents the query words select (the widest `words` bucket), within the filter and without negated words. */
function evaluateQuery(
  params: SearchParams,
  settings: Settings,
  parsed: ReturnType<typeof parseQuery>,
  filtered: Bitmap,
  reader: ReturnType<typeof keywordReader>,
  analyzer: ReturnType<typeof analyzerFor>,
) {
  let universe = filtered;
  const paths = reader.fieldPaths();
  const fids = searchFids(params, settings, paths);
  const ctxResolve = { reader, analyzer, fids };
  if (parsed.negated.length > 0) universe = RoaringBitmap32.andNot(universe, negatedDocids(parsed.negated, ctxResolve));
  const terms = parsed.terms.length > 0 ? resolveTerms(parsed.terms, ctxResolve, settings.prefixSearch !== 'disabled') : [];
  const placeholder = terms.length === 0;
  let candidates = universe;
  if (!placeholder) {
    // Documents of the widest `words` bucket: all terms, or the ones the strategy keeps last.
    const strategy = params.matchingStrategy;
    let required: ResolvedTerm[];
    if (strategy === 'all') required = terms;
    else if (strategy === 'frequency') required = [[...terms].sort((a, b) => a.all.size - b.all.size)[0]!];
    else required = [terms[0]!];
    candidates = RoaringBitmap32.and(universe, required[0]!.all);
    for (const t of required.slice(1)) candidates = RoaringBitmap32.and(candidates, t.all);
  }
  return { terms, candidates, paths, fids };
}

/** Words a term can match, when few enough to rank from posting lists (phrases never are). */
function enumerableWords(terms: readonly ResolvedTerm[], reader: ReturnType<typeof keywordReader>): Pick<RankingContext, 'termWords' | 'termWordsCut' | 'termPrefixRecord'> {
  const cache = new Map<number, string[] | null>();
  const cut = new Set<number>();
  const records = new Map<number, string>();
  const termWords = (i: number): string[] | null => {
    if (cache.has(i)) return cache.get(i)!;
    const t = terms[i]!;
    let words: string[] | null = null;
    if (t.term.kind === 'word') {
      const set = new Set(t.words.keys());
      // A short prefix of the last word can stand for thousands of words: then its record
      // (kw-prefix-parts) stands for them, or where it has none, the words met without the
      // prefix extension rank the bucket, and pure prefix matches come after them.
      if (t.prefix !== null) {
        const extended = reader.dictionary().wordsWithPrefix(t.prefix, MAX_ENUMERATED + 1);
        if (extended.length + set.size <= MAX_ENUMERATED) for (const w of extended) set.add(w);
        else if (reader.hasPrefixRecord(t.prefix)) records.set(i, t.prefix);
        else cut.add(i);
      }
      words = [...set];
    }
    cache.set(i, words);
    return words;
  };
  return { termWords, termWordsCut: (i) => (termWords(i), cut.has(i)), termPrefixRecord: (i) => (termWords(i), records.get(i) ?? null) };
}

const MAX_ENUMERATED = 256;

/**
 * A ranked hit as returned: the displayed document, `_formatted`, `_matchesPosition` and the
 * scores asked for. `serialized`: the response is only turned into JSON (see hit-bytes.ts), so
 * the document part may come from the per-thread cache of displayed documents.
 */
export function presentHit(index: Index, hit: RankedHit, params: SearchParams, terms: readonly ResolvedTerm[], serialized = false): Hit {
  const settings = index.settings;
  const highlight = params.attributesToHighlight;
  const crop = params.attributesToCrop;
  const formatted = (highlight && highlight.length > 0) || (crop && crop.length > 0);
  let stored: Document | undefined;
  const storedDocument = () => (stored ??= index.store.getDocument(hit.docid) ?? {});
  const extras: Hit = {};
  if (formatted) {
    const analyzer = analyzerFor(settings);
    const match = matcherFor(terms);
    const wanted = [...(params.attributesToRetrieve ?? ['*']), ...(highlight ?? []), ...(crop ?? []).map((c) => c.split(':')[0]!)];
    const visible = index.present(hit.docid, storedDocument(), wanted.includes('*') ? null : wanted, params.retrieveVectors);
    const options: FormatOptions = {
      highlight,
      crop: crop ? crop.map((c) => parseCrop(c, params.cropLength)) : null,
      cropLength: params.cropLength,
      cropMarker: params.cropMarker,
      preTag: params.highlightPreTag,
      postTag: params.highlightPostTag,
      showMatchesPosition: params.showMatchesPosition,
    };
    extras._formatted = formatDocument(visible, analyzer, match, options, params.locales);
  }
  if (params.showMatchesPosition) {
    const visible = index.present(hit.docid, storedDocument(), null, false);
    extras._matchesPosition = matchesPosition(visible, analyzerFor(settings), matcherFor(terms), (p) => isSearchable(p, settings.searchableAttributes), params.locales);
  }
  // Sorting by `_geoPoint(...)` reports each hit's distance in meters, as the reference does.
  const geoDistance = params.sort ? hitGeoDistance(index.store, hit.docid, parseSortParam(params.sort, settings)) : undefined;
  if (geoDistance !== undefined) extras._geoDistance = Math.round(geoDistance);
  if (params.showRankingScore) extras._rankingScore = hit.score;
  if (params.showRankingScoreDetails) {
    extras._rankingScoreDetails = detailsObject(hit.details);
    // the combined weight of the dynamic search rules' scale actions that selected the hit
    if (hit.scale !== undefined) extras._rankingScoreDetails = { scale: { weight: hit.scale }, ...extras._rankingScoreDetails };
  }
  // Foreign keys replace ids in hits after this (Engine.hydrate): the cached bytes would not follow.
  const whole = (params.attributesToRetrieve === null || params.attributesToRetrieve.includes('*')) && !params.retrieveVectors;
  if (serialized && whole && settings.foreignKeys.length === 0) {
    const cached = displayedHit(index, hit.docid, extras);
    if (cached) return cached;
  }
  const out: Hit = index.present(hit.docid, storedDocument(), params.attributesToRetrieve, params.retrieveVectors);
  return Object.assign(out, extras);
}

function parseCrop(spec: string, defaultLength: number): { field: string; length: number } {
  const i = spec.lastIndexOf(':');
  if (i > 0 && /^\d+$/.test(spec.slice(i + 1))) return { field: spec.slice(0, i), length: Number(spec.slice(i + 1)) };
  return { field: spec, length: defaultLength };
}
