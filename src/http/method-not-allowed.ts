/**
 * 405 for a known path asked with a method it does not serve (`DELETE /health`, `PATCH
 * /indexes/movies/search`), as the reference answers: empty body, `Allow` listing the methods the
 * path does serve. Paths no route serves stay 404 `not_found`.
 *
 * fastify's router only tells "no route for this method and path", so the server keeps its own
 * table of route patterns, filled by the `onRoute` hook as the routes register.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

interface KnownPath {
  pattern: RegExp;
  methods: Set<string>;
}

/** `/indexes/:indexUid/search` → a regexp matching one concrete path (no query, no trailing slash). */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) return '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}

export class KnownPaths {
  private readonly byUrl = new Map<string, KnownPath>();

  add(url: string, methods: string | string[]): void {
    const list = (Array.isArray(methods) ? methods : [methods]).map((m) => m.toUpperCase());
    // The CORS preflight route answers OPTIONS on every path: it says nothing of which paths exist.
    if (list.every((m) => m === 'OPTIONS')) return;
    const path = url.length > 1 ? url.replace(/\/+$/, '') : url;
    let known = this.byUrl.get(path);
    if (!known) {
      known = { pattern: patternOf(path), methods: new Set() };
      this.byUrl.set(path, known);
    }
    for (const method of list) if (method !== 'OPTIONS') known.methods.add(method);
  }

  /** The methods served on this concrete path (query string ignored); empty when no route serves it. */
  allowedMethods(rawUrl: string): string[] {
    const queryAt = rawUrl.indexOf('?');
    let path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
    if (path.length > 1) path = path.replace(/\/+$/, '');
    const methods = new Set<string>();
    for (const known of this.byUrl.values()) if (known.pattern.test(path)) for (const m of known.methods) methods.add(m);
    return [...methods].sort();
  }
}

/**
 * Record every route registered from now on. Call before registering routes; the returned table
 * answers `respondIfMethodNotAllowed` in the not-found handler.
 */
export function trackKnownPaths(app: FastifyInstance): KnownPaths {
  const known = new KnownPaths();
  app.addHook('onRoute', (route) => known.add(route.url ?? route.path, route.method as string | string[]));
  return known;
}

/** Answer 405 when the path is known under other methods; false (nothing sent) otherwise. */
export function respondIfMethodNotAllowed(known: KnownPaths, request: FastifyRequest, reply: FastifyReply): boolean {
  const methods = known.allowedMethods(request.url);
  if (methods.length === 0) return false;
  reply.code(405).header('allow', methods.join(', ')).send();
  return true;
}
