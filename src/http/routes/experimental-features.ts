/** `/experimental-features`: read and toggle the experimental flags (synchronous, no task). */
import type { FastifyInstance } from 'fastify';
import { FEATURE_NAMES, type ExperimentalFeatures } from '../../engine/experimental-features.js';
import type { HttpEngine } from '../engine-port.js';
import { expectObject, invalidType, readJsonBody } from '../json-body.js';
import { checkKnownParams } from '../query-params.js';
import { addRoute } from '../route.js';

/** A PATCH body: known flags only, each a boolean or null (null leaves the flag as it is). */
export function parseFeaturesPatch(value: unknown): Partial<ExperimentalFeatures> {
  const body = expectObject(value, { fields: FEATURE_NAMES });
  const patch: Partial<ExperimentalFeatures> = {};
  for (const name of FEATURE_NAMES) {
    const flag = body[name];
    if (flag === undefined || flag === null) continue;
    if (typeof flag !== 'boolean') throw invalidType(`.${name}`, 'a boolean', flag, 'bad_request');
    patch[name] = flag;
  }
  return patch;
}

export function experimentalFeatureRoutes(app: FastifyInstance, engine: HttpEngine): void {
  addRoute(app, {
    method: 'GET',
    url: '/experimental-features',
    action: 'experimental.get',
    handler: ({ query }) => {
      checkKnownParams(query, []);
      return engine.getExperimentalFeatures();
    },
  });
  addRoute(app, {
    method: 'PATCH',
    url: '/experimental-features',
    action: 'experimental.update',
    handler: ({ request, query }) => {
      checkKnownParams(query, []);
      return engine.updateExperimentalFeatures(parseFeaturesPatch(readJsonBody(request)));
    },
  });
}
