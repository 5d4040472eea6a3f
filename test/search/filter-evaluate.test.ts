/**
 * The filter evaluator (facet databases) against a brute-force evaluation over the stored
 * documents, on random expressions: both must select the same documents.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFilter, type Condition, type FilterAst } from '../../src/engine/search/filter/parser.js';
import { asNumber, evaluateFilter } from '../../src/engine/search/filter/evaluate.js';
import { haversine } from '../../src/engine/search/geo/distance.js';
import type { Settings } from '../../src/engine/settings/types.js';
import type { Document } from '../../src/engine/types.js';
import { SearchError } from '../../src/engine/errors.js';
import { movies, TestIndex, worldCities } from './helpers.js';

// --- brute force: a direct reading of the documents ------------------------------------------

const norm = (s: string) => s.trim().toLowerCase();

interface Leaves {
  values: unknown[];
  exists: boolean;
  isNull: boolean;
  isEmpty: boolean;
}

/** Values of a dotted path, flattening arrays, plus the presence flags. */
function leaves(doc: Document, path: string): Leaves {
  const out: Leaves = { values: [], exists: false, isNull: false, isEmpty: false };
  const visit = (value: unknown, rest: string[], top: boolean): void => {
    if (rest.length === 0) {
      if (top) {
        out.exists = true;
        if (value === null) out.isNull = true;
        if (value === '' || (Array.isArray(value) && value.length === 0)) out.isEmpty = true;
        if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) out.isEmpty = true;
      }
      const flat = (v: unknown): void => {
        if (Array.isArray(v)) v.forEach(flat);
        else if (v !== null && typeof v !== 'object') out.values.push(v);
      };
      flat(value);
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item, rest, false);
      return;
    }
    if (value && typeof value === 'object') {
      const [head, ...tail] = rest;
      const obj = value as Record<string, unknown>;
      if (head! in obj) visit(obj[head!], tail, top || !Array.isArray(value));
    }
  };
  // a top-level path is a single key
  const parts = path.split('.');
  const first = parts[0]!;
  if (first in doc) visit(doc[first], parts.slice(1), true);
  return out;
}

function matchesCondition(doc: Document, field: string, c: Condition): boolean {
  const l = leaves(doc, field);
  const strings = l.values.map((v) => (typeof v === 'string' ? norm(v) : typeof v === 'boolean' ? String(v) : null)).filter((v): v is string => v !== null && v !== '');
  const numbers = l.values.filter((v): v is number => typeof v === 'number');
  const eq = (raw: string) => strings.includes(norm(raw)) || (asNumber(raw) !== null && numbers.includes(asNumber(raw)!));
  switch (c.op) {
    case '=':
      return eq(c.value.value);
    case '!=':
      return !eq(c.value.value);
    case '>':
    case '>=':
    case '<':
    case '<=': {
      const n = asNumber(c.value.value);
      const s = norm(c.value.value);
      const cmp = <T>(a: T, b: T) =>
        c.op === '>' ? a > b : c.op === '>=' ? a >= b : c.op === '<' ? a < b : a <= b;
      return (n !== null && numbers.some((x) => cmp(x, n))) || strings.some((x) => cmp(x, s));
    }
    case 'TO': {
      const a = asNumber(c.from.value);
      const b = asNumber(c.to.value);
      const sa = norm(c.from.value);
      const sb = norm(c.to.value);
      return (a !== null && b !== null && numbers.some((x) => x >= a && x <= b)) || strings.some((x) => x >= sa && x <= sb);
    }
    case 'EXISTS':
      return l.exists;
    case 'IS NULL':
      return l.isNull;
    case 'IS EMPTY':
      return l.isEmpty;
    case 'CONTAINS':
      return strings.some((s) => s.includes(norm(c.value.value)));
    case 'STARTS WITH':
      return strings.some((s) => s.startsWith(norm(c.value.value)));
  }
}

function bruteForce(doc: Document, ast: FilterAst): boolean {
  switch (ast.type) {
    case 'and':
      return ast.children.every((c) => bruteForce(doc, c));
    case 'or':
      return ast.children.some((c) => bruteForce(doc, c));
    case 'not':
      return !bruteForce(doc, ast.child);
    case 'in':
      return ast.values.some((v) => matchesCondition(doc, ast.field.value, { op: '=', value: v }));
    case 'condition':
      return matchesCondition(doc, ast.field.value, ast.condition);
    case 'geoRadius': {
      const g = doc._geo as { lat: number; lng: number } | undefined;
      return !!g && haversine(ast.center, [g.lat, g.lng]) <= ast.radius;
    }
    case 'geoBoundingBox': {
      const g = doc._geo as { lat: number; lng: number } | undefined;
      if (!g) return false;
      const [top, right] = ast.topRight;
      const [bottom, left] = ast.bottomLeft;
      if (g.lat > top || g.lat < bottom) return false;
      return left <= right ? g.lng >= left && g.lng <= right : g.lng >= left || g.lng <= right;
    }
    case 'geoPolygon':
      throw new Error('not generated');
  }
}

// --- random expressions ----------------------------------------------------------------------

const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

function expressions(leaf: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const { expr } = fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.tuple(tie('expr'), fc.constantFrom('AND', 'OR'), tie('expr')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
      tie('expr').map((a) => `NOT (${a})`),
    ),
  }));
  return expr;
}

function checkAgainstBruteForce(index: TestIndex, docs: Array<{ docid: number; doc: Document }>, filter: unknown): void {
  const ast = parseFilter(filter);
  const got = ast ? [...evaluateFilter(index.store, ast, index.settings)].sort((a, b) => a - b) : [];
  const want = ast ? docs.filter(({ doc }) => bruteForce(doc, ast)).map(({ docid }) => docid).sort((a, b) => a - b) : [];
  expect(got, JSON.stringify(filter)).toEqual(want);
}

describe('filter evaluator vs brute force on movies', () => {
  let index: TestIndex;
  let docs: Array<{ docid: number; doc: Document }>;
  let genres: string[];
  let titleWords: string[];
  const settings: Partial<Settings> = {
    filterableAttributes: ['year', 'genres', 'title', 'href', 'cast', 'extract', 'info'],
  };

  beforeAll(async () => {
    // Every other film of the fixture (3,972, all decades), with a derived nested object to exercise dots.
    const subset = movies()
      .filter((_, i) => i % 2 === 0)
      .map((m): Document => ({ ...m, info: { decade: Math.floor((m.year as number) / 10) * 10, lead: (m.cast as string[])[0] ?? null } }));
    index = new TestIndex('id', settings);
    await index.add(subset);
    docs = index.allDocuments();
    genres = [...new Set(subset.flatMap((m) => m.genres as string[]))];
    titleWords = [...new Set(subset.flatMap((m) => String(m.title).split(/\s+/)).filter((w) => /^[A-Za-z]{2,}$/.test(w)))].slice(0, 200);
  });
  afterAll(() => index.close());

  it('indexed the subset', () => {
    expect(docs.length).toBeGreaterThan(2900);
  });

  it('agrees on random expressions', () => {
    const year = fc.integer({ min: 1895, max: 2025 });
    const genre = fc.constantFrom(...genres).chain((g) => fc.constantFrom(g, g.toLowerCase(), g.toUpperCase(), ` ${g} `));
    const word = fc.constantFrom(...titleWords);
    const leaf = fc.oneof(
      fc.tuple(fc.constantFrom('=', '!=', '>', '>=', '<', '<='), year).map(([op, y]) => `year ${op} ${y}`),
      fc.tuple(year, year).map(([a, b]) => `year ${a} TO ${b}`),
      fc.tuple(fc.constantFrom('=', '!='), genre).map(([op, g]) => `genres ${op} ${quote(g)}`),
      fc.tuple(fc.constantFrom('IN', 'NOT IN'), fc.array(genre, { maxLength: 3 })).map(([op, gs]) => `genres ${op} [${gs.map(quote).join(', ')}]`),
      fc.tuple(fc.constantFrom('STARTS WITH', 'NOT STARTS WITH', 'CONTAINS', 'NOT CONTAINS'), word).map(([op, w]) => `title ${op} ${quote(w.slice(0, 4))}`),
      fc.tuple(fc.constantFrom('>', '<='), word).map(([op, w]) => `title ${op} ${quote(w)}`),
      fc.constantFrom('href IS NULL', 'href IS NOT NULL', 'genres IS EMPTY', 'cast IS NOT EMPTY', 'extract EXISTS', 'extract NOT EXISTS', 'info.lead IS NULL', 'info.lead EXISTS'),
      fc.tuple(fc.constantFrom('=', '>=', '<'), fc.integer({ min: 189, max: 202 })).map(([op, d]) => `info.decade ${op} ${d * 10}`),
    );
    fc.assert(
      fc.property(expressions(leaf), (filter) => checkAgainstBruteForce(index, docs, filter)),
      { numRuns: 150, seed: 42 },
    );
    // the array form: AND of items, inner arrays are ORs
    fc.assert(
      fc.property(fc.array(fc.oneof(leaf, fc.array(leaf, { minLength: 1, maxLength: 3 })), { minLength: 1, maxLength: 3 }), (filter) =>
        checkAgainstBruteForce(index, docs, filter),
      ),
      { numRuns: 50, seed: 7 },
    );
  });

  it('answers concrete questions on the real data', () => {
    const count = (f: string) => evaluateFilter(index.store, parseFilter(f)!, index.settings).size;
    const brute = (pred: (m: Document) => boolean) => docs.filter(({ doc }) => pred(doc)).length;
    expect(count('genres = horror')).toBe(brute((m) => (m.genres as string[]).includes('Horror')));
    expect(count('year 1990 TO 1999 AND genres = Comedy')).toBe(
      brute((m) => (m.year as number) >= 1990 && (m.year as number) <= 1999 && (m.genres as string[]).includes('Comedy')),
    );
    expect(count('genres = Horror')).toBeGreaterThan(50);
  });

  it('keeps every structure exact through updates and deletions', async () => {
    const sample = docs.slice(0, 300).map(({ doc }) => doc);
    // rewrite some documents (new genres, drop the extract, null the year) and delete others
    await index.add(sample.slice(0, 150).map((m, i) => ({ ...m, genres: i % 2 ? ['Zombie', 'Horror'] : [], extract: undefined, year: i % 3 ? m.year : null })));
    index.delete(sample.slice(150, 300).map((m) => m.id as number));
    docs = index.allDocuments().map(({ docid, doc }) => ({ docid, doc: JSON.parse(JSON.stringify(doc)) as Document }));
    for (const f of ['genres = zombie', 'genres IS EMPTY', 'extract NOT EXISTS', 'year IS NULL', 'year < 1950 OR genres = Horror', 'NOT genres = Horror']) {
      checkAgainstBruteForce(index, docs, f);
    }
    expect(evaluateFilter(index.store, parseFilter('genres = zombie')!, index.settings).size).toBe(75);
  });

  it('refuses fields that are not filterable, with the position', () => {
    const err = (() => {
      try {
        evaluateFilter(index.store, parseFilter('year > 1 AND rating = 3')!, index.settings);
      } catch (e) {
        return e as SearchError;
      }
      throw new Error('expected an error');
    })();
    expect(err.code).toBe('invalid_search_filter');
    expect(err.message).toBe(
      'Attribute `rating` is not filterable. Available filterable attributes are: `cast, extract, genres, href, info, title, year`.\n14:20 year > 1 AND rating = 3',
    );
  });
});

describe('filter evaluator vs brute force on world cities', () => {
  let index: TestIndex;
  let docs: Array<{ docid: number; doc: Document }>;
  let countries: string[];

  beforeAll(async () => {
    index = new TestIndex('geonameid', { filterableAttributes: ['_geo', 'country', 'population', 'country code', 'timezone'] });
    await index.add(worldCities());
    docs = index.allDocuments();
    countries = [...new Set(worldCities().map((c) => c.country as string))];
  });
  afterAll(() => index.close());

  it('agrees on random expressions mixing geo and facets', () => {
    const lat = fc.double({ min: -80, max: 80, noNaN: true }).map((v) => Math.round(v * 100) / 100);
    const lng = fc.double({ min: -179, max: 179, noNaN: true }).map((v) => Math.round(v * 100) / 100);
    const leaf = fc.oneof(
      fc.tuple(lat, lng, fc.integer({ min: 1000, max: 3_000_000 })).map(([a, b, r]) => `_geoRadius(${a}, ${b}, ${r})`),
      fc.tuple(lat, lat, lng, lng).map(([a, b, c, d]) => `_geoBoundingBox([${Math.max(a, b)}, ${d}], [${Math.min(a, b)}, ${c}])`),
      fc.tuple(fc.constantFrom('>', '<', '>='), fc.integer({ min: 0, max: 5_000_000 })).map(([op, n]) => `population ${op} ${n}`),
      fc.constantFrom(...countries).map((c) => `country = ${quote(c)}`),
      fc.constantFrom('FR', 'US', 'cn', 'IN', 'br').map((c) => `"country code" = ${quote(c)}`),
      fc.constantFrom('Europe', 'America', 'Asia/T').map((p) => `timezone STARTS WITH ${quote(p)}`),
    );
    fc.assert(
      fc.property(expressions(leaf), (filter) => checkAgainstBruteForce(index, docs, filter)),
      { numRuns: 100, seed: 3 },
    );
  });
});
