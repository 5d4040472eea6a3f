/**
 * Which document fields are searchable, their attribute rank, and how a document is walked into
 * (field path, text) pairs. Nested objects are flattened with dots ("author.name"); array elements
 * share their field's path.
 */
import type { Settings, LocalizedAttributeRule } from '../../settings/types.js';
import type { Document } from '../../types.js';

export function forEachValue(doc: Document, visit: (path: string, text: string, element: number) => void): void {
  const walk = (value: unknown, path: string, element: number): number => {
    if (value === null || value === undefined) return element;
    if (Array.isArray(value)) {
      let e = element;
      for (const item of value) e = walk(item, path, e);
      return e;
    }
    if (typeof value === 'object') {
      for (const [key, inner] of Object.entries(value as Record<string, unknown>)) walk(inner, path ? `${path}.${key}` : key, 0);
      return element;
    }
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      visit(path, String(value), element);
      return element + 1;
    }
    return element;
  };
  for (const [key, value] of Object.entries(doc)) {
    if (key === '_vectors' || key === '_geo') continue;
    walk(value, key, 0);
  }
}

/** Does `pattern` (a field name, possibly a parent of nested fields) cover `path`? */
export function coversPath(pattern: string, path: string): boolean {
  return pattern === '*' || pattern === path || path.startsWith(pattern + '.');
}

export function isSearchable(path: string, searchable: readonly string[]): boolean {
  return searchable.some((p) => coversPath(p, path));
}

/** Glob match with `*` at the start and/or end, as `localizedAttributes` patterns are written. */
export function matchesPattern(pattern: string, path: string): boolean {
  if (pattern === '*') return true;
  const starts = pattern.startsWith('*');
  const ends = pattern.endsWith('*');
  const core = pattern.slice(starts ? 1 : 0, ends ? -1 : undefined);
  if (starts && ends) return path.includes(core);
  if (starts) return path.endsWith(core);
  if (ends) return path.startsWith(core);
  return coversPath(pattern, path);
}

export function localesFor(path: string, rules: readonly LocalizedAttributeRule[] | null): string[] | null {
  if (!rules) return null;
  for (const rule of rules) if (rule.attributePatterns.some((p) => matchesPattern(p, path))) return rule.locales.length > 0 ? rule.locales : null;
  return null;
}

/**
 * Attribute rank of a field: its position in `searchableAttributes`. With the default `*`, every
 * field has the same rank, as in the reference (its weights map gives every field weight 0 when
 * no searchable attributes are set): the order in which fields were first seen does not rank.
 */
export function attributeRank(path: string, _fid: number, settings: Settings): number {
  const searchable = settings.searchableAttributes;
  const i = searchable.findIndex((p) => p !== '*' && coversPath(p, path));
  if (i >= 0) return i;
  const star = searchable.indexOf('*');
  return star >= 0 ? star : Number.MAX_SAFE_INTEGER;
}
