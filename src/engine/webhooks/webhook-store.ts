/**
 * Task webhooks: the instance webhook given on the command line (uuid nil, never editable) and up
 * to 20 runtime webhooks managed through `/webhooks`, stored in the auth environment.
 *
 * Responses never show `Authorization` header values whole (see `redactAuthorizationHeaders`);
 * the notifier reads the unredacted values through `targets()`.
 */
import { randomUUID } from 'node:crypto';
import { SearchError } from '../errors.js';
import type { AuthEnv, StoredWebhook } from '../auth/auth-env.js';
import { normalizeUuid } from '../auth/api-key.js';
import { isPlainObject, rejectUnknownFields, requireObject, typeError } from '../auth/json-shape.js';
import { redactAuthorizationHeaders } from '../auth/redact.js';

export const INSTANCE_WEBHOOK_UUID = '00000000-0000-0000-0000-000000000000';
export const MAX_WEBHOOKS = 20;
export const MAX_WEBHOOK_HEADERS = 200;

export interface WebhookView {
  uuid: string;
  isEditable: boolean;
  url: string;
  headers: Record<string, string>;
}

export interface WebhookTarget extends StoredWebhook {
  uuid: string;
}

export interface InstanceWebhook {
  url: string;
  /** Value of the `Authorization` header sent with every call (`--task-webhook-authorization-header`). */
  authorizationHeader?: string | null;
}

const FIELDS = ['url', 'headers'] as const;
const IMMUTABLE = { uuid: 'immutable_webhook_uuid', isEditable: 'immutable_webhook_is_editable' };
// RFC 7230 token characters for header names; values: visible ASCII, spaces and tabs.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Throws `invalid_webhook_url` unless `url` is an absolute http(s) URL. */
export function checkWebhookUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (e) {
    throw new SearchError('invalid_webhook_url', `Invalid URL \`${url}\`: ${(e as Error).message.replace(/^Invalid URL:?\s*/i, '') || 'relative URL without a base'}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new SearchError('invalid_webhook_url', `Invalid URL \`${url}\`: only http and https URLs can receive webhooks.`);
}

function checkHeaders(uuid: string, headers: Record<string, string>): void {
  if (Object.keys(headers).length > MAX_WEBHOOK_HEADERS) {
    throw new SearchError(
      'invalid_webhook_headers',
      `Too many headers for the webhook \`${uuid}\`. Please limit the number of headers to ${MAX_WEBHOOK_HEADERS}. Hint: To remove an already defined header set its value to \`null\``,
    );
  }
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw new SearchError('invalid_webhook_headers', `Invalid header name \`${name}\`: invalid HTTP header name`);
    if (!HEADER_VALUE.test(value)) throw new SearchError('invalid_webhook_headers', `Invalid header value \`${name}\`: failed to parse header value`);
  }
}

/** `headers` of a request body: an object of string (or null, meaning "remove") values. */
function parseHeaderPatch(value: unknown): Record<string, string | null> {
  if (!isPlainObject(value)) throw typeError('invalid_webhook_headers', '.headers', 'an object', value);
  const out: Record<string, string | null> = {};
  for (const [name, v] of Object.entries(value)) {
    if (v !== null && typeof v !== 'string') throw typeError('invalid_webhook_headers', `.headers.${name}`, 'a string', v);
    out[name] = v;
  }
  return out;
}

function parseUrlField(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw typeError('invalid_webhook_url', '.url', 'a string', value);
  return value;
}

function missingUrl(uuid: string): SearchError {
  return new SearchError('invalid_webhook_url', `The URL for the webhook \`${uuid}\` is missing.`);
}

export class WebhookStore {
  private readonly instance: StoredWebhook | null;
  /** Told at once when a webhook is created or deleted, so that delivery starts from that moment. */
  onChange: (() => void) | null = null;

  constructor(
    private readonly auth: AuthEnv,
    instance?: InstanceWebhook | null,
  ) {
    this.instance = instance?.url
      ? { url: instance.url, headers: instance.authorizationHeader ? { Authorization: instance.authorizationHeader } : {} }
      : null;
  }

  private view(uuid: string, hook: StoredWebhook): WebhookView {
    return { uuid, isEditable: uuid !== INSTANCE_WEBHOOK_UUID, url: hook.url, headers: redactAuthorizationHeaders(hook.headers) };
  }

  private runtime(): WebhookTarget[] {
    const out: WebhookTarget[] = [];
    for (const { key, value } of this.auth.webhooks.getRange()) out.push({ uuid: key, ...value });
    return out;
  }

  /** Every webhook to call, with real header values (for delivery only, never for responses). */
  targets(): WebhookTarget[] {
    const all = this.runtime();
    return this.instance ? [{ uuid: INSTANCE_WEBHOOK_UUID, ...this.instance }, ...all] : all;
  }

  list(): { results: WebhookView[] } {
    return { results: this.targets().map((t) => this.view(t.uuid, t)) };
  }

  private parseUuid(text: string): string {
    const uuid = normalizeUuid(text);
    if (!uuid) throw new SearchError('invalid_webhook_uuid', `Invalid UUID: \`${text}\` is not a valid uuid.`);
    return uuid;
  }

  private stored(uuid: string): StoredWebhook {
    if (uuid === INSTANCE_WEBHOOK_UUID && this.instance) return this.instance;
    const hook = this.auth.webhooks.get(uuid);
    if (!hook) throw new SearchError('webhook_not_found', `Webhook \`${uuid}\` not found.`);
    return hook;
  }

  get(uuidText: string): WebhookView {
    const uuid = this.parseUuid(uuidText);
    return this.view(uuid, this.stored(uuid));
  }

  create(body: unknown): WebhookView {
    const obj = requireObject(body);
    rejectUnknownFields(obj, FIELDS, IMMUTABLE);
    const uuid = randomUUID();
    const url = obj.url === undefined ? null : parseUrlField(obj.url);
    const patch = obj.headers === undefined || obj.headers === null ? {} : parseHeaderPatch(obj.headers);
    if (Object.keys(patch).length > MAX_WEBHOOK_HEADERS) checkHeaders(uuid, patch as Record<string, string>);
    if (this.auth.webhooks.getKeysCount() >= MAX_WEBHOOKS) {
      throw new SearchError(
        'invalid_webhooks',
        `Defining too many webhooks would crush the server. Please limit the number of webhooks to ${MAX_WEBHOOKS}. You may use a third-party proxy server to dispatch events to more than ${MAX_WEBHOOKS} endpoints.`,
      );
    }
    if (url === null) throw missingUrl(uuid);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(patch)) headers[name] = value ?? '';
    const hook = { url, headers };
    this.check(uuid, hook);
    this.auth.webhooks.putSync(uuid, hook);
    this.onChange?.();
    return this.view(uuid, hook);
  }

  /**
   * PATCH semantics: `url` replaces (null is an error: a webhook needs one); `headers: null`
   * removes every header; inside `headers`, a string sets one and `null` removes one.
   */
  update(uuidText: string, body: unknown): WebhookView {
    const uuid = this.parseUuid(uuidText);
    const obj = requireObject(body);
    rejectUnknownFields(obj, FIELDS, IMMUTABLE);
    if (uuid === INSTANCE_WEBHOOK_UUID) throw immutable(uuid);
    const old = this.stored(uuid);
    let url = old.url;
    if (obj.url !== undefined) {
      const next = parseUrlField(obj.url);
      if (next === null) throw missingUrl(uuid);
      url = next;
    }
    let headers = { ...old.headers };
    if (obj.headers === null) headers = {};
    else if (obj.headers !== undefined) {
      for (const [name, value] of Object.entries(parseHeaderPatch(obj.headers))) {
        if (value === null) delete headers[name];
        else headers[name] = value;
      }
    }
    const hook = { url, headers };
    this.check(uuid, hook);
    this.auth.webhooks.putSync(uuid, hook);
    return this.view(uuid, hook);
  }

  delete(uuidText: string): void {
    const uuid = this.parseUuid(uuidText);
    if (uuid === INSTANCE_WEBHOOK_UUID) throw immutable(uuid);
    if (!this.auth.webhooks.removeSync(uuid)) throw new SearchError('webhook_not_found', `Webhook \`${uuid}\` not found.`);
    this.onChange?.();
  }

  private check(uuid: string, hook: StoredWebhook): void {
    if (hook.url === '') throw missingUrl(uuid);
    checkHeaders(uuid, hook.headers);
    checkWebhookUrl(hook.url);
  }
}

function immutable(uuid: string): SearchError {
  return new SearchError(
    'immutable_webhook',
    `Webhook \`${uuid}\` is immutable. The webhook defined from the command line cannot be modified using the API.`,
  );
}
