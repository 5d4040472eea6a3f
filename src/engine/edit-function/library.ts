/**
 * The built-in methods of strings, numbers and maps in edition functions (array methods, which
 * may call closures, live with the evaluator in run.ts).
 */
import { checkInt, contains, copy, fail, intArg, isMap, position, stringArg, type MapValue, type Value } from './values.js';

/** The in-place string methods of Rhai: the new string, or undefined when `name` is not one. */
export function inPlaceString(s: string, name: string, args: Value[]): string | undefined {
  switch (name) {
    case 'trim':
      return s.trim();
    case 'trim_start':
      return s.trimStart();
    case 'trim_end':
      return s.trimEnd();
    case 'make_upper':
      return s.toUpperCase();
    case 'make_lower':
      return s.toLowerCase();
    case 'clear':
      return '';
    case 'replace':
      if (args.length !== 2) fail('`replace` expects 2 arguments');
      return s.split(stringArg(args[0]!, name)).join(stringArg(args[1]!, name));
    case 'truncate':
      if (args.length !== 1) fail('`truncate` expects 1 argument');
      return [...s].slice(0, Math.max(0, intArg(args[0]!, name))).join('');
    case 'pad': {
      if (args.length !== 2) fail('`pad` expects 2 arguments');
      const length = intArg(args[0]!, name);
      const fill = stringArg(args[1]!, name);
      let out = s;
      while ([...out].length < length && fill !== '') out += fill;
      return [...out].slice(0, Math.max(length, [...s].length)).join('');
    }
    default:
      return undefined;
  }
}

export function stringMethod(s: string, name: string, args: Value[], arity: (...n: number[]) => void): Value {
  const chars = () => [...s];
  switch (name) {
    case 'len':
      arity(0);
      return BigInt(chars().length);
    case 'is_empty':
      arity(0);
      return s.length === 0;
    case 'to_upper':
      arity(0);
      return s.toUpperCase();
    case 'to_lower':
      arity(0);
      return s.toLowerCase();
    case 'contains':
      arity(1);
      return contains(s, args[0]!);
    case 'starts_with':
      arity(1);
      return s.startsWith(stringArg(args[0]!, name));
    case 'ends_with':
      arity(1);
      return s.endsWith(stringArg(args[0]!, name));
    case 'index_of': {
      arity(1, 2);
      const all = chars();
      const needle = stringArg(args[0]!, name);
      const from = args.length > 1 ? position(intArg(args[1]!, name), all.length) : 0;
      const at = all.slice(from).join('').indexOf(needle);
      return BigInt(at < 0 ? -1 : from + [...all.slice(from).join('').slice(0, at)].length);
    }
    case 'sub_string': {
      arity(1, 2);
      const all = chars();
      const start = position(intArg(args[0]!, name), all.length);
      const end = args.length > 1 ? Math.min(all.length, start + Math.max(0, intArg(args[1]!, name))) : all.length;
      return all.slice(start, end).join('');
    }
    case 'split':
      arity(0, 1);
      return args.length === 0 ? s.split(/\s+/).filter((part) => part !== '') : s.split(stringArg(args[0]!, name));
    case 'to_chars':
    case 'chars':
      arity(0);
      return chars();
    case 'get': {
      arity(1);
      const all = chars();
      const i = intArg(args[0]!, name);
      return all[i < 0 ? all.length + i : i] ?? null;
    }
    case 'to_int':
    case 'parse_int': {
      arity(0);
      if (!/^[+-]?\d+$/.test(s.trim())) fail(`Cannot parse \`${s}\` as an integer`);
      return checkInt(BigInt(s.trim()));
    }
    case 'to_float':
    case 'parse_float': {
      arity(0);
      const parsed = Number(s.trim());
      if (s.trim() === '' || Number.isNaN(parsed)) fail(`Cannot parse \`${s}\` as a float`);
      return parsed;
    }
    default:
      return fail(`Function not found: ${name} (string)`);
  }
}

export function numberMethod(n: bigint | number, name: string, arity: (...n: number[]) => void): Value {
  arity(0);
  switch (name) {
    case 'abs':
      return typeof n === 'bigint' ? checkInt(n < 0n ? -n : n) : Math.abs(n);
    case 'to_int':
      if (typeof n === 'bigint') return n;
      if (!Number.isFinite(n)) fail(`Cannot convert ${n} to an integer`);
      return checkInt(BigInt(Math.trunc(n)));
    case 'to_float':
      return Number(n);
    case 'floor':
      return typeof n === 'bigint' ? Number(n) : Math.floor(n);
    case 'ceiling':
      return typeof n === 'bigint' ? Number(n) : Math.ceil(n);
    case 'round':
      return typeof n === 'bigint' ? Number(n) : Math.round(n);
    case 'sqrt':
      return Math.sqrt(Number(n));
    case 'is_zero':
      return Number(n) === 0;
    default:
      return fail(`Function not found: ${name} (${typeof n === 'bigint' ? 'i64' : 'f64'})`);
  }
}

export function mapMethod(map: MapValue, name: string, args: Value[], arity: (...n: number[]) => void): Value {
  switch (name) {
    case 'len':
      arity(0);
      return BigInt(Object.keys(map).length);
    case 'is_empty':
      arity(0);
      return Object.keys(map).length === 0;
    case 'keys':
      arity(0);
      return Object.keys(map);
    case 'values':
      arity(0);
      return Object.values(map).map(copy);
    case 'contains':
      arity(1);
      return contains(map, args[0]!);
    case 'get':
      arity(1);
      return map[stringArg(args[0]!, name)] ?? null;
    case 'remove': {
      arity(1);
      const key = stringArg(args[0]!, name);
      const value = Object.prototype.hasOwnProperty.call(map, key) ? map[key]! : null;
      delete map[key];
      return value;
    }
    case 'clear':
      arity(0);
      for (const key of Object.keys(map)) delete map[key];
      return null;
    case 'mixin':
    case 'fill_with':
      arity(1);
      if (!isMap(args[0]!)) fail(`\`${name}\` expects a map`);
      for (const [key, value] of Object.entries(args[0] as MapValue)) if (name === 'mixin' || !(key in map)) map[key] = value;
      return null;
    default:
      return fail(`Function not found: ${name} (map)`);
  }
}

