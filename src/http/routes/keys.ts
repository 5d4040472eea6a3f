/**
 * `/keys`: list, create, get, update (name and description only) and delete API keys. A key is
 * addressed by its uid or by its value. These routes need a master key to exist at all: the
 * guard answers `missing_master_key` on an unprotected instance.
 */
import type { FastifyInstance } from 'fastify';
import type { AuthController } from '../../engine/auth/auth-controller.js';
import { readJsonBody } from '../json-body.js';
import { checkKnownParams, pagination } from '../query-params.js';
import { addRoute } from '../route.js';
import type { RouteModule } from './index.js';

export function keyRoutes(auth: AuthController): RouteModule {
  return (app: FastifyInstance) => {
    addRoute(app, {
      method: 'GET',
      url: '/keys',
      action: 'keys.get',
      handler: ({ query }) => {
        checkKnownParams(query, ['offset', 'limit']);
        return auth.listKeys(pagination(query, 'api_key'));
      },
    });
    addRoute(app, {
      method: 'POST',
      url: '/keys',
      action: 'keys.create',
      handler: ({ request, reply, query }) => {
        checkKnownParams(query, []);
        const key = auth.createKey(readJsonBody(request));
        reply.code(201);
        return key;
      },
    });
    addRoute(app, {
      method: 'GET',
      url: '/keys/:uidOrKey',
      action: 'keys.get',
      handler: ({ params, query }) => {
        checkKnownParams(query, []);
        return auth.getKey(params.uidOrKey!);
      },
    });
    addRoute(app, {
      method: 'PATCH',
      url: '/keys/:uidOrKey',
      action: 'keys.update',
      handler: ({ request, params, query }) => {
        checkKnownParams(query, []);
        return auth.updateKey(params.uidOrKey!, readJsonBody(request));
      },
    });
    addRoute(app, {
      method: 'DELETE',
      url: '/keys/:uidOrKey',
      action: 'keys.delete',
      handler: ({ reply, params, query }) => {
        checkKnownParams(query, []);
        auth.deleteKey(params.uidOrKey!);
        return reply.code(204).send();
      },
    });
  };
}
