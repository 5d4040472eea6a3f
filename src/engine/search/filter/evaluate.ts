/**
 * Evaluate a parsed filter to the bitmap of matching documents, from the facet and geo
 * databases only (documents are never read).
 *
 * Semantics follow the reference: `=` matches a normalized string facet or, when the value reads
 * as a number, the number facet; comparisons and `TO` range over numbers and, lexicographically,
 * over strings; `!=` and `NOT` complement within all documents (documents without the field
 * match them); `EXISTS` / `IS NULL` / `IS EMPTY` read per-field bitmaps.
 */
import { RoaringBitmap32, type Bitmap, type IndexStore } from '../../index/store.js';
import type { Settings } from '../../settings/types.js';
import { filterablePatterns, filterFeatures, isFilterable } from '../facets/attributes.js';
import { flagDocids, numberDocids, numberRange, orDocids, stringDocids, stringRange, stringValues, facetDbs } from '../facets/databases.js';
import { normalizeFacet } from '../facets/extract.js';
import { geoBoundingBoxDocids, geoPolygonDocids, geoRadiusDocids } from '../geo/query.js';
import { filterError, filterFields, type Condition, type FilterAst, type Token } from './parser.js';

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The value as a finite number, when it reads as one. */
export function asNumber(text: string): number | null {
  const t = text.trim();
  if (!NUMBER.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

export interface EvaluateOptions {
  /** `invalid_search_filter` for searches, `invalid_document_filter` for the documents routes. */
  errorCode?: string;
}

function notFilterableMessage(settings: Settings, field: string): string {
  const patterns = filterablePatterns(settings);
  return patterns.length === 0
    ? `Attribute \`${field}\` is not filterable. This index does not have configured filterable attributes.`
    : `Attribute \`${field}\` is not filterable. Available filterable attributes are: \`${patterns.join(', ')}\`.`;
}

/** Throw the reference error when a filter reads a field that is not filterable. */
export function checkFilterable(ast: FilterAst, settings: Settings, errorCode = 'invalid_search_filter'): void {
  for (const { field, token } of filterFields(ast)) {
    if (!isFilterable(settings, field)) {
      throw filterError(errorCode, notFilterableMessage(settings, field), token.source, token.start, token.end);
    }
  }
}

type Needs = 'equality' | 'comparison' | 'any';

function needsOf(condition: Condition): Needs {
  switch (condition.op) {
    case '=':
    case '!=':
    case 'CONTAINS':
    case 'STARTS WITH':
      return 'equality';
    case '>':
    case '>=':
    case '<':
    case '<=':
    case 'TO':
      return 'comparison';
    default:
      return 'any';
  }
}

class Evaluator {
  private all: Bitmap;

  constructor(
    private readonly store: IndexStore,
    private readonly settings: Settings,
    private readonly code: string,
  ) {
    this.all = store.docids();
  }

  private checkFeature(field: Token, op: string, needs: Needs): void {
    if (needs === 'any') return;
    const features = filterFeatures(this.settings, field.value);
    if (!features || features[needs]) return;
    const allowed = ['OR', 'AND', 'NOT'];
    if (features.equality) allowed.push('=', '!=', 'IN');
    if (features.comparison) allowed.push('<', '>', '<=', '>=', 'TO');
    allowed.push('IS EMPTY', 'IS NULL', 'EXISTS');
    throw filterError(
      this.code,
      `Filter operator \`${op}\` is not allowed for the attribute \`${field.value}\`.\n` +
        `  - Note: allowed operators: ${allowed.join(', ')}.\n` +
        `  - Note: field \`${field.value}\` matched rule #${features.rule} in \`filterableAttributes\``,
      field.source,
      field.start,
      field.end,
    );
  }

  eval(node: FilterAst, universe: Bitmap): Bitmap {
    switch (node.type) {
      case 'and': {
        let acc = universe;
        for (const child of node.children) {
          if (acc.isEmpty) break;
          acc = RoaringBitmap32.and(acc, this.eval(child, acc));
        }
        return acc === universe ? universe.clone() : acc;
      }
      case 'or': {
        const out = new RoaringBitmap32();
        for (const child of node.children) out.orInPlace(this.eval(child, universe));
        return out;
      }
      case 'not':
        return RoaringBitmap32.andNot(universe, this.eval(node.child, universe));
      case 'in': {
        this.checkFeature(node.field, 'IN', 'equality');
        const out = new RoaringBitmap32();
        for (const value of node.values) out.orInPlace(this.equal(node.field.value, value.value));
        return out;
      }
      case 'condition':
        this.checkFeature(node.field, node.condition.op, needsOf(node.condition));
        return this.condition(node.field.value, node.condition);
      case 'geoRadius':
        return geoRadiusDocids(this.store, node.center, node.radius);
      case 'geoBoundingBox':
        return geoBoundingBoxDocids(this.store, node.topRight, node.bottomLeft);
      case 'geoPolygon':
        return geoPolygonDocids(this.store, node.points);
    }
  }

  private equal(field: string, raw: string): Bitmap {
    const out = stringDocids(this.store, field, normalizeFacet(raw));
    const n = asNumber(raw);
    if (n !== null) out.orInPlace(numberDocids(this.store, field, n === 0 ? 0 : n));
    return out;
  }

  /** Documents whose string facet is within the (normalized) bounds. */
  private stringRange(field: string, lo: string | null, loExclusive: boolean, hi: string | null, hiExclusive: boolean): Bitmap {
    const out = new RoaringBitmap32();
    if (lo !== null && hi !== null && (lo > hi || (lo === hi && (loExclusive || hiExclusive)))) return out;
    for (const { value: v, raw } of stringRange(this.store, field, { from: lo ?? '' })) {
      if (lo !== null && loExclusive && v === lo) continue;
      if (hi !== null && (hiExclusive ? v >= hi : v > hi)) break;
      orDocids(out, raw);
    }
    return out;
  }

  private numberRange(field: string, options: Parameters<typeof numberRange>[2]): Bitmap {
    const out = new RoaringBitmap32();
    for (const { raw } of numberRange(this.store, field, options)) orDocids(out, raw);
    return out;
  }

  private comparison(field: string, op: '>' | '>=' | '<' | '<=', raw: string): Bitmap {
    const n = asNumber(raw);
    const s = normalizeFacet(raw);
    let numbers: Bitmap = new RoaringBitmap32();
    let strings: Bitmap;
    if (op === '>' || op === '>=') {
      if (n !== null) numbers = this.numberRange(field, { min: n, minExclusive: op === '>' });
      strings = this.stringRange(field, s, op === '>', null, false);
    } else {
      if (n !== null) numbers = this.numberRange(field, { max: n, maxExclusive: op === '<' });
      strings = this.stringRange(field, null, false, s, op === '<');
    }
    numbers.orInPlace(strings);
    return numbers;
  }

  private condition(field: string, c: Condition): Bitmap {
    switch (c.op) {
      case '=':
        return this.equal(field, c.value.value);
      case '!=':
        return RoaringBitmap32.andNot(this.all, this.equal(field, c.value.value));
      case '>':
      case '>=':
      case '<':
      case '<=':
        return this.comparison(field, c.op, c.value.value);
      case 'TO': {
        const from = asNumber(c.from.value);
        const to = asNumber(c.to.value);
        const out = from !== null && to !== null ? this.numberRange(field, { min: from, max: to }) : new RoaringBitmap32();
        out.orInPlace(this.stringRange(field, normalizeFacet(c.from.value), false, normalizeFacet(c.to.value), false));
        return out;
      }
      case 'EXISTS':
        return flagDocids(this.store, 'exists', field);
      case 'IS NULL':
        return flagDocids(this.store, 'null', field);
      case 'IS EMPTY':
        return flagDocids(this.store, 'empty', field);
      case 'CONTAINS': {
        const needle = normalizeFacet(c.value.value);
        const out = new RoaringBitmap32();
        // scan the keys only; read the docids of the values that contain the needle
        const { strings } = facetDbs(this.store);
        for (const value of stringValues(this.store, field)) {
          if (value.includes(needle)) orDocids(out, strings.get([field, value]));
        }
        return out;
      }
      case 'STARTS WITH': {
        const out = new RoaringBitmap32();
        for (const { raw } of stringRange(this.store, field, { prefix: normalizeFacet(c.value.value) })) orDocids(out, raw);
        return out;
      }
    }
  }
}

/**
 * The documents matching `ast`. Throws `invalid_search_filter` (or `options.errorCode`) when the
 * filter reads a field that is not filterable or uses an operator its rule does not allow.
 */
export function evaluateFilter(store: IndexStore, ast: FilterAst, settings: Settings, options: EvaluateOptions = {}): Bitmap {
  const code = options.errorCode ?? 'invalid_search_filter';
  checkFilterable(ast, settings, code);
  const evaluator = new Evaluator(store, settings, code);
  const universe = store.docids();
  return RoaringBitmap32.and(evaluator.eval(ast, universe), universe);
}
