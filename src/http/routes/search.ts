/**
 * Search routes: `search`, `multi-search`, `facet-search`, `similar`. POST bodies go to the engine
 * as they are (it validates them); GET query strings are first turned into the equivalent body,
 * with the parameter types the reference gives them. Each route is served once the engine offers
 * the matching method (the search module adds them).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { foreignIndexUids } from '../../engine/search/foreign-keys.js';
import type { Settings } from '../../engine/settings/types.js';
import type { SearchRequest } from '../../engine/search/search-threads.js';
import { wantsMetadata } from '../../engine/search/metadata.js';
import type { HttpEngine } from '../engine-port.js';
import { readJsonBody } from '../json-body.js';
import { boolParam, checkKnownParams, floatParam, listParam, paramError, uintParam } from '../query-params.js';
import type { QueryParams } from '../query-params.js';
import { addRoute } from '../route.js';
import { requestAuthorization, restrictMultiSearchBody, restrictSearchBody } from '../auth.js';
import { checkMultiSearchSize } from '../request-limits.js';

type ParamKind = 'string' | 'uint' | 'list' | 'bool' | 'float' | 'vector';

const SEARCH_PARAMS: Record<string, ParamKind> = {
  q: 'string',
  offset: 'uint',
  limit: 'uint',
  page: 'uint',
  hitsPerPage: 'uint',
  attributesToRetrieve: 'list',
  retrieveVectors: 'bool',
  attributesToCrop: 'list',
  cropLength: 'uint',
  attributesToHighlight: 'list',
  filter: 'string',
  sort: 'list',
  distinct: 'string',
  showMatchesPosition: 'bool',
  showRankingScore: 'bool',
  showRankingScoreDetails: 'bool',
  showPerformanceDetails: 'bool',
  facets: 'list',
  highlightPreTag: 'string',
  highlightPostTag: 'string',
  cropMarker: 'string',
  matchingStrategy: 'string',
  attributesToSearchOn: 'list',
  rankingScoreThreshold: 'float',
  locales: 'list',
  vector: 'vector',
  hybridEmbedder: 'string',
  hybridSemanticRatio: 'float',
  personalizeUserContext: 'string',
};

const SIMILAR_PARAMS: Record<string, ParamKind> = {
  id: 'string',
  offset: 'uint',
  limit: 'uint',
  attributesToRetrieve: 'list',
  retrieveVectors: 'bool',
  filter: 'string',
  showRankingScore: 'bool',
  showRankingScoreDetails: 'bool',
  showPerformanceDetails: 'bool',
  rankingScoreThreshold: 'float',
  embedder: 'string',
};

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Error code of a bad GET parameter, e.g. `invalid_search_hits_per_page`. */
function codeFor(family: 'search' | 'similar', name: string): string {
  if (name === 'hybridEmbedder') return 'invalid_search_embedder';
  if (name === 'hybridSemanticRatio') return 'invalid_search_semantic_ratio';
  return `invalid_${family}_${snakeCase(name)}`;
}

/** Convert a GET query string into the body the POST route would take. */
export function queryToBody(query: QueryParams, family: 'search' | 'similar'): Record<string, unknown> {
  const kinds = family === 'search' ? SEARCH_PARAMS : SIMILAR_PARAMS;
  checkKnownParams(query, Object.keys(kinds));
  const body: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(query)) {
    const code = codeFor(family, name);
    switch (kinds[name]!) {
      case 'string':
        body[name] = text;
        break;
      case 'uint':
        body[name] = uintParam(query, name, code);
        break;
      case 'bool':
        body[name] = boolParam(query, name, code);
        break;
      case 'float':
        body[name] = floatParam(query, name, code);
        break;
      case 'list':
        body[name] = listParam(query, name);
        break;
      case 'vector':
        body[name] = (listParam(query, name) ?? []).map((item) => {
          const value = Number(item);
          if (!Number.isFinite(value)) throw paramError(name, `could not parse \`${item}\` as a number`, code);
          return value;
        });
        break;
    }
  }
  if ('hybridEmbedder' in body || 'hybridSemanticRatio' in body) {
    const hybrid: Record<string, unknown> = {};
    if ('hybridEmbedder' in body) hybrid.embedder = body.hybridEmbedder;
    if ('hybridSemanticRatio' in body) hybrid.semanticRatio = body.hybridSemanticRatio;
    delete body.hybridEmbedder;
    delete body.hybridSemanticRatio;
    body.hybrid = hybrid;
  }
  if ('personalizeUserContext' in body) {
    body.personalize = { userContext: body.personalizeUserContext };
    delete body.personalizeUserContext;
  }
  return body;
}

/**
 * The foreign-key indexes of the searched indexes whose documents this request may receive in
 * hits: those the key (or tenant token) may read without a tenant filter of their own. Undefined
 * when every index is readable. An index that does not exist is left to the search to report.
 */
function readableForeignIndexes(engine: HttpEngine, request: FastifyRequest, searched: readonly string[]): string[] | undefined {
  const authorization = requestAuthorization(request);
  if (authorization.allIndexesAuthorized() && !authorization.isTenantToken) return undefined;
  const readable = new Set<string>();
  for (const uid of searched) {
    let settings: Settings;
    try {
      settings = engine.getSettings(uid);
    } catch {
      continue;
    }
    for (const foreign of foreignIndexUids(settings))
      if (authorization.canAccessIndex(foreign) && authorization.applySearchRules(foreign, null) === null) readable.add(foreign);
  }
  return [...readable];
}

/** The indexes a multi-search body names, as far as it is well-formed (the engine reports the rest). */
function queriedIndexes(body: unknown): string[] {
  const queries = (body as { queries?: unknown } | null)?.queries;
  if (!Array.isArray(queries)) return [];
  return queries.flatMap((q) => (typeof (q as { indexUid?: unknown } | null)?.indexUid === 'string' ? [(q as { indexUid: string }).indexUid] : []));
}

/**
 * Answer a search request. An engine that serializes answers itself (in its search threads when
 * it has some) hands back the body as UTF-8 JSON, sent as it is; otherwise fastify serializes the
 * object the matching method returns.
 */
/** The reference's request header that asks for each query's `metadata` (search/metadata.ts). */
const METADATA_HEADER = 'meili-include-metadata';

function answerer(engine: HttpEngine): (reply: FastifyReply, request: SearchRequest) => unknown {
  return (reply, request) => {
    if (engine.answer) {
      reply.type('application/json; charset=utf-8');
      return engine.answer(request);
    }
    switch (request.kind) {
      case 'search':
        return engine.search!(request.uid, request.body);
      case 'facetSearch':
        return engine.facetSearch!(request.uid, request.body);
      case 'similar':
        return engine.similar!(request.uid, request.body);
      case 'multiSearch':
        return engine.multiSearch!(request.body);
    }
  };
}

export function searchRoutes(app: FastifyInstance, engine: HttpEngine): void {
  const answer = answerer(engine);
  if (engine.search) {
    addRoute(app, {
      method: 'GET',
      url: '/indexes/:indexUid/search',
      action: 'search',
      handler: ({ request, reply, query, indexUid }) =>
        answer(reply, {
          kind: 'search',
          uid: indexUid,
          body: restrictSearchBody(request, indexUid, queryToBody(query, 'search')),
          foreignIndexes: readableForeignIndexes(engine, request, [indexUid]),
          includeMetadata: wantsMetadata(request.headers[METADATA_HEADER]),
        }),
    });
    addRoute(app, {
      method: 'POST',
      url: '/indexes/:indexUid/search',
      action: 'search',
      handler: ({ request, reply, query, indexUid }) => {
        checkKnownParams(query, []);
        return answer(reply, {
          kind: 'search',
          uid: indexUid,
          body: restrictSearchBody(request, indexUid, readJsonBody(request)),
          foreignIndexes: readableForeignIndexes(engine, request, [indexUid]),
          includeMetadata: wantsMetadata(request.headers[METADATA_HEADER]),
        });
      },
    });
  }
  if (engine.multiSearch) {
    addRoute(app, {
      method: 'POST',
      url: '/multi-search',
      action: 'search',
      handler: ({ request, reply, query }) => {
        checkKnownParams(query, []);
        const raw = readJsonBody(request);
        checkMultiSearchSize(request, raw);
        const body = restrictMultiSearchBody(request, raw);
        return answer(reply, {
          kind: 'multiSearch',
          body,
          foreignIndexes: readableForeignIndexes(engine, request, queriedIndexes(body)),
          includeMetadata: wantsMetadata(request.headers[METADATA_HEADER]),
        });
      },
    });
  }
  if (engine.facetSearch) {
    addRoute(app, {
      method: 'POST',
      url: '/indexes/:indexUid/facet-search',
      action: 'search',
      handler: ({ request, reply, query, indexUid }) => {
        checkKnownParams(query, []);
        return answer(reply, { kind: 'facetSearch', uid: indexUid, body: restrictSearchBody(request, indexUid, readJsonBody(request)) });
      },
    });
  }
  if (engine.similar) {
    addRoute(app, {
      method: 'GET',
      url: '/indexes/:indexUid/similar',
      action: 'search',
      handler: ({ request, reply, query, indexUid }) =>
        answer(reply, {
          kind: 'similar',
          uid: indexUid,
          body: restrictSearchBody(request, indexUid, queryToBody(query, 'similar')),
          foreignIndexes: readableForeignIndexes(engine, request, [indexUid]),
          includeMetadata: wantsMetadata(request.headers[METADATA_HEADER]),
        }),
    });
    addRoute(app, {
      method: 'POST',
      url: '/indexes/:indexUid/similar',
      action: 'search',
      handler: ({ request, reply, query, indexUid }) => {
        checkKnownParams(query, []);
        return answer(reply, {
          kind: 'similar',
          uid: indexUid,
          body: restrictSearchBody(request, indexUid, readJsonBody(request)),
          foreignIndexes: readableForeignIndexes(engine, request, [indexUid]),
          includeMetadata: wantsMetadata(request.headers[METADATA_HEADER]),
        });
      },
    });
  }
}
