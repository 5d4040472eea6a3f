/**
 * `/indexes/:indexUid/settings` and one sub-route per setting (`/settings/stop-words`…). Bodies are
 * checked here with the settings module's validators before anything is enqueued, so that a bad
 * value is a 400 `invalid_settings_*` at request time, as in the reference, and never a task that
 * fails later; a setting behaves the same whether it is sent whole or through its sub-route.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Settings } from '../../engine/settings/types.js';
import { validateSetting, validateSettingsPatch } from '../../engine/settings/validate.js';
import { mayCreateIndex } from '../auth.js';
import type { HttpEngine } from '../engine-port.js';
import { readJsonBody } from '../json-body.js';
import { checkKnownParams, writeOptions } from '../query-params.js';
import { accepted, addRoute } from '../route.js';

/** Each setting with the method its sub-route updates with: PATCH for object-shaped settings merged field by field. */
export const SETTING_ROUTES: ReadonlyArray<[key: keyof Settings, method: 'PUT' | 'PATCH']> = [
  ['displayedAttributes', 'PUT'],
  ['searchableAttributes', 'PUT'],
  ['filterableAttributes', 'PUT'],
  ['sortableAttributes', 'PUT'],
  ['rankingRules', 'PUT'],
  ['stopWords', 'PUT'],
  ['nonSeparatorTokens', 'PUT'],
  ['separatorTokens', 'PUT'],
  ['dictionary', 'PUT'],
  ['synonyms', 'PUT'],
  ['distinctAttribute', 'PUT'],
  ['proximityPrecision', 'PUT'],
  ['typoTolerance', 'PATCH'],
  ['faceting', 'PATCH'],
  ['pagination', 'PATCH'],
  ['embedders', 'PATCH'],
  ['searchCutoffMs', 'PUT'],
  ['localizedAttributes', 'PUT'],
  ['facetSearch', 'PUT'],
  ['prefixSearch', 'PUT'],
  ['foreignKeys', 'PUT'],
];

/**
 * A setting's value as a JSON document. Fastify would send a bare string (`proximity-precision`,
 * `prefix-search`, `distinct-attribute`) as `text/plain` without quotes; clients parse every
 * settings answer as JSON, so each value is serialized here, strings and null included.
 */
function jsonValue(reply: FastifyReply, value: unknown): string {
  reply.type('application/json; charset=utf-8');
  return JSON.stringify(value);
}

export function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function settingsRoutes(app: FastifyInstance, engine: HttpEngine): void {
  const base = '/indexes/:indexUid/settings';

  addRoute(app, {
    method: 'GET',
    url: base,
    action: 'settings.get',
    handler: ({ query, indexUid }) => {
      checkKnownParams(query, []);
      return engine.getSettings(indexUid);
    },
  });
  addRoute(app, {
    method: 'PATCH',
    url: base,
    action: 'settings.update',
    handler: async ({ request, reply, query, indexUid }) => {
      const patch = validateSettingsPatch(readJsonBody(request));
      return accepted(reply, await engine.updateSettings(indexUid, patch, { allowIndexCreation: mayCreateIndex(request, indexUid), ...writeOptions(query) }));
    },
  });
  addRoute(app, {
    method: 'DELETE',
    url: base,
    action: 'settings.update',
    handler: async ({ request, reply, query, indexUid }) =>
      accepted(reply, await engine.resetSettings(indexUid, undefined, { allowIndexCreation: mayCreateIndex(request, indexUid), ...writeOptions(query) })),
  });

  for (const [key, method] of SETTING_ROUTES) {
    const url = `${base}/${kebabCase(key)}`;
    addRoute(app, {
      method: 'GET',
      url,
      action: 'settings.get',
      handler: ({ query, reply, indexUid }) => {
        checkKnownParams(query, []);
        return jsonValue(reply, engine.getSettings(indexUid)[key]);
      },
    });
    addRoute(app, {
      method,
      url,
      action: 'settings.update',
      handler: async ({ request, reply, query, indexUid }) => {
        const patch = { [key]: validateSetting(key, readJsonBody(request)) };
        return accepted(reply, await engine.updateSettings(indexUid, patch, { allowIndexCreation: mayCreateIndex(request, indexUid), ...writeOptions(query) }));
      },
    });
    addRoute(app, {
      method: 'DELETE',
      url,
      action: 'settings.update',
      handler: async ({ request, reply, query, indexUid }) =>
        accepted(reply, await engine.resetSettings(indexUid, [key], { allowIndexCreation: mayCreateIndex(request, indexUid), ...writeOptions(query) })),
    });
  }
}
