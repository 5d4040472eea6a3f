/** `/batches`: the same filters as `/tasks`, applied to the batches' tasks. */
import type { FastifyInstance } from 'fastify';
import type { HttpEngine } from '../engine-port.js';
import { checkKnownParams, parseUint } from '../query-params.js';
import { addRoute } from '../route.js';
import { parseTaskListQuery } from '../task-query.js';

export function batchRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'GET',
    url: '/batches',
    action: 'tasks.get',
    handler: ({ query }) => engine.getBatches(parseTaskListQuery(query)),
  });
  addRoute(app, {
    method: 'GET',
    url: '/batches/:batchUid',
    action: 'tasks.get',
    handler: ({ query, params }) => {
      checkKnownParams(query, []);
      return engine.getBatch(parseUint(params.batchUid!, 'batchUid', 'invalid_batch_uid'));
    },
  });
}
