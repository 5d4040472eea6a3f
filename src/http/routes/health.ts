/** `/health` (public, for load balancers) and `/version`. */
import type { FastifyInstance } from 'fastify';
import type { HttpEngine } from '../engine-port.js';
import { checkKnownParams } from '../query-params.js';
import { addRoute } from '../route.js';
import { versionInfo } from '../version.js';

export function healthRoutes(app: FastifyInstance, _engine: HttpEngine): void {
  addRoute(app, { method: 'GET', url: '/health', action: null, handler: () => ({ status: 'available' }) });
  addRoute(app, {
    method: 'GET',
    url: '/version',
    action: 'version',
    handler: ({ query }) => {
      checkKnownParams(query, []);
      return versionInfo();
    },
  });
}
