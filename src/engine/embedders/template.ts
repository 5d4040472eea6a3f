/**
 * `documentTemplate`: the Liquid template that turns a document into the text an embedder sees.
 *
 * The template sees `doc` (the document) and `fields` (every field as `{name, value,
 * is_searchable}`), like the reference. The rendered text is cut to `documentTemplateMaxBytes`
 * UTF-8 bytes on a character boundary, so that huge documents cost a bounded amount to embed.
 */
import { Liquid, type Template } from 'liquidjs';
import type { Document } from '../types.js';

export const DEFAULT_DOCUMENT_TEMPLATE =
  '{% for field in fields %}{% if field.is_searchable and field.value != nil %}{{ field.name }}: {{ field.value }}\n{% endif %}{% endfor %}';
export const DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES = 400;

const liquid = new Liquid({ cache: false, strictFilters: true });
const parsed = new Map<string, Template[]>();

/** Parse once per distinct template; throws liquidjs' error on a bad template. */
function compile(template: string): Template[] {
  let tpl = parsed.get(template);
  if (!tpl) {
    tpl = liquid.parse(template);
    if (parsed.size > 256) parsed.clear();
    parsed.set(template, tpl);
  }
  return tpl;
}

/** Returns the reason a template cannot be used, or null when it is fine. */
export function templateError(template: string): string | null {
  try {
    compile(template);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export interface RenderOptions {
  template?: string;
  maxBytes?: number;
  /** `searchableAttributes` of the index: decides `field.is_searchable`. */
  searchableAttributes?: readonly string[];
}

export function renderDocument(doc: Document, options: RenderOptions = {}): string {
  const template = options.template ?? DEFAULT_DOCUMENT_TEMPLATE;
  const fields = documentFields(doc, options.searchableAttributes ?? ['*']);
  const view = { ...doc };
  delete view._vectors;
  const text = liquid.renderSync(compile(template), { doc: view, fields });
  return truncateUtf8(String(text), options.maxBytes ?? DEFAULT_DOCUMENT_TEMPLATE_MAX_BYTES);
}

interface FieldView {
  name: string;
  value: unknown;
  is_searchable: boolean;
}

function documentFields(doc: Document, searchable: readonly string[]): FieldView[] {
  const all = searchable.includes('*');
  const out: FieldView[] = [];
  for (const [name, value] of Object.entries(doc)) {
    if (name === '_vectors') continue;
    out.push({ name, value: displayValue(value), is_searchable: all || isSearchable(name, searchable) });
  }
  return out;
}

/** Nested values render as JSON rather than liquid's concatenation, so they stay readable. */
function displayValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'object') return JSON.stringify(value);
  return value;
}

function isSearchable(name: string, searchable: readonly string[]): boolean {
  return searchable.some((attr) => attr === name || attr.startsWith(name + '.') || name.startsWith(attr + '.'));
}

/** Cut to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // continuation bytes look like 10xxxxxx: back off to the start of the character
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
