/** `POST /snapshots`: enqueue a `snapshotCreation` task (`<snapshot-dir>/<db-name>.snapshot`). */
import type { FastifyInstance } from 'fastify';
import type { Ops } from '../../engine/ops/service.js';
import { writeOptions } from '../query-params.js';
import { addRoute } from '../route.js';
import type { RouteModule } from './index.js';

export function snapshotRoutes(ops: Pick<Ops, 'createSnapshot'>): RouteModule {
  return (app: FastifyInstance) => {
    addRoute(app, {
      method: 'POST',
      url: '/snapshots',
      action: 'snapshots.create',
      handler: async ({ reply, query }) => {
        reply.code(202);
        return ops.createSnapshot(writeOptions(query));
      },
    });
  };
}
