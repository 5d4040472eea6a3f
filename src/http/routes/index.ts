/** The route modules, one per subtree of the URL tree. Add a module here to serve a new subtree. */
import type { FastifyInstance } from 'fastify';
import type { HttpEngine } from '../engine-port.js';
import { batchRoutes } from './batches.js';
import { documentRoutes } from './documents.js';
import { experimentalFeatureRoutes } from './experimental-features.js';
import { exportRoutes } from './export.js';
import { fieldRoutes } from './fields.js';
import { healthRoutes } from './health.js';
import { indexRoutes } from './indexes.js';
import { logsRoutes } from './logs.js';
import { renderTemplateRoutes } from './render-template.js';
import { searchRoutes } from './search.js';
import { searchRuleRoutes } from './search-rules.js';
import { settingsRoutes } from './settings.js';
import { statsRoutes } from './stats.js';
import { taskRoutes } from './tasks.js';

export type RouteModule = (app: FastifyInstance, engine: HttpEngine) => void;

export const ROUTE_MODULES: readonly RouteModule[] = [
  healthRoutes,
  indexRoutes,
  documentRoutes,
  settingsRoutes,
  searchRoutes,
  renderTemplateRoutes,
  statsRoutes,
  taskRoutes,
  batchRoutes,
  experimentalFeatureRoutes,
  fieldRoutes,
  searchRuleRoutes,
  exportRoutes,
  logsRoutes,
];
