/**
 * The values of edition functions (see run.ts): Rhai's model over JavaScript values. Integers are
 * 64-bit (`bigint`), floats are numbers, `()` is null, object maps have no prototype (so that
 * `__proto__` or `constructor` are plain keys), ranges and closures are their own kinds.
 */
import type { Expr, LiteralValue } from './parse.js';
import type { Scope } from './run.js';

export type Value = LiteralValue | Value[] | MapValue | RangeValue | Closure;
export type MapValue = { [key: string]: Value };
export interface RangeValue {
  range: true;
  start: bigint;
  end: bigint;
}

/** A closure `|x| …` with the scope it was written in; it can be called, never stored in a document. */
export class Closure {
  constructor(
    readonly params: string[],
    readonly body: Expr,
    readonly scope: Scope,
  ) {}
}


export class EditFunctionRuntimeError extends Error {
  override name = 'EditFunctionRuntimeError';
}


const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

export const fail = (message: string): never => {
  throw new EditFunctionRuntimeError(message);
};


export function isMap(value: Value): value is MapValue {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !isRange(value) && !(value instanceof Closure);
}

export function isRange(value: Value): value is RangeValue {
  return value !== null && typeof value === 'object' && (value as RangeValue).range === true && Object.getPrototypeOf(value) === RangeProto;
}
const RangeProto = {};

export function typeOf(value: Value): string {
  if (value === null) return '()';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'bigint') return 'i64';
  if (typeof value === 'number') return 'f64';
  if (typeof value === 'string') return 'string';
  if (Array.isArray(value)) return 'array';
  if (isRange(value)) return 'range';
  if (value instanceof Closure) return 'Fn';
  return 'map';
}

export function newMap(): MapValue {
  return Object.create(null) as MapValue;
}

/** JSON (a stored document, the context) into function values. */
export function fromJson(json: unknown): Value {
  if (json === null || json === undefined) return null;
  if (typeof json === 'number') return Number.isSafeInteger(json) ? BigInt(json) : json;
  if (typeof json === 'boolean' || typeof json === 'string') return json;
  if (Array.isArray(json)) return json.map(fromJson);
  const out = newMap();
  for (const [key, value] of Object.entries(json as Record<string, unknown>)) out[key] = fromJson(value);
  return out;
}

/** Function values back to JSON for storage. */
export function toJson(value: Value): unknown {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map(toJson);
  if (isRange(value)) return rangeItems(value).map(toJson);
  if (value instanceof Closure) return fail('A closure cannot be stored in a document');
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // a plain object: `__proto__` must stay a property, never become the prototype
    Object.defineProperty(out, key, { value: toJson(item), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export function copy(value: Value): Value {
  if (Array.isArray(value)) return value.map(copy);
  if (isMap(value)) {
    const out = newMap();
    for (const [key, item] of Object.entries(value)) out[key] = copy(item);
    return out;
  }
  return value;
}

export function freeze(value: Value): Value {
  if (value !== null && typeof value === 'object' && !(value instanceof Closure)) {
    for (const item of Object.values(value)) freeze(item as Value);
    Object.freeze(value);
  }
  return value;
}

export function display(value: Value): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) ? value.toFixed(1) : String(value);
  if (typeof value === 'boolean') return String(value);
  return debug(value);
}

export function debug(value: Value): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(debug).join(', ')}]`;
  if (isRange(value)) return `${value.start}..${value.end}`;
  if (value instanceof Closure) return `Fn(|${value.params.join(', ')}|)`;
  if (isMap(value)) return `#{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${debug(v)}`).join(', ')}}`;
  return value === null ? '()' : display(value);
}

export function equal(a: Value, b: Value): boolean {
  if (typeof a === 'bigint' && typeof b === 'number') return Number(a) === b;
  if (typeof a === 'number' && typeof b === 'bigint') return a === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => equal(item, b[i]!));
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && equal(a[k]!, b[k]!));
  }
  return a === b;
}

export function rangeItems(range: RangeValue): bigint[] {
  const out: bigint[] = [];
  for (let i = range.start; i < range.end; i++) out.push(i);
  return out;
}

export function makeRange(start: Value, end: Value, inclusive: boolean): RangeValue {
  if (typeof start !== 'bigint' || typeof end !== 'bigint') fail(`A range needs integer bounds, found ${typeOf(start)} and ${typeOf(end)}`);
  const range = Object.create(RangeProto) as RangeValue;
  range.range = true;
  range.start = start as bigint;
  range.end = inclusive ? (end as bigint) + 1n : (end as bigint);
  return range;
}

export function checkInt(value: bigint): bigint {
  if (value < I64_MIN || value > I64_MAX) fail('Arithmetic overflow');
  return value;
}

function toNumber(value: Value, op: string): number | bigint {
  if (typeof value === 'bigint' || typeof value === 'number') return value;
  return fail(`Operator \`${op}\` is not defined for ${typeOf(value)}`);
}

export function arithmetic(op: string, a: Value, b: Value): Value {
  const x = toNumber(a, op);
  const y = toNumber(b, op);
  if (typeof x === 'bigint' && typeof y === 'bigint') {
    switch (op) {
      case '+':
        return checkInt(x + y);
      case '-':
        return checkInt(x - y);
      case '*':
        return checkInt(x * y);
      case '/':
        if (y === 0n) fail('Division by zero');
        return checkInt(x / y);
      case '%':
        if (y === 0n) fail('Division by zero');
        return x % y;
      case '**':
        if (y < 0n) fail('Integer raised to a negative power');
        if (y > 64n && x !== 0n && x !== 1n && x !== -1n) fail('Arithmetic overflow');
        return checkInt(x ** y);
    }
  }
  const fx = Number(x);
  const fy = Number(y);
  switch (op) {
    case '+':
      return fx + fy;
    case '-':
      return fx - fy;
    case '*':
      return fx * fy;
    case '/':
      return fx / fy;
    case '%':
      return fx % fy;
    default:
      return fx ** fy;
  }
}

export function compare(op: string, a: Value, b: Value): boolean {
  let order: number;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    order = typeof a === 'bigint' && typeof b === 'bigint' ? (a < b ? -1 : a > b ? 1 : 0) : Math.sign(Number(a) - Number(b));
  } else if (typeof a === 'string' && typeof b === 'string') order = a < b ? -1 : a > b ? 1 : 0;
  else return fail(`Operator \`${op}\` is not defined for ${typeOf(a)} and ${typeOf(b)}`);
  switch (op) {
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    default:
      return order >= 0;
  }
}

export function truthy(value: Value, what: string): boolean {
  if (typeof value !== 'boolean') fail(`${what} expects a boolean, found ${typeOf(value)}`);
  return value as boolean;
}

export function contains(haystack: Value, needle: Value): boolean {
  if (Array.isArray(haystack)) return haystack.some((item) => equal(item, needle));
  if (typeof haystack === 'string') {
    if (typeof needle !== 'string') fail(`A string can only contain a string or a character, not ${typeOf(needle)}`);
    return haystack.includes(needle as string);
  }
  if (isMap(haystack)) {
    if (typeof needle !== 'string') fail(`A map's keys are strings, not ${typeOf(needle)}`);
    return Object.prototype.hasOwnProperty.call(haystack, needle as string);
  }
  if (isRange(haystack)) return typeof needle === 'bigint' && needle >= haystack.start && needle < haystack.end;
  return fail(`\`in\` is not defined for ${typeOf(haystack)}`);
}

export function intArg(value: Value, name: string): number {
  if (typeof value !== 'bigint') fail(`\`${name}\` expects an integer, found ${typeOf(value)}`);
  return Number(value);
}

export function stringArg(value: Value, name: string): string {
  if (typeof value !== 'string') fail(`\`${name}\` expects a string, found ${typeOf(value)}`);
  return value as string;
}

/** A position that may count from the end (negative), clamped into the string or array. */
export function position(index: number, length: number): number {
  const at = index < 0 ? length + index : index;
  return Math.max(0, Math.min(length, at));
}

