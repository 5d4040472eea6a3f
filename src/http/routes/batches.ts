/** `/batches`: the same filters as `/tasks`, applied to the batches' tasks. */
import type { FastifyInstance } from 'fastify';
import { visibleBatch, visibleBatches } from '../auth.js';
import type { HttpEngine } from '../engine-port.js';
import { checkKnownParams, parseUint } from '../query-params.js';
import { addRoute } from '../route.js';
import { parseTaskListQuery } from '../task-query.js';

export function batchRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'GET',
    url: '/batches',
    action: 'tasks.get',
    handler: ({ request, query }) => visibleBatches(request, (q, scope) => engine.getBatches(q, scope), parseTaskListQuery(query)),
  });
  addRoute(app, {
    method: 'GET',
    url: '/batches/:batchUid',
    action: 'tasks.get',
    handler: ({ request, query, params }) => {
      checkKnownParams(query, []);
      return visibleBatch(request, engine.getBatch(parseUint(params.batchUid!, 'batchUid', 'invalid_batch_uid')));
    },
  });
}
