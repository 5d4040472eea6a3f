/** The package's in-process API: `import { Engine } from 'search'`. */
export { Engine, type EngineOptions, type LogLevel } from './engine/engine.js';
export { SearchError, type ErrorBody } from './engine/errors.js';
export type * from './engine/types.js';
export type { Settings } from './engine/settings/types.js';
