/** `GET /stats` and `GET /indexes/:indexUid/stats`. */
import type { FastifyInstance } from 'fastify';
import type { HttpEngine } from '../engine-port.js';
import { checkKnownParams } from '../query-params.js';
import { addRoute } from '../route.js';
import { visibleStats } from '../auth.js';

export function statsRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'GET',
    url: '/stats',
    action: 'stats.get',
    handler: ({ request, query }) => {
      checkKnownParams(query, []);
      return visibleStats(request, engine.stats());
    },
  });
  addRoute(app, {
    method: 'GET',
    url: '/indexes/:indexUid/stats',
    action: 'stats.get',
    handler: ({ query, indexUid }) => {
      checkKnownParams(query, []);
      return engine.indexStats(indexUid);
    },
  });
}
