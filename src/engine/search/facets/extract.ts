/**
 * Facet values of one document, per flattened field path.
 *
 * Nested objects flatten with dots and arrays flatten into multi-valued fields, so
 * `{doggos: [{age: 2}, {age: [4, 5]}]}` gives `doggos.age` the numbers 2, 4 and 5. Strings are
 * normalised for equality (trimmed, lower-cased) while the first original spelling is kept for
 * display; booleans are facet strings `true`/`false`, as in the reference.
 */
import type { Document } from '../../types.js';

/** LMDB keys are limited in size: long facet strings are cut (equality then matches the prefix). */
const MAX_FACET_CHARS = 250;

export interface FieldFacets {
  numbers: Set<number>;
  /** normalized -> original */
  strings: Map<string, string>;
  exists: boolean;
  isNull: boolean;
  isEmpty: boolean;
}

export type DocumentFacets = Map<string, FieldFacets>;

export function normalizeFacet(value: string): string {
  const normalized = value.trim().toLowerCase();
  return normalized.length > MAX_FACET_CHARS ? [...normalized].slice(0, MAX_FACET_CHARS).join('') : normalized;
}

function entry(out: DocumentFacets, path: string): FieldFacets {
  let e = out.get(path);
  if (!e) {
    e = { numbers: new Set(), strings: new Map(), exists: false, isNull: false, isEmpty: false };
    out.set(path, e);
  }
  return e;
}

/** Extract the facets of `doc` for the fields accepted by `faceted`. */
export function extractFacets(doc: Document, faceted: (field: string) => boolean): DocumentFacets {
  const out: DocumentFacets = new Map();

  const leaf = (path: string, value: unknown, inArray: boolean): void => {
    if (!faceted(path)) return;
    const e = entry(out, path);
    if (typeof value === 'number') {
      if (Number.isFinite(value)) e.numbers.add(value === 0 ? 0 : value); // -0 and 0 are one facet
    } else if (typeof value === 'string') {
      if (value === '' && !inArray) e.isEmpty = true;
      const normalized = normalizeFacet(value);
      if (normalized !== '' && !e.strings.has(normalized)) e.strings.set(normalized, value.trim());
    } else if (typeof value === 'boolean') {
      const text = String(value);
      if (!e.strings.has(text)) e.strings.set(text, text);
    }
  };

  const walk = (path: string, value: unknown, inArray: boolean): void => {
    if (path !== '' && !inArray && faceted(path)) entry(out, path).exists = true;
    if (value === null) {
      if (path !== '' && !inArray && faceted(path)) entry(out, path).isNull = true;
      return;
    }
    if (Array.isArray(value)) {
      if (value.length === 0 && path !== '' && !inArray && faceted(path)) entry(out, path).isEmpty = true;
      // asked once per array, not per item: a long array of numbers nobody facets on (a
      // document's `_vectors`) costs one question, not one per number
      const isFaceted = faceted(path);
      for (const item of value) {
        if (item !== null && typeof item === 'object') walk(path, item, true);
        else if (isFaceted) leaf(path, item, true);
      }
      return;
    }
    if (typeof value === 'object') {
      const keys = Object.keys(value as object);
      if (keys.length === 0 && path !== '' && !inArray && faceted(path)) entry(out, path).isEmpty = true;
      for (const key of keys) {
        if ((value as Record<string, unknown>)[key] === undefined) continue; // absent, as in JSON
        const child = path === '' ? key : `${path}.${key}`;
        walk(child, (value as Record<string, unknown>)[key], false);
      }
      return;
    }
    leaf(path, value, inArray);
  };

  walk('', doc, false);
  return out;
}

/**
 * The per-document facet values stored for sort, distinct and small facet counts: numbers
 * ascending, then normalized strings ascending, the order of the facet databases.
 */
export function docValues(f: FieldFacets): Array<number | string> {
  const numbers = [...f.numbers].sort((a, b) => a - b);
  const strings = [...f.strings.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return [...numbers, ...strings];
}
