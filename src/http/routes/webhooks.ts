/**
 * `/webhooks`: the task webhooks. Responses never carry `Authorization` header values whole; the
 * instance webhook given on the command line is listed with `isEditable: false`.
 */
import type { FastifyInstance } from 'fastify';
import type { WebhookStore } from '../../engine/webhooks/webhook-store.js';
import { readJsonBody } from '../json-body.js';
import { checkKnownParams } from '../query-params.js';
import { addRoute } from '../route.js';
import type { RouteModule } from './index.js';

export function webhookRoutes(store: WebhookStore): RouteModule {
  return (app: FastifyInstance) => {
    addRoute(app, {
      method: 'GET',
      url: '/webhooks',
      action: 'webhooks.get',
      handler: ({ query }) => {
        checkKnownParams(query, []);
        return store.list();
      },
    });
    addRoute(app, {
      method: 'POST',
      url: '/webhooks',
      action: 'webhooks.create',
      handler: ({ request, reply, query }) => {
        checkKnownParams(query, []);
        const created = store.create(readJsonBody(request));
        reply.code(201);
        return created;
      },
    });
    addRoute(app, {
      method: 'GET',
      url: '/webhooks/:uuid',
      action: 'webhooks.get',
      handler: ({ params, query }) => {
        checkKnownParams(query, []);
        return store.get(params.uuid!);
      },
    });
    addRoute(app, {
      method: 'PATCH',
      url: '/webhooks/:uuid',
      action: 'webhooks.update',
      handler: ({ request, params, query }) => {
        checkKnownParams(query, []);
        return store.update(params.uuid!, readJsonBody(request));
      },
    });
    addRoute(app, {
      method: 'DELETE',
      url: '/webhooks/:uuid',
      action: 'webhooks.delete',
      handler: ({ reply, params, query }) => {
        checkKnownParams(query, []);
        store.delete(params.uuid!);
        return reply.code(204).send();
      },
    });
  };
}
