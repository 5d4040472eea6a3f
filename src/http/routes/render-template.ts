/**
 * `POST /render-template`: an embedder's document template, or an inline one, rendered on a
 * document of an index or an inline one. Every index the body names is authorized against the
 * key before anything is read from it. Gated by the `renderRoute` experimental feature.
 */
import type { FastifyInstance } from 'fastify';
import { renderTemplateIndexes } from '../../engine/embedders/render-template.js';
import { featureNotEnabled, RENDER_ROUTE_ACTION } from '../../engine/experimental-features.js';
import { assertIndexesAuthorized } from '../auth.js';
import type { HttpEngine } from '../engine-port.js';
import { readJsonBody } from '../json-body.js';
import { checkKnownParams } from '../query-params.js';
import { addRoute } from '../route.js';

export function renderTemplateRoutes(app: FastifyInstance, engine: HttpEngine): void {
  const render = engine.renderTemplate?.bind(engine);
  if (!render) return;
  addRoute(app, {
    method: 'POST',
    url: '/render-template',
    // what it reveals is document content: the same right as reading documents
    action: 'documents.get',
    handler: ({ request, query }) => {
      // the reference serves this route only with the `renderRoute` experimental feature on
      if (!engine.getExperimentalFeatures().renderRoute) throw featureNotEnabled('renderRoute', RENDER_ROUTE_ACTION);
      checkKnownParams(query, []);
      const body = readJsonBody(request);
      assertIndexesAuthorized(request, renderTemplateIndexes(body));
      return render(body);
    },
  });
}
