/**
 * Limits of the server on what one request may ask for, beyond the payload size: the operator
 * sets them (`search serve --max-multi-search-queries`), routes read them from the fastify
 * instance. Limits that are the same everywhere (JSON nesting, sort criteria, list entries,
 * highlight tags) live with the parsers that enforce them; README, "Limits", lists them all.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SearchError } from '../engine/errors.js';

export interface RequestLimits {
  /** Queries in one `POST /multi-search` (each is a full search held in memory until the answer). */
  maxMultiSearchQueries: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimits = { maxMultiSearchQueries: 100 };

declare module 'fastify' {
  interface FastifyInstance {
    requestLimits: RequestLimits;
  }
}

export function installRequestLimits(app: FastifyInstance, limits: Partial<RequestLimits> = {}): void {
  app.decorate('requestLimits', { ...DEFAULT_REQUEST_LIMITS, ...limits });
}

/** Refuse (`bad_request`) a multi-search body with more queries than the server allows. */
export function checkMultiSearchSize(request: FastifyRequest, body: unknown): void {
  const queries = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).queries : undefined;
  if (!Array.isArray(queries)) return; // the engine reports the shape
  const max = request.server.requestLimits.maxMultiSearchQueries;
  if (queries.length > max) {
    throw new SearchError(
      'bad_request',
      `Invalid value at \`.queries\`: expected at most ${max} queries, but found ${queries.length}. ` +
        'The server sets this limit (`--max-multi-search-queries`).',
    );
  }
}
