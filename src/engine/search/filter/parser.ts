/**
 * Filter expressions, in the Meilisearch syntax, parsed into a `FilterAst`.
 *
 * Grammar (WS = whitespace; keywords are case-sensitive and must stand as whole words):
 *
 *   filter      = WS* expression WS* EOF
 *   expression  = or
 *   or          = and ("OR" and)*
 *   and         = not ("AND" not)*
 *   not         = "NOT" not | primary
 *   primary     = "(" expression ")" | geoRadius | geoBoundingBox | geoPolygon | condition
 *   condition   = value ( ("=" | "!=" | ">" | ">=" | "<" | "<=") value
 *                       | "IN" list | "NOT" "IN" list
 *                       | "EXISTS" | "NOT" "EXISTS"
 *                       | "IS" "NULL" | "IS" "NOT" "NULL" | "IS" "EMPTY" | "IS" "NOT" "EMPTY"
 *                       | "CONTAINS" value | "NOT" "CONTAINS" value
 *                       | "STARTS" "WITH" value | "NOT" "STARTS" "WITH" value
 *                       | value "TO" value )
 *   list        = "[" (value ("," value)* ","?)? "]"
 *   value       = WS* (word | "'" chars "'" | '"' chars '"') WS*     (a word may not be a keyword)
 *   word        = (letter | digit | "_" | "-" | ".")+                (dots address nested fields)
 *   chars       = any character; a backslash escapes the quote, "\\", "\n", "\t", "\r", "\uXXXX"
 *   geoRadius   = "_geoRadius(" float "," float "," float ")"
 *   geoBoundingBox = "_geoBoundingBox(" point "," point ")"          (top-right, then bottom-left)
 *   geoPolygon  = "_geoPolygon(" point ("," point)+ ")"                (at least three points)
 *   point       = "[" float "," float "]"
 *
 * The array form is an AND of its items; an item that is itself an array is an OR of strings.
 *
 * Errors carry the Meilisearch diagnostic shape: a message, a newline, then `start:end filter`,
 * where start/end are 1-based character columns of the offending part of the filter string.
 */
import { SearchError } from '../../errors.js';

/** A piece of the filter text: its (unescaped) value and where it was written, for diagnostics. */
export interface Token {
  value: string;
  /** UTF-16 offsets into `source`. */
  start: number;
  end: number;
  source: string;
}

export type Condition =
  | { op: '=' | '!=' | '>' | '>=' | '<' | '<='; value: Token }
  | { op: 'TO'; from: Token; to: Token }
  | { op: 'EXISTS' | 'IS NULL' | 'IS EMPTY' }
  | { op: 'CONTAINS' | 'STARTS WITH'; value: Token };

export type GeoPoint = [lat: number, lng: number];

export type FilterAst =
  | { type: 'and'; children: FilterAst[] }
  | { type: 'or'; children: FilterAst[] }
  | { type: 'not'; child: FilterAst }
  | { type: 'condition'; field: Token; condition: Condition }
  | { type: 'in'; field: Token; values: Token[] }
  | { type: 'geoRadius'; center: GeoPoint; radius: number; token: Token }
  | { type: 'geoBoundingBox'; topRight: GeoPoint; bottomLeft: GeoPoint; token: Token }
  | { type: 'geoPolygon'; points: GeoPoint[]; token: Token };

const MAX_DEPTH = 200;

const KEYWORDS = new Set([
  'AND', 'OR', 'IN', 'NOT', 'TO', 'EXISTS', 'IS', 'NULL', 'EMPTY', 'CONTAINS', 'STARTS', 'WITH',
  '_geoRadius', '_geoBoundingBox', '_geoPolygon',
]);
const RESERVED_GEO = new Set(['_geo', '_geoDistance', '_geoPoint']);

const WORD_CHAR = /[\p{L}\p{N}_.\-]/u;
const SYNTAX_CHAR = /[\s()=<>!]/u;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

const OPERATIONS =
  '`=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, ' +
  '`IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, ' +
  '`_geoBoundingBox` or `_geoPolygon`';

/** 1-based column (in characters, not UTF-16 units) of a UTF-16 offset. */
function column(source: string, offset: number): number {
  return [...source.slice(0, offset)].length + 1;
}

/** Build the Meilisearch-style diagnostic for a part of a filter string. */
export function filterError(code: string, message: string, source: string, start: number, end: number): SearchError {
  const from = column(source, start);
  const to = from + [...source.slice(start, end)].length;
  return new SearchError(code, `${message}\n${from}:${to} ${source}`);
}

/** Escape newlines and such so that the diagnostic stays on its two lines. */
function escapeDebug(text: string): string {
  return text.replace(/[\\\n\r\t"']/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '"': '\\"', "'": "\\'" })[c]!);
}

class Parser {
  private pos = 0;

  constructor(
    private readonly src: string,
    private readonly code: string,
  ) {}

  parse(): FilterAst {
    const ast = this.parseOr(0);
    this.skipWs();
    if (this.pos < this.src.length) {
      const rest = this.src.slice(this.pos);
      throw this.fail(
        `Found unexpected characters at the end of the filter: \`${escapeDebug(rest)}\`. You probably forgot an \`OR\` or an \`AND\` rule.`,
        this.pos,
        this.src.length,
      );
    }
    return ast;
  }

  // --- helpers -------------------------------------------------------------------------------

  private fail(message: string, start: number, end: number): SearchError {
    return filterError(this.code, message, this.src, start, end);
  }

  private skipWs(): void {
    while (this.pos < this.src.length && /\s/u.test(this.src[this.pos]!)) this.pos++;
  }

  /** The bare word starting at `at` (possibly empty), without consuming it. */
  private wordAt(at: number): string {
    let end = at;
    while (end < this.src.length) {
      const ch = String.fromCodePoint(this.src.codePointAt(end)!);
      if (!WORD_CHAR.test(ch)) break;
      end += ch.length;
    }
    return this.src.slice(at, end);
  }

  /** Consume `keyword` (after optional whitespace) if it stands there as a whole word. */
  private eatKeyword(keyword: string): boolean {
    const save = this.pos;
    this.skipWs();
    if (this.wordAt(this.pos) === keyword) {
      this.pos += keyword.length;
      return true;
    }
    this.pos = save;
    return false;
  }

  private peekKeyword(keyword: string): boolean {
    const save = this.pos;
    const found = this.eatKeyword(keyword);
    this.pos = save;
    return found;
  }

  private depthCheck(depth: number): void {
    if (depth > MAX_DEPTH)
      throw this.fail(
        'The filter exceeded the maximum depth limit. Try rewriting the filter so that it contains fewer nested conditions.',
        this.pos,
        this.src.length,
      );
  }

  // --- expressions ---------------------------------------------------------------------------

  private parseOr(depth: number): FilterAst {
    this.depthCheck(depth);
    const children = [this.parseAnd(depth + 1)];
    while (this.eatKeyword('OR')) children.push(this.parseAnd(depth + 1));
    return children.length === 1 ? children[0]! : { type: 'or', children };
  }

  private parseAnd(depth: number): FilterAst {
    this.depthCheck(depth);
    const children = [this.parseNot(depth + 1)];
    while (this.eatKeyword('AND')) children.push(this.parseNot(depth + 1));
    return children.length === 1 ? children[0]! : { type: 'and', children };
  }

  private parseNot(depth: number): FilterAst {
    this.depthCheck(depth);
    if (this.eatKeyword('NOT')) {
      const inner = this.parseNot(depth + 1);
      return inner.type === 'not' ? inner.child : { type: 'not', child: inner };
    }
    return this.parsePrimary(depth + 1);
  }

  private parsePrimary(depth: number): FilterAst {
    this.skipWs();
    const start = this.pos;
    if (this.src[this.pos] === '(') {
      this.pos++;
      const inner = this.parseOr(depth + 1);
      this.skipWs();
      if (this.src[this.pos] !== ')') {
        throw this.fail(
          `Expression \`${escapeDebug(this.src.slice(start))}\` is missing the following closing delimiter: \`)\`.`,
          start,
          this.src.length,
        );
      }
      this.pos++;
      return inner;
    }
    const word = this.wordAt(start);
    if (word === '_geoRadius') return this.parseGeoRadius(start);
    if (word === '_geoBoundingBox') return this.parseGeoBoundingBox(start);
    if (word === '_geoPolygon') return this.parseGeoPolygon(start);
    return this.parseCondition(start);
  }

  /** The diagnostic for a primary that is not a condition, as the reference gives it. */
  private invalidPrimary(start: number): SearchError {
    const rest = this.src.slice(start).trimEnd();
    const where = rest.trim() === '' ? 'but instead got nothing.' : `at \`${escapeDebug(rest)}\`.`;
    return this.fail(`Was expecting an operation ${OPERATIONS} ${where}`, start, start + rest.length);
  }

  private parseCondition(start: number): FilterAst {
    // A field that cannot be read makes the whole primary invalid; quote and geo misuse errors
    // are more precise and pass through.
    const field = this.tryValue();
    if (!field) throw this.invalidPrimary(start);
    this.skipWs();
    const opStart = this.pos;
    for (const op of ['>=', '<=', '!=', '=', '>', '<'] as const) {
      if (this.src.startsWith(op, this.pos)) {
        this.pos += op.length;
        return { type: 'condition', field, condition: { op, value: this.parseValue() } };
      }
    }
    if (this.eatKeyword('IN')) return { type: 'in', field, values: this.parseList() };
    if (this.eatKeyword('EXISTS')) return { type: 'condition', field, condition: { op: 'EXISTS' } };
    if (this.eatKeyword('CONTAINS'))
      return { type: 'condition', field, condition: { op: 'CONTAINS', value: this.parseValue() } };
    if (this.peekKeyword('STARTS')) {
      this.eatKeyword('STARTS');
      if (this.eatKeyword('WITH'))
        return { type: 'condition', field, condition: { op: 'STARTS WITH', value: this.parseValue() } };
      this.pos = opStart;
    }
    if (this.peekKeyword('IS')) {
      this.eatKeyword('IS');
      const negated = this.eatKeyword('NOT');
      let op: 'IS NULL' | 'IS EMPTY' | null = null;
      if (this.eatKeyword('NULL')) op = 'IS NULL';
      else if (this.eatKeyword('EMPTY')) op = 'IS EMPTY';
      if (op) {
        const node: FilterAst = { type: 'condition', field, condition: { op } };
        return negated ? { type: 'not', child: node } : node;
      }
      this.pos = opStart;
    }
    if (this.peekKeyword('NOT')) {
      this.eatKeyword('NOT');
      let node: FilterAst | null = null;
      if (this.eatKeyword('IN')) node = { type: 'in', field, values: this.parseList() };
      else if (this.eatKeyword('EXISTS')) node = { type: 'condition', field, condition: { op: 'EXISTS' } };
      else if (this.eatKeyword('CONTAINS'))
        node = { type: 'condition', field, condition: { op: 'CONTAINS', value: this.parseValue() } };
      else if (this.eatKeyword('STARTS') && this.eatKeyword('WITH'))
        node = { type: 'condition', field, condition: { op: 'STARTS WITH', value: this.parseValue() } };
      if (node) return { type: 'not', child: node };
      this.pos = opStart;
    }
    // `field from TO to`: only when a second value is followed by TO.
    const save = this.pos;
    const from = this.tryValue();
    if (from && this.eatKeyword('TO')) {
      return { type: 'condition', field, condition: { op: 'TO', from, to: this.parseValue() } };
    }
    this.pos = save;
    throw this.invalidPrimary(start);
  }

  /** `[a, b, ...]` after IN. */
  private parseList(): Token[] {
    this.skipWs();
    if (this.src[this.pos] !== '[') {
      throw this.fail('Expected `[` after `IN` keyword.', this.pos, this.src.length);
    }
    this.pos++;
    const values: Token[] = [];
    for (;;) {
      this.skipWs();
      if (this.src[this.pos] === ']') break;
      if (this.pos >= this.src.length) {
        throw this.fail('Expected matching `]` after the list of field names given to `IN[`', this.pos, this.pos);
      }
      const at = this.pos;
      const value = this.tryValue();
      if (!value) {
        const bad = this.errorWord(at);
        const keyword = KEYWORDS.has(bad);
        throw this.fail(
          keyword
            ? `Expected only comma-separated field names inside \`IN[..]\` but instead found \`${escapeDebug(bad)}\`, which is a keyword. To use \`${escapeDebug(bad)}\` as a field name or a value, surround it by quotes.`
            : `Expected only comma-separated field names inside \`IN[..]\` but instead found \`${escapeDebug(bad || this.src.slice(at))}\`.`,
          at,
          at + (bad || this.src.slice(at)).length,
        );
      }
      values.push(value);
      this.skipWs();
      if (this.src[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.skipWs();
      if (this.src[this.pos] === ']') break;
      if (this.pos >= this.src.length) {
        throw this.fail('Expected matching `]` after the list of field names given to `IN[`', this.pos, this.pos);
      }
      const bad = this.errorWord(this.pos) || this.src.slice(this.pos);
      throw this.fail(
        `Expected only comma-separated field names inside \`IN[..]\` but instead found \`${escapeDebug(bad)}\`.`,
        this.pos,
        this.pos + bad.length,
      );
    }
    this.pos++; // ]
    return values;
  }

  // --- values --------------------------------------------------------------------------------

  /** The longest run without filter syntax, used to point at what could not be read as a value. */
  private errorWord(at: number): string {
    let end = at;
    while (end < this.src.length && !SYNTAX_CHAR.test(this.src[end]!) && this.src[end] !== ',' && this.src[end] !== ']')
      end++;
    return this.src.slice(at, end);
  }

  /** A value, or null (position restored) when none stands here. Quote errors still throw. */
  private tryValue(): Token | null {
    const save = this.pos;
    try {
      return this.parseValue();
    } catch (error) {
      if (error instanceof SearchError && /is missing the following closing delimiter|reserved keyword and thus can't|is an operation and can't/.test(error.message))
        throw error;
      this.pos = save;
      return null;
    }
  }

  private parseValue(): Token {
    this.skipWs();
    const start = this.pos;
    const quote = this.src[start];
    if (quote === '"' || quote === "'") return this.parseQuoted(quote, start);
    const word = this.wordAt(start);
    if (word === '_geoRadius' || word === '_geoBoundingBox' || word === '_geoPolygon') {
      throw this.fail(`The \`${word}\` filter is an operation and can't be used as a value.`, start, this.src.length);
    }
    if (RESERVED_GEO.has(word)) {
      throw this.fail(
        `\`${word}\` is a reserved keyword and thus can't be used as a filter expression. Use the \`_geoRadius(latitude, longitude, distance)\`, \`_geoBoundingBox([latitude, longitude], [latitude, longitude])\` or \`_geoPolygon([latitude, longitude], ...)\` built-in rules to filter on \`_geo\` coordinates.`,
        start,
        start + word.length,
      );
    }
    if (word === '') {
      const bad = this.errorWord(start);
      if (bad.trim() === '') throw this.fail('Was expecting a value but instead got nothing.', start, this.src.length);
      throw this.fail(`Was expecting a value but instead got \`${escapeDebug(bad)}\`.`, start, start + bad.length);
    }
    if (KEYWORDS.has(word)) {
      throw this.fail(
        `Was expecting a value but instead got \`${word}\`, which is a reserved keyword. To use \`${word}\` as a field name or a value, surround it by quotes.`,
        start,
        start + word.length,
      );
    }
    this.pos = start + word.length;
    return { value: word, start, end: this.pos, source: this.src };
  }

  private parseQuoted(quote: string, start: number): Token {
    let i = start + 1;
    let out = '';
    while (i < this.src.length) {
      const c = this.src[i]!;
      if (c === quote) {
        this.pos = i + 1;
        return { value: out, start: start + 1, end: i, source: this.src };
      }
      if (c === '\\' && i + 1 < this.src.length) {
        const [text, used] = unescapeAt(this.src, i + 1, quote);
        out += text;
        i += 1 + used;
        continue;
      }
      out += c;
      i++;
    }
    throw this.fail(
      `Expression \`${escapeDebug(this.src.slice(start))}\` is missing the following closing delimiter: \`${quote}\`.`,
      start,
      this.src.length,
    );
  }

  // --- geo -----------------------------------------------------------------------------------

  /** `name(` then raw text up to the matching `)`, or null when unbalanced. */
  private geoArgs(start: number, name: string): { inner: string; innerStart: number; end: number } | null {
    let i = start + name.length;
    while (i < this.src.length && /\s/u.test(this.src[i]!)) i++;
    if (this.src[i] !== '(') return null;
    const close = this.src.indexOf(')', i);
    if (close < 0) return null;
    return { inner: this.src.slice(i + 1, close), innerStart: i + 1, end: close + 1 };
  }

  private float(text: string): number | null {
    const t = text.trim();
    return FLOAT.test(t) ? Number(t) : null;
  }

  private checkPoint(lat: number, lng: number, token: Token): void {
    if (lat < -90 || lat > 90) {
      throw this.fail(`Bad latitude \`${lat}\`. Latitude must be contained between -90 and 90 degrees.`, token.start, token.end);
    }
    if (lng < -180 || lng > 180) {
      throw this.fail(`Bad longitude \`${lng}\`. Longitude must be contained between -180 and 180 degrees.`, token.start, token.end);
    }
  }

  private parseGeoRadius(start: number): FilterAst {
    const usage = 'The `_geoRadius` filter expects three arguments: `_geoRadius(latitude, longitude, radius)`.';
    const args = this.geoArgs(start, '_geoRadius');
    if (!args) throw this.fail(usage, start, this.src.length);
    const numbers = args.inner.split(',').map((part) => this.float(part));
    if (numbers.length !== 3 || numbers.some((n) => n === null)) throw this.fail(usage, start, args.end);
    const [lat, lng, radius] = numbers as number[];
    const token: Token = { value: this.src.slice(start, args.end), start, end: args.end, source: this.src };
    this.checkPoint(lat!, lng!, token);
    this.pos = args.end;
    return { type: 'geoRadius', center: [lat!, lng!], radius: radius!, token };
  }

  /** `[lat, lng], [lat, lng], ...` -> points, or null when malformed. */
  private points(inner: string): GeoPoint[] | null {
    const trimmed = inner.trim();
    if (!trimmed.startsWith('[') || !trimmed.endsWith(']')) return null;
    const groups = trimmed.slice(1, -1).split(/\]\s*,\s*\[/);
    const points: GeoPoint[] = [];
    for (const group of groups) {
      const parts = group.split(',').map((p) => this.float(p));
      if (parts.length !== 2 || parts.some((p) => p === null)) return null;
      points.push([parts[0]!, parts[1]!]);
    }
    return points;
  }

  private parseGeoBoundingBox(start: number): FilterAst {
    const usage =
      'The `_geoBoundingBox` filter expects two pairs of arguments: `_geoBoundingBox([latitude, longitude], [latitude, longitude])`.';
    const args = this.geoArgs(start, '_geoBoundingBox');
    if (!args) throw this.fail(usage, start, this.src.length);
    const points = this.points(args.inner);
    if (!points || points.length !== 2) throw this.fail(usage, start, args.end);
    const token: Token = { value: this.src.slice(start, args.end), start, end: args.end, source: this.src };
    for (const [lat, lng] of points) this.checkPoint(lat, lng, token);
    const [topRight, bottomLeft] = points as [GeoPoint, GeoPoint];
    if (topRight[0] < bottomLeft[0]) {
      throw this.fail(
        `The top latitude \`${topRight[0]}\` is below the bottom latitude \`${bottomLeft[0]}\`.`,
        token.start,
        token.end,
      );
    }
    this.pos = args.end;
    return { type: 'geoBoundingBox', topRight, bottomLeft, token };
  }

  private parseGeoPolygon(start: number): FilterAst {
    const usage =
      'The `_geoPolygon` filter expects at least three points: `_geoPolygon([latitude, longitude], [latitude, longitude], [latitude, longitude], ...)`.';
    const args = this.geoArgs(start, '_geoPolygon');
    if (!args) throw this.fail(usage, start, this.src.length);
    const points = this.points(args.inner);
    if (!points || points.length < 3) throw this.fail(usage, start, args.end);
    const token: Token = { value: this.src.slice(start, args.end), start, end: args.end, source: this.src };
    for (const [lat, lng] of points) this.checkPoint(lat, lng, token);
    this.pos = args.end;
    return { type: 'geoPolygon', points, token };
  }
}

/** Decode the escape whose character follows a backslash at `at`: [text, characters used]. */
function unescapeAt(src: string, at: number, quote: string): [string, number] {
  const c = src[at]!;
  if (c === quote || c === '\\') return [c, 1];
  if (c === 'n') return ['\n', 1];
  if (c === 't') return ['\t', 1];
  if (c === 'r') return ['\r', 1];
  if (c === '0') return ['\0', 1];
  if (c === 'u') {
    const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(src.slice(at + 1));
    if (braced) return [String.fromCodePoint(parseInt(braced[1]!, 16)), 1 + braced[0].length];
    const four = /^[0-9a-fA-F]{4}/.exec(src.slice(at + 1));
    if (four) return [String.fromCharCode(parseInt(four[0], 16)), 5];
  }
  // Unknown escapes are kept verbatim, so that Windows paths and regex-like values survive.
  return ['\\' + c, 1];
}

function parseString(input: string, code: string): FilterAst | null {
  if (input.trim() === '') return null;
  return new Parser(input, code).parse();
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    // Nested too deep to print (the HTTP layer refuses such bodies; an engine caller may not).
    return Array.isArray(value) ? 'a deeply nested array' : String(value);
  }
}

/**
 * Parse a filter in its string or array form. Returns null when there is nothing to filter on
 * (null, empty string, empty array). `errorCode` lets the documents routes report
 * `invalid_document_filter` instead of `invalid_search_filter`.
 */
export function parseFilter(input: unknown, errorCode = 'invalid_search_filter'): FilterAst | null {
  if (input === null || input === undefined) return null;
  if (typeof input === 'string') return parseString(input, errorCode);
  if (!Array.isArray(input)) {
    throw new SearchError(
      errorCode,
      `Invalid syntax for the filter parameter: \`expected String, Array, found: ${describe(input)}\`.`,
    );
  }
  const ands: FilterAst[] = [];
  for (const item of input) {
    if (typeof item === 'string') {
      const ast = parseString(item, errorCode);
      if (ast) ands.push(ast);
    } else if (Array.isArray(item)) {
      const ors: FilterAst[] = [];
      for (const inner of item) {
        if (typeof inner !== 'string') {
          throw new SearchError(
            errorCode,
            `Invalid syntax for the filter parameter: \`expected String, found: ${describe(inner)}\`.`,
          );
        }
        const ast = parseString(inner, errorCode);
        if (ast) ors.push(ast);
      }
      if (ors.length === 1) ands.push(ors[0]!);
      else if (ors.length > 1) ands.push({ type: 'or', children: ors });
    } else {
      throw new SearchError(
        errorCode,
        `Invalid syntax for the filter parameter: \`expected String, Array, found: ${describe(item)}\`.`,
      );
    }
  }
  if (ands.length === 0) return null;
  return ands.length === 1 ? ands[0]! : { type: 'and', children: ands };
}

/** The reference's refusal of a delete-by-filter whose filter has nothing to filter on. */
export function emptyDocumentFilter(): SearchError {
  return new SearchError('invalid_document_filter', 'Sending an empty filter is forbidden.');
}

/** Every field a filter reads (geo rules read `_geo`), with its token for diagnostics. */
export function filterFields(ast: FilterAst): Array<{ field: string; token: Token }> {
  const out: Array<{ field: string; token: Token }> = [];
  const walk = (node: FilterAst): void => {
    switch (node.type) {
      case 'and':
      case 'or':
        node.children.forEach(walk);
        break;
      case 'not':
        walk(node.child);
        break;
      case 'condition':
      case 'in':
        out.push({ field: node.field.value, token: node.field });
        break;
      default:
        out.push({ field: '_geo', token: node.token });
    }
  };
  walk(ast);
  return out;
}
