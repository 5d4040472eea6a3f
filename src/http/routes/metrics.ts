/**
 * `GET /metrics`: Prometheus metrics (see ../metrics.ts), behind the `metrics.get` action and an
 * experimental feature as in the reference. Whether the feature is on is asked on every request
 * (`isEnabled`), so that a runtime switch can drive it as well as the serve option.
 */
import type { FastifyInstance } from 'fastify';
import { SearchError } from '../../engine/errors.js';
import { requestAuthorization } from '../auth.js';
import type { HttpEngine } from '../engine-port.js';
import type { ServerMetrics } from '../metrics.js';
import { addRoute } from '../route.js';
import type { RouteModule } from './index.js';

export function metricsRoutes(metrics: ServerMetrics, isEnabled: () => boolean): RouteModule {
  return (app: FastifyInstance, _engine: HttpEngine) => {
    metrics.instrument(app);
    addRoute(app, {
      method: 'GET',
      url: '/metrics',
      action: 'metrics.get',
      handler: async ({ request, reply }) => {
        if (!isEnabled())
          throw new SearchError(
            'feature_not_enabled',
            'Getting metrics requires enabling the `metrics` experimental feature (`--experimental-enable-metrics`). See https://github.com/meilisearch/product/discussions/625',
          );
        // The metrics cover every index: a key scoped to some indexes must not see the others.
        if (!requestAuthorization(request).allIndexesAuthorized())
          throw new SearchError('invalid_api_key', 'The provided API key is invalid. The API key for the `/metrics` route must allow access to all indexes.');
        reply.type(metrics.contentType);
        return metrics.scrape();
      },
    });
  };
}
