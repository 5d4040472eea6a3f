/**
 * CORS as the reference serves it: any origin, method and header, preflights cached for a day.
 * Browser front-ends built on the official clients call the API directly, so every answer
 * (errors included) carries `Access-Control-Allow-Origin`, and preflight `OPTIONS` requests are
 * answered before any authorization (they carry no credentials by design).
 */
import type { FastifyInstance } from 'fastify';

export function installCors(app: FastifyInstance): void {
  // a callback hook, not an async one: it runs on every request, and a promise per request costs
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('access-control-allow-origin', '*');
    done();
  });
  app.route({
    method: 'OPTIONS',
    url: '*',
    handler: (request, reply) => {
      reply.header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
      reply.header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '*');
      reply.header('access-control-max-age', '86400');
      reply.code(204).send();
    },
  });
}
