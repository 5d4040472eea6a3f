/**
 * Evaluates a parsed edition function (parse.ts) against one document, in a sandbox: the only
 * inputs are `doc` (the document, a deep copy) and `context` (read-only), the only output is what
 * `doc` holds at the end (`()` deletes the document), and every run has an operation budget, a
 * time budget and size limits, so that no function can hang the write thread or exhaust memory.
 *
 * Values follow Rhai: integers are 64-bit (`bigint` here) and divide as integers, floats are
 * JavaScript numbers, `()` is null, strings, arrays and object maps. Values are copied when
 * stored (Rhai's value semantics), so `let t = doc.tags; t.push(1)` leaves `doc` unchanged.
 */
import type { Document } from '../types.js';
import type { Expr, Stmt } from './parse.js';
import { inPlaceString, mapMethod, numberMethod, stringMethod } from './library.js';
import {
  arithmetic,
  checkInt,
  Closure,
  compare,
  contains,
  copy,
  debug,
  display,
  EditFunctionRuntimeError,
  equal,
  fail,
  freeze,
  fromJson,
  intArg,
  isMap,
  isRange,
  makeRange,
  newMap,
  position,
  stringArg,
  toJson,
  truthy,
  typeOf,
  type RangeValue,
  type Value,
} from './values.js';

export { EditFunctionRuntimeError, fromJson, toJson, typeOf, type Value };


export interface Budget {
  /** Operations (statements and expressions evaluated) one document may take. */
  maxOperations: number;
  /** Milliseconds one document may take. */
  maxMillis: number;
  maxStringLength: number;
  maxCollectionSize: number;
}

export const DEFAULT_BUDGET: Budget = { maxOperations: 1_000_000, maxMillis: 1_000, maxStringLength: 1 << 20, maxCollectionSize: 100_000 };


class Break {}
class Continue {}
class Return {
  constructor(readonly value: Value) {}
}


// --- evaluation --------------------------------------------------------------------------------

/** Where an assignable expression points: read and write through it. */
interface Place {
  get(): Value;
  set(value: Value): void;
}

export class Scope {
  private readonly vars = new Map<string, { value: Value; constant: boolean }>();
  constructor(readonly parent: Scope | null) {}

  lookup(name: string): { value: Value; constant: boolean } | undefined {
    return this.vars.get(name) ?? this.parent?.lookup(name);
  }

  declare(name: string, value: Value, constant: boolean): void {
    this.vars.set(name, { value, constant });
  }
}

class Run {
  private operations = 0;
  private readonly deadline: number;

  constructor(private readonly budget: Budget) {
    this.deadline = Date.now() + budget.maxMillis;
  }

  private tick(): void {
    this.operations++;
    if (this.operations > this.budget.maxOperations) fail(`Too many operations: the function may take at most ${this.budget.maxOperations} per document`);
    if ((this.operations & 0x3ff) === 0 && Date.now() > this.deadline) fail(`The function took longer than ${this.budget.maxMillis} ms on one document`);
  }

  private sized<T extends Value>(value: T): T {
    if (typeof value === 'string' && value.length > this.budget.maxStringLength) fail(`A string grew past ${this.budget.maxStringLength} characters`);
    if (Array.isArray(value) && value.length > this.budget.maxCollectionSize) fail(`An array grew past ${this.budget.maxCollectionSize} items`);
    if (isMap(value) && Object.keys(value).length > this.budget.maxCollectionSize) fail(`A map grew past ${this.budget.maxCollectionSize} entries`);
    return value;
  }

  block(body: Stmt[], scope: Scope): Value {
    const inner = new Scope(scope);
    let last: Value = null;
    for (const stmt of body) last = this.statement(stmt, inner);
    return last;
  }

  private statement(stmt: Stmt, scope: Scope): Value {
    this.tick();
    switch (stmt.kind) {
      case 'let':
        scope.declare(stmt.name, stmt.init ? copy(this.expr(stmt.init, scope)) : null, stmt.constant);
        return null;
      case 'assign':
        this.assign(stmt.target, stmt.op, stmt.value, scope);
        return null;
      case 'expr':
        return this.expr(stmt.expr, scope);
      case 'while':
        while (stmt.cond === null || truthy(this.expr(stmt.cond, scope), '`while`')) {
          this.tick();
          const outcome = this.loopBody(stmt.body, scope);
          if (outcome === 'break') break;
        }
        return null;
      case 'for':
        this.forLoop(stmt, scope);
        return null;
      case 'break':
        throw new Break();
      case 'continue':
        throw new Continue();
      case 'return':
        throw new Return(stmt.value ? this.expr(stmt.value, scope) : null);
    }
  }

  private loopBody(body: Stmt[], scope: Scope): 'break' | 'next' {
    try {
      this.block(body, scope);
    } catch (signal) {
      if (signal instanceof Break) return 'break';
      if (!(signal instanceof Continue)) throw signal;
    }
    return 'next';
  }

  private forLoop(stmt: Extract<Stmt, { kind: 'for' }>, scope: Scope): void {
    const iterable = this.expr(stmt.iterable, scope);
    let items: Iterable<Value>;
    if (Array.isArray(iterable)) items = [...iterable];
    else if (typeof iterable === 'string') items = [...iterable];
    else if (isRange(iterable)) items = rangeIterator(iterable);
    else if (isMap(iterable)) return void fail('A map cannot be iterated directly: iterate over `map.keys()` or `map.values()`');
    else return void fail(`Cannot iterate over ${typeOf(iterable)}`);
    let counter = 0n;
    for (const item of items) {
      this.tick();
      const inner = new Scope(scope);
      inner.declare(stmt.name, copy(item), false);
      if (stmt.counter) inner.declare(stmt.counter, counter, false);
      counter++;
      if (this.loopBody(stmt.body, inner) === 'break') break;
    }
  }

  private assign(target: Expr, op: string, valueExpr: Expr, scope: Scope): void {
    const place = this.place(target, scope);
    let value = copy(this.expr(valueExpr, scope));
    if (op !== '=') value = this.binaryValue(op.slice(0, -1), place.get(), value);
    place.set(this.sized(value));
  }

  private place(target: Expr, scope: Scope): Place {
    switch (target.kind) {
      case 'var': {
        const variable = scope.lookup(target.name);
        if (!variable) return fail(`Variable not found: ${target.name}`);
        return {
          get: () => variable.value,
          set: (value) => {
            if (variable.constant) fail(`Cannot modify the constant \`${target.name}\``);
            variable.value = value;
          },
        };
      }
      case 'prop': {
        const container = this.place(target.target, scope).get();
        if (!isMap(container)) return fail(`Cannot set the property \`${target.name}\` of ${typeOf(container)}`);
        return {
          get: () => (Object.prototype.hasOwnProperty.call(container, target.name) ? container[target.name]! : null),
          set: (value) => {
            if (Object.isFrozen(container)) fail('Cannot modify `context`: it is read-only');
            container[target.name] = value;
            this.sized(container);
          },
        };
      }
      case 'index': {
        const container = this.place(target.target, scope).get();
        const index = this.expr(target.index, scope);
        if (Array.isArray(container)) {
          const at = this.arrayIndex(container, index);
          return {
            get: () => container[at]!,
            set: (value) => {
              if (Object.isFrozen(container)) fail('Cannot modify `context`: it is read-only');
              container[at] = value;
            },
          };
        }
        if (isMap(container)) {
          const key = stringArg(index, 'a map index');
          return { get: () => container[key] ?? null, set: (value) => this.place({ kind: 'prop', target: target.target, name: key, optional: false }, scope).set(value) };
        }
        return fail(`Cannot index into ${typeOf(container)}`);
      }
      default:
        return { get: () => this.expr(target, scope), set: () => fail('This expression cannot be assigned to') };
    }
  }

  private arrayIndex(array: Value[], index: Value): number {
    const i = intArg(index, 'an array index');
    const at = i < 0 ? array.length + i : i;
    if (at < 0 || at >= array.length) fail(`Array index ${i} out of bounds for an array of ${array.length} items`);
    return at;
  }

  expr(expr: Expr, scope: Scope): Value {
    this.tick();
    switch (expr.kind) {
      case 'literal':
        return expr.value;
      case 'template':
        return this.sized(expr.parts.map((part) => (typeof part === 'string' ? part : display(this.expr(part, scope)))).join(''));
      case 'array':
        return this.sized(expr.items.map((item) => copy(this.expr(item, scope))));
      case 'map': {
        const map = newMap();
        for (const [key, value] of expr.entries) map[key] = copy(this.expr(value, scope));
        return map;
      }
      case 'var': {
        const variable = scope.lookup(expr.name);
        if (!variable) return fail(`Variable not found: ${expr.name}`);
        return variable.value;
      }
      case 'prop':
        return this.property(this.expr(expr.target, scope), expr.name, expr.optional);
      case 'index': {
        const container = this.expr(expr.target, scope);
        const index = this.expr(expr.index, scope);
        if (Array.isArray(container)) return container[this.arrayIndex(container, index)]!;
        if (isMap(container)) return container[stringArg(index, 'a map index')] ?? null;
        if (typeof container === 'string') {
          const chars = [...container];
          const i = intArg(index, 'a string index');
          const at = i < 0 ? chars.length + i : i;
          if (at < 0 || at >= chars.length) fail(`String index ${i} out of bounds for a string of ${chars.length} characters`);
          return chars[at]!;
        }
        return fail(`Cannot index into ${typeOf(container)}`);
      }
      case 'call':
        return this.call(expr.name, expr.args.map((arg) => this.expr(arg, scope)));
      case 'method':
        return this.method(expr, scope);
      case 'unary': {
        const value = this.expr(expr.operand, scope);
        if (expr.op === '!') return !truthy(value, '`!`');
        if (typeof value === 'bigint') return expr.op === '-' ? checkInt(-value) : value;
        if (typeof value === 'number') return expr.op === '-' ? -value : value;
        return fail(`Operator \`${expr.op}\` is not defined for ${typeOf(value)}`);
      }
      case 'binary':
        return this.binary(expr, scope);
      case 'if':
        if (truthy(this.expr(expr.cond, scope), '`if`')) return this.block(expr.then, scope);
        return expr.otherwise ? this.block(expr.otherwise, scope) : null;
      case 'block':
        return this.block(expr.body, scope);
      case 'closure':
        return new Closure(expr.params, expr.body, scope);
    }
  }

  /** Call a closure: its parameters in a scope of its own, over the scope it was written in. */
  invoke(fn: Value, args: Value[]): Value {
    if (!(fn instanceof Closure)) return fail(`Expecting a closure, found ${typeOf(fn)}`);
    if (args.length < fn.params.length) fail(`The closure expects ${fn.params.length} argument(s), found ${args.length}`);
    const scope = new Scope(fn.scope);
    fn.params.forEach((name, i) => scope.declare(name, copy(args[i]!), false));
    try {
      return this.expr(fn.body, scope);
    } catch (signal) {
      if (signal instanceof Return) return signal.value;
      throw signal;
    }
  }

  private property(target: Value, name: string, optional: boolean): Value {
    if (target === null && optional) return null;
    if (isMap(target)) return Object.prototype.hasOwnProperty.call(target, name) ? target[name]! : null;
    if ((typeof target === 'string' || Array.isArray(target)) && name === 'len') return BigInt(typeof target === 'string' ? [...target].length : target.length);
    if ((typeof target === 'string' || Array.isArray(target)) && name === 'is_empty') return target.length === 0;
    return fail(`Property \`${name}\` not found on ${typeOf(target)}`);
  }

  private binary(expr: Extract<Expr, { kind: 'binary' }>, scope: Scope): Value {
    const left = this.expr(expr.left, scope);
    switch (expr.op) {
      case '&&':
        return truthy(left, '`&&`') && truthy(this.expr(expr.right, scope), '`&&`');
      case '||':
        return truthy(left, '`||`') || truthy(this.expr(expr.right, scope), '`||`');
      case '??':
        return left === null ? this.expr(expr.right, scope) : left;
    }
    return this.binaryValue(expr.op, left, this.expr(expr.right, scope));
  }

  private binaryValue(op: string, left: Value, right: Value): Value {
    switch (op) {
      case '==':
        return equal(left, right);
      case '!=':
        return !equal(left, right);
      case '<':
      case '<=':
      case '>':
      case '>=':
        return compare(op, left, right);
      case 'in':
        return contains(right, left);
      case '..':
      case '..=':
        return makeRange(left, right, op === '..=');
      case '&':
      case '|':
      case '^':
        if (typeof left === 'boolean' && typeof right === 'boolean') return op === '&' ? left && right : op === '|' ? left || right : left !== right;
        if (typeof left === 'bigint' && typeof right === 'bigint') return op === '&' ? left & right : op === '|' ? left | right : left ^ right;
        return fail(`Operator \`${op}\` is not defined for ${typeOf(left)} and ${typeOf(right)}`);
      case '+':
        if (typeof left === 'string' || typeof right === 'string') return this.sized(display(left) + display(right));
        if (Array.isArray(left) && Array.isArray(right)) return this.sized([...left, ...right.map(copy)]);
        if (isMap(left) && isMap(right)) return this.sized(Object.assign(newMap(), left, copy(right)));
        return arithmetic(op, left, right);
      default:
        return arithmetic(op, left, right);
    }
  }

  private call(name: string, args: Value[]): Value {
    const arity = (n: number) => {
      if (args.length !== n) fail(`Function \`${name}\` expects ${n} argument(s), found ${args.length}`);
    };
    switch (name) {
      case 'type_of':
        arity(1);
        return typeOf(args[0]!);
      case 'to_string':
        arity(1);
        return display(args[0]!);
      case 'to_int':
      case 'to_float':
      case 'abs':
      case 'floor':
      case 'ceiling':
      case 'round':
      case 'sqrt':
      case 'len':
      case 'is_empty':
        arity(1);
        return this.methodOn(args[0]!, name, []);
      case 'parse_int': {
        arity(1);
        const text = stringArg(args[0]!, name).trim();
        if (!/^[+-]?\d+$/.test(text)) fail(`Cannot parse \`${text}\` as an integer`);
        return checkInt(BigInt(text));
      }
      case 'parse_float': {
        arity(1);
        const parsed = Number(stringArg(args[0]!, name).trim());
        if (Number.isNaN(parsed)) fail(`Cannot parse \`${String(args[0])}\` as a float`);
        return parsed;
      }
      case 'min':
      case 'max': {
        arity(2);
        const [a, b] = args as [Value, Value];
        const less = compare('<', a, b);
        return name === 'min' ? (less ? a : b) : less ? b : a;
      }
      case 'print':
      case 'debug':
        return null;
      default:
        return fail(`Function not found: ${name}`);
    }
  }

  private method(expr: Extract<Expr, { kind: 'method' }>, scope: Scope): Value {
    const args = expr.args.map((arg) => copy(this.expr(arg, scope)));
    const assignable = expr.target.kind === 'var' || expr.target.kind === 'prop' || expr.target.kind === 'index';
    const place = assignable ? this.place(expr.target, scope) : null;
    const target = place ? place.get() : this.expr(expr.target, scope);
    if (target === null && expr.target.kind === 'prop' && expr.target.optional) return null;
    // in-place string methods rewrite the string where it is stored
    const rewritten = typeof target === 'string' ? inPlaceString(target, expr.name, args) : undefined;
    if (rewritten !== undefined) {
      // on a temporary string (a literal, a call's result) the change has nowhere to go, as in Rhai
      place?.set(this.sized(rewritten));
      return null;
    }
    if (target !== null && typeof target === 'object' && Object.isFrozen(target) && MUTATING.has(expr.name)) fail('Cannot modify `context`: it is read-only');
    const result = this.methodOn(target, expr.name, args);
    if (target !== null && typeof target === 'object') this.sized(target);
    return result;
  }

  methodOn(target: Value, name: string, args: Value[]): Value {
    const arity = (...counts: number[]) => {
      if (!counts.includes(args.length)) fail(`\`${name}\` expects ${counts.join(' or ')} argument(s), found ${args.length}`);
    };
    if (name === 'to_string' || name === 'to_debug') {
      arity(0);
      return name === 'to_string' ? display(target) : debug(target);
    }
    if (typeof target === 'string') return stringMethod(target, name, args, arity);
    if (typeof target === 'bigint' || typeof target === 'number') return numberMethod(target, name, arity);
    if (Array.isArray(target)) return this.arrayMethod(target, name, args, arity);
    if (isMap(target)) return mapMethod(target, name, args, arity);
    if (isRange(target) && name === 'contains') return contains(target, args[0] ?? null);
    if (target instanceof Closure && name === 'call') return this.invoke(target, args);
    return fail(`Function not found: ${name} (${typeOf(target)})`);
  }

  private arrayMethod(array: Value[], name: string, args: Value[], arity: (...n: number[]) => void): Value {
    switch (name) {
      case 'len':
        arity(0);
        return BigInt(array.length);
      case 'is_empty':
        arity(0);
        return array.length === 0;
      case 'push':
        arity(1);
        array.push(args[0]!);
        return null;
      case 'append':
        arity(1);
        if (!Array.isArray(args[0])) fail('`append` expects an array');
        array.push(...(args[0] as Value[]));
        return null;
      case 'pop':
        arity(0);
        return array.pop() ?? null;
      case 'shift':
        arity(0);
        return array.shift() ?? null;
      case 'insert':
        arity(2);
        array.splice(position(intArg(args[0]!, name), array.length), 0, args[1]!);
        return null;
      case 'remove': {
        arity(1);
        const i = intArg(args[0]!, name);
        const at = i < 0 ? array.length + i : i;
        return at >= 0 && at < array.length ? array.splice(at, 1)[0]! : null;
      }
      case 'clear':
        arity(0);
        array.length = 0;
        return null;
      case 'reverse':
        arity(0);
        array.reverse();
        return null;
      case 'sort':
        arity(0, 1);
        array.sort((a, b) => (args.length ? sortOrder(this.invoke(args[0]!, [a, b])) : compare('<', a, b) ? -1 : compare('>', a, b) ? 1 : 0));
        return null;
      case 'dedup': {
        arity(0);
        const kept = array.filter((item, i) => i === 0 || !equal(item, array[i - 1]!));
        array.splice(0, array.length, ...kept);
        return null;
      }
      case 'contains':
        arity(1);
        return contains(array, args[0]!);
      case 'index_of': {
        arity(1);
        return BigInt(array.findIndex((item) => equal(item, args[0]!)));
      }
      case 'get': {
        arity(1);
        const i = intArg(args[0]!, name);
        const at = i < 0 ? array.length + i : i;
        return array[at] ?? null;
      }
      case 'extract': {
        arity(1, 2);
        const start = position(intArg(args[0]!, name), array.length);
        const end = args.length > 1 ? Math.min(array.length, start + Math.max(0, intArg(args[1]!, name))) : array.length;
        return array.slice(start, end).map(copy);
      }
      case 'map':
        arity(1);
        return this.sized(array.map((item, i) => this.invoke(args[0]!, [item, BigInt(i)])));
      case 'filter':
        arity(1);
        return array.filter((item, i) => truthy(this.invoke(args[0]!, [item, BigInt(i)]), '`filter`')).map(copy);
      case 'retain': {
        arity(1);
        const kept = array.filter((item, i) => truthy(this.invoke(args[0]!, [item, BigInt(i)]), '`retain`'));
        array.splice(0, array.length, ...kept);
        return null;
      }
      case 'all':
        arity(1);
        return array.every((item, i) => truthy(this.invoke(args[0]!, [item, BigInt(i)]), '`all`'));
      case 'any':
      case 'some':
        arity(1);
        return array.some((item, i) => truthy(this.invoke(args[0]!, [item, BigInt(i)]), `\`${name}\``));
      case 'find':
        arity(1);
        return array.find((item, i) => truthy(this.invoke(args[0]!, [item, BigInt(i)]), '`find`')) ?? null;
      case 'reduce': {
        arity(1, 2);
        let accumulator: Value = args.length > 1 ? args[1]! : null;
        array.forEach((item, i) => {
          accumulator = this.invoke(args[0]!, [accumulator, item, BigInt(i)]);
        });
        return accumulator;
      }
      case 'join': {
        arity(0, 1);
        return this.sized(array.map(display).join(args.length ? stringArg(args[0]!, name) : ''));
      }
      default:
        return fail(`Function not found: ${name} (array)`);
    }
  }
}

/** A comparator's answer: a negative, zero or positive integer (or a boolean `a < b`). */
function sortOrder(value: Value): number {
  if (typeof value === 'bigint') return value < 0n ? -1 : value > 0n ? 1 : 0;
  if (typeof value === 'boolean') return value ? -1 : 1;
  return fail(`A sort comparator must return an integer, found ${typeOf(value)}`);
}

const MUTATING = new Set(['retain', 'push', 'append', 'pop', 'shift', 'insert', 'remove', 'clear', 'reverse', 'sort', 'dedup', 'mixin', 'fill_with']);

function* rangeIterator(range: RangeValue): Generator<Value> {
  for (let i = range.start; i < range.end; i++) yield i;
}


/**
 * Run a parsed function on one document. Returns the document as the function left it, or null
 * when the function set `doc` to `()` (delete it). Throws EditFunctionRuntimeError.
 */
export function runEditFunction(
  program: Stmt[],
  document: Document,
  context: Record<string, unknown> | null,
  budget: Budget = DEFAULT_BUDGET,
): { document: unknown } {
  const run = new Run(budget);
  const scope = new Scope(null);
  scope.declare('doc', fromJson(document), false);
  scope.declare('context', context === null ? null : freeze(fromJson(context)), true);
  try {
    run.block(program, scope);
  } catch (signal) {
    if (signal instanceof Break || signal instanceof Continue) fail('`break` or `continue` outside of a loop');
    if (signal instanceof RangeError) fail('The function nests too deeply');
    if (!(signal instanceof Return)) throw signal;
  }
  const doc = scope.lookup('doc')!.value;
  return { document: doc === null ? null : toJson(doc) };
}
