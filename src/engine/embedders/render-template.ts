/**
 * `POST /render-template`: preview what an embedder sees. The body names a template (an
 * embedder's `documentTemplate` in an index's settings, or one given inline) and optionally an
 * input (a document of an index, or one given inline); the answer echoes the template and, when
 * there is an input, the text it renders to, cut at `documentTemplateMaxBytes` like at indexing.
 *
 * Fragments (multimodal `indexingFragments`/`searchFragments`) and chat templates are not
 * offered by this engine: asking for them is a clear 400.
 */
import { SearchError } from '../errors.js';
import type { Settings } from '../settings/types.js';
import type { Document } from '../types.js';
import { describeValue } from '../wire/describe.js';
import { DEFAULT_DOCUMENT_TEMPLATE, DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES, renderDocument, templateError } from './template.js';

/** What rendering reads from the engine. */
export interface TemplateSources {
  settings(indexUid: string): Settings;
  document(indexUid: string, id: string): Document;
}

export interface RenderTemplateResponse {
  template: unknown;
  rendered: unknown;
}

const TEMPLATE_KINDS = ['documentTemplate', 'inlineDocumentTemplate'] as const;
const INPUT_KINDS = ['indexDocument', 'inlineDocument'] as const;
/** Kinds of the reference that need features this engine does not have. */
const UNSUPPORTED_KINDS = ['inlineFragment', 'searchFragment', 'chatDocumentTemplate', 'inlineSearch'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function invalid(path: string, message: string): SearchError {
  return new SearchError('bad_request', `Invalid value at \`${path}\`: ${message}`);
}

function mistyped(path: string, expected: string, value: unknown): SearchError {
  return new SearchError('bad_request', `Invalid value type at \`${path}\`: expected ${expected}, but found ${describeValue(value)}`);
}

function field(o: Record<string, unknown>, path: string, name: string): string {
  const value = o[name];
  if (value === undefined) throw new SearchError('bad_request', `Missing field \`${name}\` inside \`${path}\``);
  if (typeof value !== 'string') throw mistyped(`${path}.${name}`, 'a string', value);
  return value;
}

/** The kind a source asks for: given, or read from the fields it has, as the reference's examples omit it at times. */
function kindOf(o: Record<string, unknown>, path: string, kinds: readonly string[], infer: () => string): string {
  const kind = o.kind ?? infer();
  if (typeof kind !== 'string') throw mistyped(`${path}.kind`, 'a string', kind);
  if (UNSUPPORTED_KINDS.includes(kind))
    throw new SearchError('bad_request', `Invalid value at \`${path}.kind\`: \`${kind}\` needs fragments or chats, which this engine does not offer.`);
  if (!kinds.includes(kind))
    throw new SearchError('bad_request', `Unknown value \`${kind}\` at \`${path}.kind\`: expected one of ${kinds.map((k) => `\`${k}\``).join(', ')}`);
  return kind;
}

interface TemplateSpec {
  template: string;
  maxBytes: number;
  searchableAttributes: readonly string[];
}

function readTemplate(value: unknown, sources: TemplateSources): TemplateSpec {
  if (!isObject(value)) throw mistyped('.template', 'an object', value);
  const kind = kindOf(value, '.template', TEMPLATE_KINDS, () => ('inline' in value ? 'inlineDocumentTemplate' : 'documentTemplate'));
  if (kind === 'inlineDocumentTemplate') {
    const template = field(value, '.template', 'inline');
    const error = templateError(template);
    if (error) throw invalid('.template.inline', `the template could not be parsed: ${error}`);
    const max = value.documentTemplateMaxBytes ?? DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES;
    if (typeof max !== 'number' || !Number.isInteger(max) || max <= 0)
      throw mistyped('.template.documentTemplateMaxBytes', 'a positive integer', max);
    return { template, maxBytes: max, searchableAttributes: ['*'] };
  }
  const indexUid = field(value, '.template', 'indexUid');
  const embedder = field(value, '.template', 'embedder');
  const settings = sources.settings(indexUid);
  const config = settings.embedders[embedder];
  if (!config) throw new SearchError('bad_request', `Invalid value at \`.template.embedder\`: cannot find embedder with name \`${embedder}\` in index \`${indexUid}\`.`);
  if (config.source === 'userProvided' || config.source === 'composite')
    throw new SearchError('bad_request', `Invalid value at \`.template.embedder\`: the embedder \`${embedder}\` has source \`${config.source}\`, which renders no document template.`);
  return {
    template: (config.documentTemplate as string | undefined) ?? DEFAULT_DOCUMENT_TEMPLATE,
    maxBytes: (config.documentTemplateMaxBytes as number | undefined) ?? DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES,
    searchableAttributes: settings.searchableAttributes,
  };
}

function readInput(value: unknown, sources: TemplateSources): Document | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw mistyped('.input', 'an object', value);
  const kind = kindOf(value, '.input', INPUT_KINDS, () => ('inline' in value ? 'inlineDocument' : 'indexDocument'));
  if (kind === 'inlineDocument') {
    const doc = value.inline;
    if (!isObject(doc)) throw mistyped('.input.inline', 'an object', doc);
    return doc;
  }
  const indexUid = field(value, '.input', 'indexUid');
  const id = value.id;
  if (typeof id !== 'string' && typeof id !== 'number') throw mistyped('.input.id', 'a string or an integer', id);
  return sources.document(indexUid, String(id));
}

/** The indexes a request reads, to be authorized before anything is read. */
export function renderTemplateIndexes(body: unknown): string[] {
  if (!isObject(body)) return [];
  const uids: string[] = [];
  for (const part of [body.template, body.input]) if (isObject(part) && typeof part.indexUid === 'string') uids.push(part.indexUid);
  return uids;
}

export function renderTemplate(body: unknown, sources: TemplateSources): RenderTemplateResponse {
  if (!isObject(body)) throw new SearchError('bad_request', `Invalid value type: expected an object, but found ${describeValue(body)}`);
  for (const key of Object.keys(body))
    if (key !== 'template' && key !== 'input') throw new SearchError('bad_request', `Unknown field \`${key}\`: expected one of \`template\`, \`input\``);
  if (body.template === undefined) throw new SearchError('bad_request', 'Missing field `template`');
  const spec = readTemplate(body.template, sources);
  const input = readInput(body.input, sources);
  if (input === null) return { template: spec.template, rendered: null };
  let rendered: string;
  try {
    rendered = renderDocument(input, { template: spec.template, maxBytes: spec.maxBytes, searchableAttributes: spec.searchableAttributes });
  } catch (error) {
    throw new SearchError('bad_request', `Error while rendering the template: ${(error as Error).message}`);
  }
  return { template: spec.template, rendered };
}
