/** `POST /dumps`: enqueue a `dumpCreation` task (the file lands in the server's dump directory). */
import type { FastifyInstance } from 'fastify';
import type { Ops } from '../../engine/ops/service.js';
import { writeOptions } from '../query-params.js';
import { addRoute } from '../route.js';
import type { RouteModule } from './index.js';

export function dumpRoutes(ops: Pick<Ops, 'createDump'>): RouteModule {
  return (app: FastifyInstance) => {
    addRoute(app, {
      method: 'POST',
      url: '/dumps',
      action: 'dumps.create',
      handler: async ({ reply, query }) => {
        reply.code(202);
        return ops.createDump(writeOptions(query));
      },
    });
  };
}
