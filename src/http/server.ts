/**
 * The HTTP server: a fastify instance whose routes mirror the reference's URL tree and only adapt
 * the engine (transport parsing in, engine results and errors out). Every request body is
 * buffered as raw bytes, whatever its content type, and each route decides how to read it: JSON
 * routes parse it strictly, document routes hand the bytes to the engine with their format.
 */
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loggableUrl } from '../engine/auth/redact.js';
import { nowMs } from '../engine/logs/event.js';
import { log, logEnabled, newSpanId } from '../engine/logs/logger.js';
import type { HttpEngine } from './engine-port.js';
import { decodeBody } from './body-encoding.js';
import { answerClientError } from './client-errors.js';
import { installCors } from './cors.js';
import { respondIfMethodNotAllowed, trackKnownPaths } from './method-not-allowed.js';
import { describeServerError, notFound, sendError, toResponseError } from './error-mapping.js';
import type { SearchError } from '../engine/errors.js';
import { installRequestLimits, type RequestLimits } from './request-limits.js';
import { parseQueryString } from './query-params.js';
import { routeAccess } from './route.js';
import { ROUTE_MODULES } from './routes/index.js';
import type { RouteModule } from './routes/index.js';

export const DEFAULT_PAYLOAD_SIZE_LIMIT = 100_000_000;

/**
 * Authorizes a request before its body is read. Throw a SearchError (`missing_authorization_header`,
 * `invalid_api_key`…) to refuse. `access.action` is null for public routes.
 */
export type AccessGuard = (
  request: FastifyRequest,
  access: { action: string | null; indexUid: string | null },
) => void | Promise<void>;

export interface ServerOptions {
  /** Largest accepted request body, in bytes (default 100 MB). */
  payloadSizeLimit?: number;
  /** pino log level (`info`, `debug`…); `off` or undefined disables request logging. */
  logLevel?: string;
  guard?: AccessGuard;
  /** Further route modules (keys, webhooks, dumps…) registered after the built-in ones. */
  routes?: RouteModule[];
  /** Limits on one request beyond its size (see request-limits.ts); defaults for the rest. */
  limits?: Partial<RequestLimits>;
  /**
   * Where a 5xx answer is reported, with its request id and stack (default: the `search::http`
   * target at error level, which stderr shows unless told `off`). A 5xx is a bug or a fault of the
   * machine: it is never silent by default.
   */
  logServerError?: (message: string) => void;
}

function stderrLine(message: string): void {
  log('search::http', 'error', message);
}

/**
 * Every answered request as the reference logs it: an `HTTP request` span closing at info, with
 * the route pattern, the path with any key hidden, and the status. Checked before anything
 * is built, so that a request nobody listens for costs one comparison.
 */
function logRequests(app: FastifyInstance): void {
  // a callback hook, not an async one: a request nobody logs costs no promise
  app.addHook('onResponse', (request, reply, done) => {
    if (!logEnabled('search::http', 'info')) return done();
    const durationMs = reply.elapsedTime;
    const url = loggableUrl(request.url);
    const query = url.indexOf('?');
    log(
      'search::http',
      'info',
      'close',
      {
        method: request.method,
        host: request.headers.host ?? '',
        route: request.routeOptions.url ?? '',
        // the path as requested, with a key in `/keys/:uidOrKey` hidden (auth/redact.ts)
        path: url.slice(0, query < 0 ? undefined : query),
        query_parameters: query < 0 ? '' : url.slice(query + 1),
        user_agent: request.headers['user-agent'] ?? '',
        status_code: reply.statusCode,
      },
      { name: 'HTTP request', id: newSpanId(), start: nowMs() - durationMs, durationMs },
    );
    done();
  });
}

export interface ListenAddress {
  host: string;
  port: number;
  /** `http://host:port`, ready to hand to a client. */
  url: string;
}

export interface SearchServer {
  readonly app: FastifyInstance;
  /** Start listening on `host:port` (`127.0.0.1:0` picks a free port). */
  listen(addr: string): Promise<ListenAddress>;
  /** Stop accepting connections and wait for in-flight requests. The engine stays open. */
  close(): Promise<void>;
  readonly address: ListenAddress | null;
}

/** `127.0.0.1:7700`, `[::1]:7700`, `localhost:0` → host and port. */
export function parseHttpAddr(addr: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(addr.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new Error(`Invalid HTTP address \`${addr}\`: expected host:port, e.g. 127.0.0.1:7700.`);
  return { host: (match[1] ?? match[2])!, port };
}

export function createServer(engine: HttpEngine, options: ServerOptions = {}): SearchServer {
  const payloadLimit = options.payloadSizeLimit ?? DEFAULT_PAYLOAD_SIZE_LIMIT;
  const logLevel = options.logLevel && options.logLevel !== 'off' ? options.logLevel.toLowerCase() : undefined;
  const app = Fastify({
    logger: logLevel
      ? {
          level: logLevel,
          // Key values can appear in `/keys/:uidOrKey`; headers (Authorization) are never logged.
          serializers: { req: (req) => ({ method: req.method, url: loggableUrl(req.url), remoteAddress: req.ip }) },
        }
      : false,
    bodyLimit: payloadLimit,
    clientErrorHandler: answerClientError,
    routerOptions: {
      ignoreTrailingSlash: true,
      // Index uids go up to 400 bytes and document ids to 511, percent-encoded three times longer.
      maxParamLength: 4096,
      querystringParser: parseQueryString,
    },
    frameworkErrors: (error, request, reply) => {
      respond(toResponseError(error, payloadLimit), request, reply);
    },
  });
  const logServerError = options.logServerError ?? stderrLine;
  const respond = (error: SearchError, request: FastifyRequest, reply: FastifyReply) => {
    if (error.status >= 500) logServerError(describeServerError(error, request, loggableUrl(request.url)));
    return sendError(error, request, reply);
  };
  installRequestLimits(app, options.limits);
  logRequests(app);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, decodeBody(request.headers['content-encoding'], body as Buffer, payloadLimit));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.setErrorHandler((error, request, reply) => respond(toResponseError(error, payloadLimit), request, reply));
  const knownPaths = trackKnownPaths(app);
  app.setNotFoundHandler((request, reply) => {
    if (!respondIfMethodNotAllowed(knownPaths, request, reply)) respond(notFound(), request, reply);
  });

  // Before the guard, so that refused requests carry the CORS header too.
  installCors(app);

  const guard = options.guard;
  if (guard) {
    app.addHook('onRequest', async (request) => {
      const access = routeAccess(request);
      if (access) await guard(request, access);
    });
  }

  for (const register of [...ROUTE_MODULES, ...(options.routes ?? [])]) register(app, engine);

  let address: ListenAddress | null = null;
  return {
    app,
    get address() {
      return address;
    },
    async listen(addr: string) {
      const { host, port } = parseHttpAddr(addr);
      await app.listen({ host, port });
      const bound = app.server.address();
      const actualPort = typeof bound === 'object' && bound ? bound.port : port;
      const urlHost = host.includes(':') ? `[${host}]` : host;
      address = { host, port: actualPort, url: `http://${urlHost}:${actualPort}` };
      return address;
    },
    async close() {
      await app.close();
    },
  };
}
