/**
 * How routes are declared. Each route states the API-key action it needs (`null` for public
 * routes) and, for routes under `/indexes/:indexUid`, that the uid comes from the path. The
 * declaration is stored in the fastify route config, so an access guard registered as an
 * `onRequest` hook (see `AccessGuard` in server.ts) can authorize every route without any route
 * knowing about keys; the path uid is checked here, once, for every index route.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { checkPathIndexUid } from './index-uid.js';
import type { QueryParams } from './query-params.js';

export interface RouteAccess {
  /** The API-key action this route requires (`documents.add`, `tasks.get`…); null: public. */
  action: string | null;
  /** The index the request targets, read from this path parameter when there is one. */
  indexUidParam: 'indexUid' | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

/** The access declaration of the route a request matched (undefined for unknown routes). */
export function routeAccess(request: FastifyRequest): { action: string | null; indexUid: string | null } | undefined {
  const access = request.routeOptions.config.access;
  if (!access) return undefined;
  const params = request.params as Record<string, string> | undefined;
  return { action: access.action, indexUid: access.indexUidParam ? (params?.[access.indexUidParam] ?? null) : null };
}

export interface RouteContext {
  request: FastifyRequest;
  reply: FastifyReply;
  params: Record<string, string>;
  query: QueryParams;
  /** The validated index uid of `/indexes/:indexUid/...` routes. */
  indexUid: string;
}

export interface RouteSpec {
  method: HTTPMethods | HTTPMethods[];
  url: string;
  action: string | null;
  handler: (ctx: RouteContext) => unknown;
}

export function addRoute(app: FastifyInstance, spec: RouteSpec): void {
  const indexUidParam = spec.url.includes(':indexUid') ? 'indexUid' : null;
  app.route({
    method: spec.method,
    url: spec.url,
    config: { access: { action: spec.action, indexUidParam } },
    handler: async (request, reply) => {
      const params = (request.params ?? {}) as Record<string, string>;
      const indexUid = indexUidParam ? checkPathIndexUid(params.indexUid ?? '') : '';
      const query = (request.query ?? {}) as QueryParams;
      return spec.handler({ request, reply, params, query, indexUid });
    },
  });
}

/** A write was accepted: 202 with the summarized task. */
export function accepted(reply: FastifyReply, task: unknown): unknown {
  reply.code(202);
  return task;
}
