/** The edition-function language (the documented Rhai subset) and its sandbox limits. */
import { describe, expect, test } from 'vitest';
import { EditFunctionSyntaxError, parseEditFunction } from '../../src/engine/edit-function/parse.js';
import { DEFAULT_BUDGET, runEditFunction } from '../../src/engine/edit-function/run.js';

function edit(source: string, doc: Record<string, unknown>, context: Record<string, unknown> | null = null, budget = DEFAULT_BUDGET) {
  return runEditFunction(parseEditFunction(source), doc, context, budget).document as Record<string, unknown> | null;
}

describe('the documented examples', () => {
  test('set fields, upper-case, concatenate, interpolate', () => {
    expect(edit('doc.title = doc.title.to_upper()', { id: 1, title: 'dune' })).toEqual({ id: 1, title: 'DUNE' });
    expect(edit('doc.title_upper = doc.title.to_upper()', { id: 1, title: 'a' })).toEqual({ id: 1, title: 'a', title_upper: 'A' });
    expect(edit('doc.full_name = `${doc.first_name} ${doc.last_name}`', { id: 1, first_name: 'Ada', last_name: 'Lovelace' })).toMatchObject({
      full_name: 'Ada Lovelace',
    });
    expect(edit('doc.fullName = doc.firstName + " " + doc.lastName', { id: 1, firstName: 'A', lastName: 'B' })).toMatchObject({ fullName: 'A B' });
  });

  test('remove a field, conditionals, context, arithmetic', () => {
    expect(edit('doc.remove("temporary_field")', { id: 1, temporary_field: 1, kept: 2 })).toEqual({ id: 1, kept: 2 });
    const availability = 'if doc.stock == 0 { doc.availability = "out_of_stock" } else { doc.availability = "in_stock" }';
    expect(edit(availability, { id: 1, stock: 0 })).toMatchObject({ availability: 'out_of_stock' });
    expect(edit(availability, { id: 1, stock: 3 })).toMatchObject({ availability: 'in_stock' });
    const discount = 'if context.discounted_ids.contains(doc.id) { doc.price = doc.price * 0.8 }';
    expect(edit(discount, { id: 42, price: 100 }, { discounted_ids: [1, 42] })).toMatchObject({ price: 80 });
    expect(edit(discount, { id: 7, price: 100 }, { discounted_ids: [1, 42] })).toMatchObject({ price: 100 });
    expect(edit('doc.tags = context.tags', { id: 1 }, { tags: ['featured', '2026'] })).toMatchObject({ tags: ['featured', '2026'] });
    expect(edit('doc.count += 1; doc.half = doc.count / 2; doc.rest = doc.count % 2', { id: 1, count: 4 })).toMatchObject({ count: 5, half: 2, rest: 1 });
  });

  test('`doc = ()` deletes the document', () => {
    expect(edit('if doc.id % 2 == 0 { doc = () }', { id: 2 })).toBeNull();
    expect(edit('if doc.id % 2 == 0 { doc = () }', { id: 3 })).toEqual({ id: 3 });
  });
});

describe('the language', () => {
  test('variables, loops, arrays, maps, strings', () => {
    const source = `
      let total = 0;
      for x in doc.values { total += x }
      let i = 0;
      while i < 3 { i += 1; if i == 2 { continue } }
      let words = [];
      for (w, n) in doc.title.split(" ") { words.push(\`\${n}:\${w}\`) }
      doc.total = total;
      doc.i = i;
      doc.words = words;
      doc.meta = #{ count: doc.values.len(), "first": doc.values[0], last: doc.values[-1] };
      doc.range = 0;
      for n in 1..=4 { doc.range += n }
      doc.trimmed = "  x  ";
      doc.trimmed.trim();
      doc.kind = type_of(doc.total) + "/" + type_of(1.5) + "/" + type_of(());
      doc.maybe = doc.missing ?? "default";
      doc.has = "b" in ["a", "b"] && !("z" in doc.title);
      return;
      doc.never = true;
    `;
    expect(edit(source, { id: 1, values: [1, 2, 3], title: 'a b' })).toEqual({
      id: 1,
      values: [1, 2, 3],
      title: 'a b',
      total: 6,
      i: 3,
      words: ['0:a', '1:b'],
      meta: { count: 3, first: 1, last: 3 },
      range: 10,
      trimmed: 'x',
      kind: 'i64/f64/()',
      maybe: 'default',
      has: true,
    });
  });

  test('closures: map, filter, retain, reduce, all/any, find, sort with a comparator, call', () => {
    const source = `
      let factor = context.factor;
      doc.doubled = doc.n.map(|x| x * factor);
      doc.even = doc.n.filter(|x| x % 2 == 0);
      doc.sum = doc.n.reduce(|acc, x| acc + x, 0);
      doc.all = doc.n.all(|x| x > 0);
      doc.any = doc.n.any(|x| x > 2);
      doc.first = doc.n.find(|x| x > 1);
      doc.tags.retain(|t| t != "drop");
      doc.n.sort(|a, b| b - a);
      let greet = |name| \`hi \${name}\`;
      doc.greeting = greet.call("ada");
    `;
    expect(edit(source, { id: 1, n: [1, 2, 3], tags: ['keep', 'drop'] }, { factor: 10 })).toEqual({
      id: 1,
      n: [3, 2, 1],
      tags: ['keep'],
      doubled: [10, 20, 30],
      even: [2],
      sum: 6,
      all: true,
      any: true,
      first: 2,
      greeting: 'hi ada',
    });
    expect(() => edit('doc.f = |x| x', { id: 1 })).toThrow(/A closure cannot be stored/);
  });

  test('values are copied when stored: a local copy does not change the document', () => {
    expect(edit('let t = doc.tags; t.push("x"); doc.n = t.len()', { id: 1, tags: ['a'] })).toEqual({ id: 1, tags: ['a'], n: 2 });
  });

  test('integers divide as integers, floats stay floats, overflow is an error', () => {
    expect(edit('doc.a = 7 / 2; doc.b = 7.0 / 2; doc.c = 2 ** 10', { id: 1 })).toMatchObject({ a: 3, b: 3.5, c: 1024 });
    expect(() => edit('doc.a = 9223372036854775807 + 1', { id: 1 })).toThrow(/overflow/);
    expect(() => edit('doc.a = 1 / 0', { id: 1 })).toThrow(/Division by zero/);
  });

  test('runtime errors name the problem', () => {
    expect(() => edit('doc.a = undefined_var', { id: 1 })).toThrow(/Variable not found: undefined_var/);
    expect(() => edit('doc.a = doc.id.to_upper()', { id: 1 })).toThrow(/Function not found: to_upper \(i64\)/);
    expect(() => edit('if doc.id { doc.a = 1 }', { id: 1 })).toThrow(/expects a boolean/);
    expect(() => edit('doc.a = [1][5]', { id: 1 })).toThrow(/out of bounds/);
    expect(() => edit('context.x = 1', { id: 1 }, { x: 0 })).toThrow(/read-only/);
    expect(() => edit('context.list.push(1)', { id: 1 }, { list: [] })).toThrow(/read-only/);
    expect(() => edit('context = 1', { id: 1 }, {})).toThrow(/constant/);
  });
});

describe('outside the subset', () => {
  test.each([
    ['fn f() { 1 }', /function definitions/],
    ['doc.a = [1].map(|x x)', /Expecting `,` or `\|`/],
    ['switch doc.a { 1 => 2 }', /switch/],
    ['import "x" as y;', /import/],
    ['doc.a = ', /end of the function/],
    ['doc.a = "unterminated', /Unterminated string/],
    ['doc.a = 1 doc.b = 2', /Expecting `;`/],
  ])('%s is a syntax error with its position', (source, message) => {
    let error: unknown;
    try {
      parseEditFunction(source);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EditFunctionSyntaxError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/\(line \d+, position \d+\)$/);
  });
});

describe('the sandbox', () => {
  test('an endless loop stops at the operation budget', () => {
    expect(() => edit('loop { doc.n = 1 }', { id: 1 }, null, { ...DEFAULT_BUDGET, maxOperations: 10_000 })).toThrow(/Too many operations/);
  });

  test('a slow function stops at the time budget', () => {
    const budget = { ...DEFAULT_BUDGET, maxOperations: Number.MAX_SAFE_INTEGER, maxMillis: 50 };
    const started = Date.now();
    expect(() => edit('loop { doc.n = 1 }', { id: 1 }, null, budget)).toThrow(/took longer than 50 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test('a string or an array cannot grow without bound', () => {
    expect(() => edit('let s = "x"; loop { s += s }', { id: 1 })).toThrow(/A string grew past/);
    expect(() => edit('let a = []; loop { a.push(1) }', { id: 1 }, null, { ...DEFAULT_BUDGET, maxCollectionSize: 100 })).toThrow(/An array grew past 100/);
  });

  test('no JavaScript is reachable: `__proto__` and `constructor` are plain keys', () => {
    const out = edit('doc["__proto__"] = #{ polluted: true }; doc.c = doc.constructor', { id: 1 });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(out!.c).toBeNull();
  });
});
