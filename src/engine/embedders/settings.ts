/**
 * The `embedders` setting: validation of what users send, merging a patch into the current
 * configuration, defaults, and redaction of secrets when settings are read.
 *
 * `validateEmbedders(value)` checks a PATCH body (types, known fields, fields allowed for the
 * source given). `mergeEmbedders(before, patch)` applies it (null removes an embedder or resets a
 * field; a patch without `source`, or with the same one, updates fields in place) and checks the
 * result as a whole (mandatory fields, binary quantization cannot be undone). Every failure is an
 * `invalid_settings_embedders` error whose message points at the offending path.
 */
import { SearchError } from '../errors.js';
import type { EmbedderSettings } from '../settings/types.js';
import {
  EMBEDDER_FIELDS,
  allowedFields,
  mandatoryFields,
  NESTABLE_SOURCES,
  rendersTemplate,
  sourcesAllowing,
  type EmbedderField,
  type Nesting,
} from './fields.js';
import { DEFAULT_DOCUMENT_TEMPLATE, DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES, templateError } from './template.js';
import { EMBEDDER_SOURCES, type EmbedderSource } from './types.js';
import { OPENAI_MODELS, DEFAULT_OPENAI_MODEL } from './openAi.js';
import { DEFAULT_LOCAL_MODEL } from './huggingFace.js';
import { DISTANCES } from '../vector/distance.js';
import { hideSecret } from '../auth/redact.js';

/** A validated patch: `null` removes the embedder, fields set to `null` go back to their default. */
export type EmbeddersPatch = Record<string, Record<string, unknown> | null>;

const CODE = 'invalid_settings_embedders';
const fail = (message: string): never => {
  throw new SearchError(CODE, message);
};

/** Describe a JSON value the way validation messages do: "a string: `\"x\"`". */
export function describeValue(value: unknown): string {
  const json = JSON.stringify(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array: \`${json}\``;
  switch (typeof value) {
    case 'string':
      return `a string: \`${json}\``;
    case 'boolean':
      return `a boolean: \`${json}\``;
    case 'number':
      if (!Number.isInteger(value)) return `a float: \`${json}\``;
      return value < 0 ? `a negative integer: \`${json}\`` : `a positive integer: \`${json}\``;
    case 'object':
      return `an object: \`${json}\``;
    default:
      return `\`${String(value)}\``;
  }
}

const typeError = (path: string, expected: string, value: unknown): never =>
  fail(`Invalid value type at \`${path}\`: expected ${expected}, but found ${describeValue(value)}`);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const list = (items: readonly string[]) => items.map((i) => `\`${i}\``).join(', ');

// --- PATCH validation ---------------------------------------------------------------------------

export function validateEmbedders(value: unknown): EmbeddersPatch | null {
  if (value === null) return null;
  if (!isObject(value)) return typeError('.embedders', 'an object', value);
  const out: EmbeddersPatch = {};
  for (const [name, settings] of Object.entries(value)) {
    if (settings === null) {
      out[name] = null;
      continue;
    }
    out[name] = validateOne(`.embedders.${name}`, name, settings, 'top');
  }
  if (Object.keys(out).length > 256)
    fail(`Too many embedders in the configuration. Found ${Object.keys(out).length}, but limited to 256.`);
  return out;
}

function validateOne(path: string, name: string, value: unknown, nesting: Nesting): Record<string, unknown> {
  if (!isObject(value)) return typeError(path, 'an object', value);
  const out: Record<string, unknown> = {};
  for (const [field, fieldValue] of Object.entries(value)) {
    if (!(EMBEDDER_FIELDS as readonly string[]).includes(field))
      fail(`Unknown field \`${field}\` inside \`${path}\`: expected one of ${list(EMBEDDER_FIELDS)}`);
    out[field] = fieldValue === null ? null : validateField(`${path}.${field}`, name, field as EmbedderField, fieldValue, nesting);
  }
  const source = out.source as EmbedderSource | undefined | null;
  if (nesting !== 'top' && !source)
    fail(`\`${path}\`: Missing field \`source\`.\n  - note: this field is mandatory for nested embedders`);
  if (source) checkFieldsForSource(path, source, out, nesting);
  return out;
}

function validateField(path: string, name: string, field: EmbedderField, value: unknown, nesting: Nesting): unknown {
  switch (field) {
    case 'source': {
      if (typeof value !== 'string') return typeError(path, 'a string', value);
      if (!(EMBEDDER_SOURCES as readonly string[]).includes(value))
        fail(`Unknown value \`${value}\` at \`${path}\`: expected one of ${list(EMBEDDER_SOURCES)}`);
      if (nesting !== 'top' && !NESTABLE_SOURCES.includes(value as EmbedderSource))
        fail(`\`${path}\`: Source \`${value}\` is not available in a nested embedder`);
      return value;
    }
    case 'model':
    case 'revision':
    case 'apiKey':
      if (typeof value !== 'string') return typeError(path, 'a string', value);
      return value;
    case 'url':
      if (typeof value !== 'string') return typeError(path, 'a string', value);
      try {
        new URL(value);
      } catch {
        fail(`\`${path}\`: could not parse \`${value}\`: relative URL without a base`);
      }
      return value;
    case 'pooling':
      if (value !== 'useModel' && value !== 'forceMean' && value !== 'forceCls')
        fail(`Unknown value \`${String(value)}\` at \`${path}\`: expected one of \`useModel\`, \`forceMean\`, \`forceCls\``);
      return value;
    case 'dimensions':
    case 'documentTemplateMaxBytes':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
        return typeError(path, 'a positive integer', value);
      if (value === 0) fail(`\`${path}\`: \`${field}\` cannot be zero`);
      return value;
    case 'binaryQuantized':
      if (typeof value !== 'boolean') return typeError(path, 'a boolean', value);
      return value;
    case 'distance':
      // our extension to the reference's settings (see docs/vectors.md): the metric the graph is built and searched with
      if (typeof value !== 'string') return typeError(path, 'a string', value);
      if (!(DISTANCES as readonly string[]).includes(value)) fail(`Unknown value \`${value}\` at \`${path}\`: expected one of ${list(DISTANCES)}`);
      return value;
    case 'documentTemplate': {
      if (typeof value !== 'string') return typeError(path, 'a string', value);
      const error = templateError(value);
      if (error) fail(`\`${path}\`: Invalid template: ${error}.`);
      return value;
    }
    case 'headers':
      if (!isObject(value)) return typeError(path, 'an object', value);
      for (const [header, headerValue] of Object.entries(value))
        if (typeof headerValue !== 'string') typeError(`${path}.${header}`, 'a string', headerValue);
      return value;
    case 'request':
    case 'response':
      return value; // any JSON; its placeholders are checked once the source is known
    case 'distribution': {
      if (!isObject(value)) return typeError(path, 'an object', value);
      for (const key of Object.keys(value))
        if (key !== 'mean' && key !== 'sigma') fail(`Unknown field \`${key}\` inside \`${path}\`: expected one of \`mean\`, \`sigma\``);
      for (const key of ['mean', 'sigma'] as const) {
        const v = value[key];
        if (v === undefined) fail(`Missing field \`${key}\` inside \`${path}\``);
        if (typeof v !== 'number' || v < 0 || v > 1) typeError(`${path}.${key}`, 'a number between 0 and 1', v);
      }
      return { mean: value.mean, sigma: value.sigma };
    }
    case 'searchEmbedder':
    case 'indexingEmbedder':
      return validateOne(path, name, value, field);
  }
}

function checkFieldsForSource(path: string, source: EmbedderSource, settings: Record<string, unknown>, nesting: Nesting): void {
  const allowed = allowedFields(source, nesting);
  const where = nesting === 'top' ? '' : ` when nested in \`${nesting}\``;
  for (const [field, value] of Object.entries(settings)) {
    if (value === null || allowed.includes(field as EmbedderField)) continue;
    const others = sourcesAllowing(field as EmbedderField, nesting);
    let message = `\`${path}\`: Field \`${field}\` unavailable for source \`${source}\`${where}.`;
    if (others.length) message += `\n  - note: \`${field}\` is available for sources: ${list(others)}`;
    message += `\n  - note: available fields for source \`${source}\`${where}: ${list(allowed)}`;
    fail(message);
  }
  if (source === 'openAi' && typeof settings.model === 'string' && !(settings.model in OPENAI_MODELS))
    fail(`\`${path}.model\`: Invalid model \`${settings.model}\` for OpenAI. Supported models: ${JSON.stringify(Object.keys(OPENAI_MODELS))}`);
  if (source === 'rest') {
    if (settings.request !== undefined && settings.request !== null && countPlaceholder(settings.request, '{{text}}') !== 1)
      fail(`\`${path}.request\`: template must contain exactly one \`"{{text}}"\` placeholder`);
    if (settings.response !== undefined && settings.response !== null && countPlaceholder(settings.response, '{{embedding}}') !== 1)
      fail(`\`${path}.response\`: template must contain exactly one \`"{{embedding}}"\` placeholder`);
    const batched = (t: unknown) => countPlaceholder(t, '{{..}}') > 0;
    if (settings.request != null && settings.response != null && batched(settings.request) !== batched(settings.response))
      fail(
        `\`${path}\`: \`request\` and \`response\` must both repeat with \`"{{..}}"\` (one embedding per text of a batch) or both not repeat (one text per request)`,
      );
  }
}

function countPlaceholder(value: unknown, placeholder: string): number {
  if (value === placeholder) return 1;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countPlaceholder(v, placeholder), 0);
  if (isObject(value)) return Object.values(value).reduce((n: number, v) => n + countPlaceholder(v, placeholder), 0);
  return 0;
}

// --- merging ------------------------------------------------------------------------------------

/** Apply a validated patch to the current embedders; returns the new complete configuration. */
export function mergeEmbedders(
  before: Record<string, EmbedderSettings>,
  patch: EmbeddersPatch | null,
): Record<string, EmbedderSettings> {
  if (patch === null) return {};
  const out: Record<string, EmbedderSettings> = { ...before };
  for (const [name, update] of Object.entries(patch)) {
    if (update === null) {
      delete out[name];
      continue;
    }
    const previous = before[name];
    const merged = mergeOne(`.embedders.${name}`, previous, update, 'top');
    if (previous?.binaryQuantized === true && merged.binaryQuantized !== true && previous.source === merged.source)
      fail(
        `\`.embedders.${name}.binaryQuantized\`: Cannot disable the binary quantization.\n - Note: Binary quantization is a lossy operation that cannot be reverted.\n - Hint: Add a new embedder that is non-quantized and regenerate the vectors.`,
      );
    out[name] = merged;
  }
  return out;
}

/** Validate-and-merge in one step, for callers holding the raw PATCH value. */
export function updateEmbedders(before: Record<string, EmbedderSettings>, value: unknown): Record<string, EmbedderSettings> {
  return mergeEmbedders(before, validateEmbedders(value));
}

function mergeOne(
  path: string,
  previous: Record<string, unknown> | undefined,
  update: Record<string, unknown>,
  nesting: Nesting,
): EmbedderSettings {
  const sameSource = previous && (update.source === undefined || update.source === previous.source);
  const base: Record<string, unknown> = sameSource ? { ...previous } : {};
  for (const [field, value] of Object.entries(update)) {
    if (value === null) delete base[field];
    else if (field === 'searchEmbedder' || field === 'indexingEmbedder') {
      const nestedBefore = sameSource ? (previous?.[field] as Record<string, unknown> | undefined) : undefined;
      base[field] = mergeOne(`${path}.${field}`, nestedBefore, value as Record<string, unknown>, field);
    }
    else base[field] = value;
  }
  const source = base.source as EmbedderSource | undefined;
  if (!source)
    fail(`\`${path}\`: Missing field \`source\`.\n  - note: this field is mandatory for new embedders`);
  checkFieldsForSource(path, source!, base, nesting);
  for (const field of mandatoryFields(source!))
    if (base[field] === undefined)
      fail(`\`${path}\`: Missing field \`${field}\` (note: this field is mandatory for source \`${source}\`)`);
  if (source === 'openAi') checkOpenAiDimensions(path, base);
  return withDefaults(base as EmbedderSettings, nesting);
}

function checkOpenAiDimensions(path: string, settings: Record<string, unknown>): void {
  const model = (settings.model as string | undefined) ?? DEFAULT_OPENAI_MODEL;
  const spec = OPENAI_MODELS[model]!;
  const dimensions = settings.dimensions as number | undefined;
  if (dimensions === undefined || dimensions === spec.dimensions) return;
  if (!spec.overridable)
    fail(`\`${path}.dimensions\`: Model \`${model}\` does not support overriding its native dimensions of ${spec.dimensions}. Found ${dimensions}`);
  if (dimensions > spec.dimensions)
    fail(`\`${path}.dimensions\`: Model \`${model}\` does not support overriding its dimensions to a value higher than ${spec.dimensions}. Found ${dimensions}`);
}

/** Fill the defaults the reference shows when settings are read. */
function withDefaults(settings: EmbedderSettings, nesting: Nesting): EmbedderSettings {
  const out: EmbedderSettings = { ...settings };
  const source = out.source as EmbedderSource;
  if (source === 'openAi' && out.model === undefined) out.model = DEFAULT_OPENAI_MODEL;
  // The reference always names the local model and its pooling, and shows a REST embedder's headers.
  if (source === 'huggingFace') {
    if (out.model === undefined) out.model = DEFAULT_LOCAL_MODEL;
    if (out.pooling === undefined) out.pooling = 'useModel';
  }
  if (source === 'rest' && out.headers === undefined) out.headers = {};
  if (rendersTemplate(source) && nesting !== 'searchEmbedder') {
    if (out.documentTemplate === undefined) out.documentTemplate = DEFAULT_DOCUMENT_TEMPLATE;
    if (out.documentTemplateMaxBytes === undefined) out.documentTemplateMaxBytes = DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES;
  }
  return out;
}

// --- reading ------------------------------------------------------------------------------------

/** Hide secrets: API keys keep their first characters only, like the reference. */
export function redactEmbedders(embedders: Record<string, EmbedderSettings>): Record<string, EmbedderSettings> {
  const out: Record<string, EmbedderSettings> = {};
  for (const [name, settings] of Object.entries(embedders)) out[name] = redactOne(settings) as EmbedderSettings;
  return out;
}

function redactOne(settings: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...settings };
  if (typeof out.apiKey === 'string') out.apiKey = redactSecret(out.apiKey);
  for (const nested of ['searchEmbedder', 'indexingEmbedder'])
    if (isObject(out[nested])) out[nested] = redactOne(out[nested] as Record<string, unknown>);
  return out;
}

/** An embedder `apiKey` as the reference shows it back: the same redaction as webhook secrets. */
export function redactSecret(secret: string): string {
  return hideSecret(secret, 0);
}

/** A settings patch as shown in task details: embedder API keys redacted. */
export function redactPatch<T extends { embedders?: unknown }>(patch: T): T {
  const embedders = patch.embedders;
  if (!isObject(embedders)) return { ...patch };
  const out: Record<string, unknown> = {};
  for (const [name, settings] of Object.entries(embedders)) out[name] = isObject(settings) ? redactOne(settings) : settings;
  return { ...patch, embedders: out };
}
