/**
 * `/dynamic-search-rules` (the `dynamicSearchRules` experimental feature): list (`POST`), read,
 * create or update (`PATCH`, a `dsrUpdate` task), delete (a `dsrUpdate` task), delete all (a
 * `dsrClear` task). See engine/search-rules/rules.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HttpEngine } from '../engine-port.js';
import { readJsonBody } from '../json-body.js';
import { checkKnownParams, writeOptions } from '../query-params.js';
import { accepted, addRoute } from '../route.js';

/** The listing's body is optional: no body lists the first page. */
function optionalBody(request: FastifyRequest): unknown {
  const length = Number(request.headers['content-length'] ?? 0);
  if (!request.headers['content-type'] && !(length > 0)) return {};
  return readJsonBody(request);
}

export function searchRuleRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'POST',
    url: '/dynamic-search-rules',
    action: 'dynamicSearchRules.get',
    handler: ({ request, query }) => {
      checkKnownParams(query, []);
      return engine.listSearchRules(optionalBody(request));
    },
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/dynamic-search-rules',
    action: 'dynamicSearchRules.delete',
    handler: async ({ reply, query }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.clearSearchRules(writeOptions(query)));
    },
  });
  addRoute(app, {
    method: 'GET',
    url: '/dynamic-search-rules/:ruleUid',
    action: 'dynamicSearchRules.get',
    handler: ({ params, query }) => {
      checkKnownParams(query, []);
      return engine.getSearchRule(params.ruleUid!);
    },
  });
  addRoute(app, {
    method: 'PATCH',
    url: '/dynamic-search-rules/:ruleUid',
    action: 'dynamicSearchRules.update',
    handler: async ({ request, reply, params, query }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.updateSearchRule(params.ruleUid!, readJsonBody(request), writeOptions(query)));
    },
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/dynamic-search-rules/:ruleUid',
    action: 'dynamicSearchRules.delete',
    handler: async ({ reply, params, query }) => {
      checkKnownParams(query, ['customMetadata']);
      return accepted(reply, await engine.deleteSearchRule(params.ruleUid!, writeOptions(query)));
    },
  });
}
