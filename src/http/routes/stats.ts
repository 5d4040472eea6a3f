/**
 * `GET /stats` and `GET /indexes/:indexUid/stats`, with the reference's query parameters:
 * `showInternalDatabaseSizes` (each index's databases and their sizes) and `sizeFormat`
 * (`raw`, bytes as numbers, the default; `human`, strings such as `19.64 MiB`).
 */
import type { FastifyInstance } from 'fastify';
import { SearchError } from '../../engine/errors.js';
import { humanSize } from '../../engine/wire/size.js';
import type { GlobalStats, IndexStats } from '../../engine/types.js';
import type { HttpEngine } from '../engine-port.js';
import { boolParam, checkKnownParams, type QueryParams } from '../query-params.js';
import { addRoute } from '../route.js';
import { visibleStats } from '../auth.js';

const PARAMS = ['showInternalDatabaseSizes', 'sizeFormat'] as const;

export function statsRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'GET',
    url: '/stats',
    action: 'stats.get',
    handler: ({ request, query }) => {
      const { options, human } = statsParams(query);
      const stats = visibleStats(request, engine.stats(options));
      return human ? humanGlobal(stats) : stats;
    },
  });
  addRoute(app, {
    method: 'GET',
    url: '/indexes/:indexUid/stats',
    action: 'stats.get',
    handler: ({ query, indexUid }) => {
      const { options, human } = statsParams(query);
      const stats = engine.indexStats(indexUid, options);
      return human ? humanIndex(stats) : stats;
    },
  });
}

function statsParams(query: QueryParams) {
  checkKnownParams(query, PARAMS);
  const internalDatabaseSizes = boolParam(query, 'showInternalDatabaseSizes', 'bad_request') ?? false;
  const format = query.sizeFormat ?? 'raw';
  if (format !== 'raw' && format !== 'human')
    throw new SearchError('bad_request', `Invalid value in parameter \`sizeFormat\`: unknown value \`${format}\`, expected one of \`human\`, \`raw\``);
  return { options: { internalDatabaseSizes }, human: format === 'human' };
}

type Human<T> = { [K in keyof T]: T[K] extends number ? number | string : T[K] };

function humanIndex(stats: IndexStats): Human<IndexStats> {
  const out: Human<IndexStats> = { ...stats, rawDocumentDbSize: humanSize(stats.rawDocumentDbSize), avgDocumentSize: humanSize(stats.avgDocumentSize) };
  if (stats.internalDatabaseSizes)
    out.internalDatabaseSizes = Object.fromEntries(Object.entries(stats.internalDatabaseSizes).map(([name, bytes]) => [name, humanSize(bytes)])) as unknown as Record<string, number>;
  return out;
}

function humanGlobal(stats: GlobalStats) {
  return {
    ...stats,
    databaseSize: humanSize(stats.databaseSize),
    usedDatabaseSize: humanSize(stats.usedDatabaseSize),
    indexes: Object.fromEntries(Object.entries(stats.indexes).map(([uid, s]) => [uid, humanIndex(s)])),
  };
}
