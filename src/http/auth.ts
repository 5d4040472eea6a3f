/**
 * The access guard and what routes need to honour a request's authorization.
 *
 * `createAuthGuard` plugs into the server's `onRequest` hook (`ServerOptions.guard`): it checks the
 * `Authorization` header against the action and index the matched route declares, before the body
 * is read, and remembers the resulting `Authorization` for the handler. Handlers that list or
 * search use the helpers below, so that a scoped key or a tenant token never sees other indexes
 * and every tenant-token search carries the token's filter.
 */
import type { EventEmitter } from 'node:events';
import type { FastifyRequest } from 'fastify';
import { isAction } from '../engine/auth/actions.js';
import { Authorization } from '../engine/auth/authorization.js';
import type { Filter } from '../engine/auth/tenant-token.js';
import { SearchError } from '../engine/errors.js';
import type { Batch, CursorPage, GlobalStats, IndexInfo, Page, Task, TaskListQuery } from '../engine/types.js';
import type { TaskScope } from '../engine/tasks/store.js';
import { AuthEnv } from '../engine/auth/auth-env.js';
import { AuthController } from '../engine/auth/auth-controller.js';
import { checkMasterKey } from '../engine/auth/master-key.js';
import { AddressPolicy, setOutboundPolicy } from '../engine/net/address-policy.js';
import { notifyOnBatchFinished, type DeliveryLimits, type WebhookOutbox } from '../engine/webhooks/index.js';
import { WebhookNotifier } from '../engine/webhooks/notifier.js';
import { checkWebhookUrl, WebhookStore } from '../engine/webhooks/webhook-store.js';
import type { RouteModule } from './routes/index.js';
import { keyRoutes } from './routes/keys.js';
import { webhookRoutes } from './routes/webhooks.js';
import type { AccessGuard } from './server.js';

const granted = new WeakMap<FastifyRequest, Authorization>();

export function createAuthGuard(auth: AuthController): AccessGuard {
  return async (request, access) => {
    if (access.action === null) return; // public route (`/health`)
    if (!isAction(access.action)) throw new SearchError('internal', `Route declares an unknown action \`${access.action}\`.`);
    const authorization = await auth.authenticate({
      header: request.headers.authorization,
      action: access.action,
      indexUid: access.indexUid,
    });
    granted.set(request, authorization);
  };
}

/** The request's authorization; everything when no guard ran (an unprotected server). */
export function requestAuthorization(request: FastifyRequest): Authorization {
  return granted.get(request) ?? Authorization.full();
}

// --- search ---------------------------------------------------------------------------------------

/** A search body (POST body or GET query turned into one) with the tenant filter AND-ed in. */
export function restrictSearchBody(request: FastifyRequest, indexUid: string, body: unknown): unknown {
  const authorization = requestAuthorization(request);
  if (!authorization.isTenantToken || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const current = (body as Record<string, unknown>).filter as Filter | null | undefined;
  const filter = authorization.applySearchRules(indexUid, current);
  return filter === current ? body : { ...body, filter };
}

/**
 * A multi-search body with every query checked against the authorization (`invalid_api_key` for
 * an index the request may not search) and restricted by the tenant filter of its index.
 */
export function restrictMultiSearchBody(request: FastifyRequest, body: unknown): unknown {
  const authorization = requestAuthorization(request);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  assertIndexesAuthorized(request, federationIndexUids((body as Record<string, unknown>).federation));
  const queries = (body as Record<string, unknown>).queries;
  if (!Array.isArray(queries)) return body;
  return {
    ...body,
    queries: queries.map((q) => {
      if (typeof q !== 'object' || q === null || Array.isArray(q)) return q;
      const indexUid = (q as Record<string, unknown>).indexUid;
      if (typeof indexUid !== 'string') return q;
      if (!authorization.canAccessIndex(indexUid)) throw new SearchError('invalid_api_key', 'The provided API key is invalid.');
      return restrictSearchBody(request, indexUid, q);
    }),
  };
}

/** Indexes a federation names besides its queries' (`facetsByIndex`), read before any query runs. */
function federationIndexUids(federation: unknown): string[] {
  if (typeof federation !== 'object' || federation === null || Array.isArray(federation)) return [];
  const facetsByIndex = (federation as Record<string, unknown>).facetsByIndex;
  if (typeof facetsByIndex !== 'object' || facetsByIndex === null || Array.isArray(facetsByIndex)) return [];
  return Object.keys(facetsByIndex);
}

// --- lists ----------------------------------------------------------------------------------------

/** `GET /indexes` restricted to the indexes the request may see, paginated after filtering. */
export function visibleIndexes(
  request: FastifyRequest,
  list: (q: { offset?: number; limit?: number }) => Page<IndexInfo>,
  q: { offset?: number; limit?: number },
): Page<IndexInfo> {
  const authorization = requestAuthorization(request);
  if (authorization.allIndexesAuthorized()) return list(q);
  const all = list({ offset: 0, limit: Number.MAX_SAFE_INTEGER }).results;
  const visible = authorization.filterIndexes(all, (i) => i.uid);
  const offset = q.offset ?? 0;
  const limit = q.limit ?? 20;
  return { results: visible.slice(offset, offset + limit), offset, limit, total: visible.length };
}

/** `GET /stats` without the indexes the request may not see. */
export function visibleStats(request: FastifyRequest, stats: GlobalStats): GlobalStats {
  const authorization = requestAuthorization(request);
  if (authorization.allIndexesAuthorized()) return stats;
  const indexes: GlobalStats['indexes'] = {};
  for (const [uid, s] of Object.entries(stats.indexes)) if (authorization.canAccessIndex(uid)) indexes[uid] = s;
  return { ...stats, indexes };
}

/** `GET /tasks` restricted to the tasks the request may see. */
export function visibleTasks(
  request: FastifyRequest,
  getTasks: (q: TaskListQuery, scope?: TaskScope) => CursorPage<Task>,
  q: TaskListQuery,
): CursorPage<Task> {
  const authorization = requestAuthorization(request);
  // a restricted request narrows the engine's index lookup, so `total`, `from` and `next` stay exact
  return authorization.allIndexesAuthorized() ? getTasks(q) : getTasks(q, authorization);
}

/** A batch is visible when every index it touched is (a batch on no index needs all of them). */
function canSeeBatch(authorization: Authorization, batch: Batch): boolean {
  const uids = Object.keys(batch.stats.indexUids);
  if (uids.length === 0) return authorization.allIndexesAuthorized();
  return uids.every((uid) => authorization.canAccessIndex(uid));
}

/** `GET /batches` restricted to the batches the request may see. */
export function visibleBatches(
  request: FastifyRequest,
  getBatches: (q: TaskListQuery, scope?: TaskScope) => CursorPage<Batch>,
  q: TaskListQuery,
): CursorPage<Batch> {
  const authorization = requestAuthorization(request);
  return authorization.allIndexesAuthorized() ? getBatches(q) : getBatches(q, authorization);
}

/** One batch, as `batch_not_found` when the request may not see it. */
export function visibleBatch(request: FastifyRequest, batch: Batch): Batch {
  if (!canSeeBatch(requestAuthorization(request), batch)) throw new SearchError('batch_not_found', `Batch \`${batch.uid}\` not found.`);
  return batch;
}

/** One task, as `task_not_found` when the request may not see it (its existence is not revealed). */
export function visibleTask(request: FastifyRequest, task: Task): Task {
  if (!requestAuthorization(request).canSeeTask(task)) {
    throw new SearchError('task_not_found', `Task \`${task.uid}\` not found.`);
  }
  return task;
}

// --- assembly for `search serve` -------------------------------------------------------------------

/** A security option that prevents the server from starting; its message is for the operator. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

export interface SecurityOptions {
  dbPath: string;
  env: 'development' | 'production';
  masterKey?: string | null;
  taskWebhookUrl?: string | null;
  taskWebhookAuthorizationHeader?: string | null;
  /** `--experimental-allowed-ip-networks`: `any` or a CIDR list. */
  allowedIpNetworks?: string | null;
  /** The scheduler whose `batchFinished` events are sent to the webhooks. */
  scheduler: EventEmitter;
  /** Where finished batches wait for the webhooks (the engine's `webhookOutbox`). */
  outbox: WebhookOutbox;
  /** Webhook retry and retention limits (defaults in notifier.ts). */
  webhookDelivery?: DeliveryLimits;
  log: (level: 'error' | 'warn' | 'info' | 'debug', message: string) => void;
}

export interface Security {
  guard: AccessGuard;
  routes: RouteModule[];
  auth: AuthController;
  webhooks: WebhookStore;
  notifier: WebhookNotifier;
  /** Startup warnings (development without a master key...), never containing a secret. */
  warnings: string[];
  close(): Promise<void>;
}

/**
 * Everything `search serve` needs for keys and webhooks: checks the master key for the
 * environment and the other options (throws `StartupError`, e.g. in production without a valid
 * master key), sets the outbound
 * address policy, opens the auth environment, and connects the webhook notifier to the scheduler.
 */
export function createSecurity(o: SecurityOptions): Security {
  const masterKey = o.masterKey === undefined || o.masterKey === '' ? null : o.masterKey;
  let warnings: string[];
  try {
    warnings = checkMasterKey({ env: o.env, masterKey });
    setOutboundPolicy(AddressPolicy.parse(o.allowedIpNetworks ?? null));
    if (o.taskWebhookUrl) checkWebhookUrl(o.taskWebhookUrl);
  } catch (error) {
    if (error instanceof SearchError) throw new StartupError(`Invalid \`--task-webhook-url\`: ${error.message}`);
    throw new StartupError((error as Error).message);
  }
  const env = AuthEnv.open(o.dbPath);
  const auth = new AuthController(env, masterKey);
  const webhooks = new WebhookStore(
    env,
    o.taskWebhookUrl ? { url: o.taskWebhookUrl, authorizationHeader: o.taskWebhookAuthorizationHeader ?? null } : null,
  );
  const notifier = new WebhookNotifier({ ...o.webhookDelivery, store: webhooks, outbox: o.outbox, log: (level, message) => o.log(level, message) });
  webhooks.onChange = () => notifier.kick();
  const disconnect = notifyOnBatchFinished(o.scheduler, notifier);
  return {
    guard: createAuthGuard(auth),
    routes: [keyRoutes(auth), webhookRoutes(webhooks)],
    auth,
    webhooks,
    notifier,
    warnings,
    async close() {
      disconnect();
      await notifier.close();
      await auth.close();
    },
  };
}

// --- writes that name indexes in their body or query ---------------------------------------------------

/** Refuse (`invalid_api_key`) unless the request may touch every index in `uids`. */
export function assertIndexesAuthorized(request: FastifyRequest, uids: readonly string[]): void {
  const authorization = requestAuthorization(request);
  for (const uid of uids) if (!authorization.canAccessIndex(uid)) throw new SearchError('invalid_api_key', 'The provided API key is invalid.');
}

/** Refuse (`invalid_api_key`) unless the request may create `uid`. */
export function assertCanCreateIndex(request: FastifyRequest, uid: string): void {
  if (!requestAuthorization(request).canCreateIndex(uid)) throw new SearchError('invalid_api_key', 'The provided API key is invalid.');
}

/**
 * Task cancelation and deletion by filter: a request scoped to some indexes must name only those
 * (`indexUids`), so that it can never act on tasks of indexes it cannot see.
 */
export function assertTaskFilterAuthorized(request: FastifyRequest, filter: { indexUids?: string[] }): void {
  const authorization = requestAuthorization(request);
  if (authorization.allIndexesAuthorized()) return;
  if (!filter.indexUids || filter.indexUids.length === 0) throw new SearchError('invalid_api_key', 'The provided API key is invalid.');
  assertIndexesAuthorized(request, filter.indexUids);
}

/**
 * Whether a write by this request may create its missing index (`indexes.create` on that uid).
 * The routes hand it to the engine: as in the reference, a write without it is still accepted
 * (202) and its task fails with `index_not_found` when the index does not exist.
 */
export function mayCreateIndex(request: FastifyRequest, uid: string): boolean {
  return requestAuthorization(request).canCreateIndex(uid);
}
