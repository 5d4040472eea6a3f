/**
 * `POST /indexes/:uid/similar`: documents closest to a given document, by one embedder's
 * vectors, within an optional filter. The target document's own vectors are the query (each of
 * them when it has several: a hit's score is its best similarity to any), and the target itself
 * is never a hit.
 */
import { PerformanceTrace, type PerformanceDetails } from './performance.js';
import { SearchError } from '../errors.js';
import { describeValue } from '../embedders/settings.js';
import type { Bitmap } from '../index/store.js';
import type { Document } from '../types.js';
import { vectorsExtension, type VectorsExtension } from '../vector/extension.js';
import { detailsObject } from './ranking/score.js';
import { checkEmbedder, semanticRanking, type RankedHit, type SearchableIndex } from './hybrid.js';

export interface SimilarIndex extends SearchableIndex {
  filterDocids(filter: unknown, errorCode?: string): Bitmap;
  present(docid: number, doc: Document, fields: readonly string[] | null | undefined, retrieveVectors?: boolean): Document;
}

export interface SimilarResponse {
  hits: Document[];
  id: string | number;
  processingTimeMs: number;
  limit: number;
  offset: number;
  estimatedTotalHits: number;
  performanceDetails?: PerformanceDetails;
}

interface SimilarQuery {
  id: string | number;
  embedder: string;
  offset: number;
  limit: number;
  filter?: unknown;
  attributesToRetrieve: string[] | null;
  retrieveVectors: boolean;
  showRankingScore: boolean;
  showRankingScoreDetails: boolean;
  showPerformanceDetails: boolean;
  rankingScoreThreshold: number | null;
}

const FIELDS = [
  'id',
  'embedder',
  'offset',
  'limit',
  'filter',
  'attributesToRetrieve',
  'retrieveVectors',
  'showRankingScore',
  'showRankingScoreDetails',
  'showPerformanceDetails',
  'rankingScoreThreshold',
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ID_PATTERN = /^[A-Za-z0-9_-]{1,511}$/;

export function parseSimilarQuery(body: unknown): SimilarQuery {
  if (!isObject(body)) throw new SearchError('bad_request', `Invalid value type: expected an object, but found ${describeValue(body)}`);
  for (const key of Object.keys(body))
    if (!FIELDS.includes(key))
      throw new SearchError('bad_request', `Unknown field \`${key}\`: expected one of ${FIELDS.map((f) => `\`${f}\``).join(', ')}`);
  const { id, embedder } = body;
  if (id === undefined) throw new SearchError('bad_request', 'Missing field `id`');
  if (!((typeof id === 'string' && ID_PATTERN.test(id)) || (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0)))
    throw new SearchError(
      'invalid_similar_id',
      'Invalid value at `.id`: the value of `id` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
    );
  if (embedder === undefined) throw new SearchError('bad_request', 'Missing field `embedder`');
  if (typeof embedder !== 'string')
    throw new SearchError('invalid_similar_embedder', `Invalid value type at \`.embedder\`: expected a string, but found ${describeValue(embedder)}`);
  const nat = (key: string, fallback: number): number => {
    const v = body[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw new SearchError(`invalid_similar_${snake(key)}`, `Invalid value type at \`.${key}\`: expected a positive integer, but found ${describeValue(v)}`);
    return v;
  };
  const bool = (key: string): boolean => {
    const v = body[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean')
      throw new SearchError(`invalid_similar_${snake(key)}`, `Invalid value type at \`.${key}\`: expected a boolean, but found ${describeValue(v)}`);
    return v;
  };
  const attrs = body.attributesToRetrieve;
  if (attrs !== undefined && attrs !== null && !(Array.isArray(attrs) && attrs.every((a) => typeof a === 'string')))
    throw new SearchError(
      'invalid_similar_attributes_to_retrieve',
      `Invalid value type at \`.attributesToRetrieve\`: expected an array, but found ${describeValue(attrs)}`,
    );
  const threshold = body.rankingScoreThreshold;
  if (threshold !== undefined && threshold !== null && (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)))
    throw new SearchError(
      'invalid_similar_ranking_score_threshold',
      'Invalid value at `.rankingScoreThreshold`: the value of `rankingScoreThreshold` is invalid, expected a float between `0.0` and `1.0`.',
    );
  return {
    id,
    embedder,
    offset: nat('offset', 0),
    limit: nat('limit', 20),
    filter: body.filter ?? undefined,
    attributesToRetrieve: (attrs as string[] | null | undefined) ?? null,
    retrieveVectors: bool('retrieveVectors'),
    showRankingScore: bool('showRankingScore'),
    showRankingScoreDetails: bool('showRankingScoreDetails'),
    showPerformanceDetails: bool('showPerformanceDetails'),
    rankingScoreThreshold: (threshold as number | null | undefined) ?? null,
  };
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export async function similarDocuments(index: SimilarIndex, body: unknown, extension: VectorsExtension = vectorsExtension): Promise<SimilarResponse> {
  const started = performance.now();
  const query = parseSimilarQuery(body);
  const trace = new PerformanceTrace(query.showPerformanceDetails, 'similar');
  checkEmbedder(query.embedder, index.settings, 'invalid_similar_embedder');
  const filter = query.filter === undefined ? undefined : trace.stage('evaluate filter', () => index.filterDocids(query.filter, 'invalid_similar_filter'));
  const externalId = String(query.id);
  const target = index.store.docidOf(externalId);
  if (target === undefined) throw new SearchError('not_found_similar_id', `Document \`${externalId}\` not found.`);

  const vectors = extension.vectorStore(index.store, query.embedder)?.get(target) ?? [];
  const window = query.offset + query.limit;
  const best = new Map<number, RankedHit>();
  let candidates: Bitmap | undefined;
  for (const vector of vectors) {
    const ranking = await trace.stageAsync('semantic ranking', () =>
      semanticRanking(
        index,
        { embedder: query.embedder, vector, filter, limit: window, rankingScoreThreshold: query.rankingScoreThreshold, exclude: target },
        extension,
      ),
    );
    candidates = ranking.candidates;
    for (const hit of ranking.hits) if ((best.get(hit.docid)?.score ?? -1) < hit.score) best.set(hit.docid, hit);
  }
  const ranked = [...best.values()].sort((a, b) => b.score - a.score);
  const page = ranked.slice(query.offset, window);
  const hits = trace.stage('format', () =>
    page.map((hit) => {
      const doc = index.store.getDocument(hit.docid)!;
      const out = index.present(hit.docid, doc, query.attributesToRetrieve, query.retrieveVectors);
      if (query.showRankingScore) out._rankingScore = hit.score;
      if (query.showRankingScoreDetails) out._rankingScoreDetails = detailsObject(hit.details);
      return out;
    }),
  );
  const elapsed = performance.now() - started;
  const response: SimilarResponse = {
    hits,
    id: query.id,
    processingTimeMs: Math.round(elapsed),
    limit: query.limit,
    offset: query.offset,
    estimatedTotalHits: vectors.length === 0 ? 0 : candidates?.size ?? 0,
  };
  if (trace.enabled) {
    trace.add('', elapsed);
    response.performanceDetails = trace.details();
  }
  return response;
}
