/**
 * The function language of `POST /documents/edit`: the subset of Rhai the reference documents
 * (https://rhai.rs/book/), parsed into a small AST that `run.ts` evaluates. No user text ever
 * reaches JavaScript's `eval` or `Function`.
 *
 * Supported: `let`/`const`, assignment and compound assignment to variables, properties and
 * indexes; `if`/`else` (also as an expression), `while`, `loop`, `for x in …` and
 * `for (x, i) in …`, `break`, `continue`, `return`; literals (integers, floats, strings, chars,
 * backtick strings with `${…}` interpolation, `true`/`false`, `()`, arrays `[…]`, object maps
 * `#{…}`); operators `+ - * / % **`, comparisons, `&& || !`, `in`, `??`, ranges `a..b`/`a..=b`,
 * `?.`; closures `|x| …` (for `map`, `filter`, `reduce`… and `.call`); method and function calls
 * of a fixed library (see run.ts). Anything else (`fn`, `switch`, `import`…) is refused with a
 * compile error naming it.
 */

export class EditFunctionSyntaxError extends Error {
  constructor(message: string, readonly line: number, readonly column: number) {
    super(`${message} (line ${line}, position ${column})`);
    this.name = 'EditFunctionSyntaxError';
  }
}

export type Expr =
  | { kind: 'literal'; value: LiteralValue }
  | { kind: 'template'; parts: Array<string | Expr> }
  | { kind: 'array'; items: Expr[] }
  | { kind: 'map'; entries: Array<[string, Expr]> }
  | { kind: 'var'; name: string }
  | { kind: 'prop'; target: Expr; name: string; optional: boolean }
  | { kind: 'index'; target: Expr; index: Expr }
  | { kind: 'call'; name: string; args: Expr[] }
  | { kind: 'method'; target: Expr; name: string; args: Expr[] }
  | { kind: 'unary'; op: '-' | '!' | '+'; operand: Expr }
  | { kind: 'binary'; op: string; left: Expr; right: Expr }
  | { kind: 'if'; cond: Expr; then: Stmt[]; otherwise: Stmt[] | null }
  | { kind: 'closure'; params: string[]; body: Expr }
  | { kind: 'block'; body: Stmt[] };

export type LiteralValue = null | boolean | bigint | number | string;

export type Stmt =
  | { kind: 'let'; name: string; init: Expr | null; constant: boolean }
  | { kind: 'assign'; target: Expr; op: string; value: Expr }
  | { kind: 'expr'; expr: Expr }
  | { kind: 'while'; cond: Expr | null; body: Stmt[] }
  | { kind: 'for'; name: string; counter: string | null; iterable: Expr; body: Stmt[] }
  | { kind: 'break' }
  | { kind: 'continue' }
  | { kind: 'return'; value: Expr | null };

interface Token {
  type: 'num' | 'str' | 'char' | 'template' | 'ident' | 'punct' | 'eof';
  text: string;
  value?: LiteralValue;
  line: number;
  column: number;
}

const PUNCTUATION = [
  '**=', '..=', '#{', '?.', '??', '..', '==', '!=', '<=', '>=', '&&', '||', '+=', '-=', '*=', '/=', '%=', '**', '::', '=>', '|>',
  '{', '}', '(', ')', '[', ']', ',', ';', ':', '.', '=', '+', '-', '*', '/', '%', '<', '>', '!', '|', '&', '^', '?', '@', '$',
];

const UNSUPPORTED_KEYWORDS: Record<string, string> = {
  fn: 'function definitions (`fn`)',
  switch: '`switch` expressions',
  import: '`import`',
  export: '`export`',
  do: '`do` loops',
  try: '`try`/`catch`',
  throw: '`throw`',
  private: '`private`',
  eval: '`eval`',
  Fn: 'function pointers (`Fn`)',
};

const MAX_NESTING = 64;
const MAX_SOURCE = 64 * 1024;

function lex(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const error = (message: string, at = i): never => {
    throw new EditFunctionSyntaxError(message, line, at - lineStart + 1);
  };
  const push = (type: Token['type'], text: string, start: number, value?: LiteralValue) =>
    tokens.push({ type, text, value, line, column: start - lineStart + 1 });

  while (i < source.length) {
    const c = source[i]!;
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (source.startsWith('//', i)) {
      while (i < source.length && source[i] !== '\n') i++;
      continue;
    }
    if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      if (end < 0) error('Unterminated comment');
      for (let j = i; j < end; j++) if (source[j] === '\n') (line++, (lineStart = j + 1));
      i = end + 2;
      continue;
    }
    const start = i;
    if (/[0-9]/.test(c)) {
      const m = /^(0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|[0-9][0-9_]*(\.[0-9][0-9_]*)?([eE][+-]?[0-9]+)?)/.exec(source.slice(i))!;
      let text = m[0];
      // `1..3` is a range, not the float `1.`
      if (text.endsWith('.')) text = text.slice(0, -1);
      const clean = text.replace(/_/g, '');
      const isFloat = /^[0-9]/.test(clean) && /[.eE]/.test(clean) && !/^0[xob]/.test(clean);
      const value = isFloat ? Number(clean) : BigInt(clean);
      push('num', text, start, value);
      i += text.length;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))!;
      push('ident', m[0], start);
      i += m[0].length;
      continue;
    }
    if (c === '"') {
      const { value, end } = readString(source, i + 1, '"', error);
      push('str', source.slice(start, end), start, value);
      i = end;
      continue;
    }
    if (c === "'") {
      const { value, end } = readString(source, i + 1, "'", error);
      if ([...value].length !== 1) error('A character literal must hold exactly one character', start);
      push('char', source.slice(start, end), start, value);
      i = end;
      continue;
    }
    if (c === '`') {
      const end = templateEnd(source, i + 1, error);
      push('template', source.slice(i + 1, end - 1), start);
      for (let j = i; j < end; j++) if (source[j] === '\n') (line++, (lineStart = j + 1));
      i = end;
      continue;
    }
    const punct = PUNCTUATION.find((p) => source.startsWith(p, i));
    if (!punct) error(`Unexpected character \`${c}\``);
    push('punct', punct!, start);
    i += punct!.length;
  }
  tokens.push({ type: 'eof', text: '', line, column: i - lineStart + 1 });
  return tokens;
}

function readString(source: string, from: number, quote: string, error: (m: string, at?: number) => never): { value: string; end: number } {
  let out = '';
  let i = from;
  while (i < source.length && source[i] !== quote) {
    const c = source[i]!;
    if (c === '\n' && quote === "'") error('Unterminated character literal', i);
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const next = source[i + 1];
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', '\\': '\\', '"': '"', "'": "'" };
    if (next !== undefined && next in simple) {
      out += simple[next];
      i += 2;
    } else if (next === 'u' || next === 'x') {
      const m = /^(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\})/.exec(source.slice(i + 1));
      if (!m) error('Invalid escape sequence', i);
      out += String.fromCodePoint(parseInt(m![1] ?? m![2] ?? m![3]!, 16));
      i += 1 + m![0].length;
    } else error('Invalid escape sequence', i);
  }
  if (i >= source.length) error(quote === '"' ? 'Unterminated string' : 'Unterminated character literal', from - 1);
  return { value: out, end: i + 1 };
}

/** Where a backtick string ends, skipping over `${…}` parts (which may hold strings of their own). */
function templateEnd(source: string, from: number, error: (m: string, at?: number) => never): number {
  let i = from;
  while (i < source.length) {
    if (source[i] === '`') return i + 1;
    if (source.startsWith('${', i)) {
      let depth = 1;
      i += 2;
      while (i < source.length && depth > 0) {
        const c = source[i]!;
        if (c === '{') depth++;
        else if (c === '}') depth--;
        else if (c === '"') i = readString(source, i + 1, '"', error).end - 1;
        i++;
      }
      continue;
    }
    i++;
  }
  return error('Unterminated string', from - 1);
}

const BINARY: Record<string, { prec: number; right?: boolean }> = {
  '??': { prec: 1 },
  '||': { prec: 2 },
  '&&': { prec: 3 },
  '|': { prec: 4 },
  '^': { prec: 4 },
  '&': { prec: 5 },
  '==': { prec: 6 },
  '!=': { prec: 6 },
  '<': { prec: 7 },
  '<=': { prec: 7 },
  '>': { prec: 7 },
  '>=': { prec: 7 },
  in: { prec: 7 },
  '..': { prec: 8 },
  '..=': { prec: 8 },
  '+': { prec: 9 },
  '-': { prec: 9 },
  '*': { prec: 10 },
  '/': { prec: 10 },
  '%': { prec: 10 },
  '**': { prec: 11, right: true },
};

const ASSIGNMENTS = ['=', '+=', '-=', '*=', '/=', '%=', '**='];

class Parser {
  private pos = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const token = this.peek();
    if (token.type !== 'eof') this.pos++;
    return token;
  }

  private is(text: string, type: Token['type'] = 'punct'): boolean {
    const token = this.peek();
    return token.type === type && token.text === text;
  }

  private eat(text: string, type: Token['type'] = 'punct'): boolean {
    if (!this.is(text, type)) return false;
    this.pos++;
    return true;
  }

  private fail(message: string, token = this.peek()): never {
    throw new EditFunctionSyntaxError(message, token.line, token.column);
  }

  private expect(text: string): void {
    if (!this.eat(text)) this.fail(`Expecting \`${text}\`, found ${describe(this.peek())}`);
  }

  private ident(): string {
    const token = this.peek();
    if (token.type !== 'ident') this.fail(`Expecting a name, found ${describe(token)}`);
    this.pos++;
    return token.text;
  }

  private enter(): void {
    if (++this.depth > MAX_NESTING) this.fail(`The function nests deeper than ${MAX_NESTING} levels`);
  }

  program(): Stmt[] {
    const body = this.statements(true);
    if (this.peek().type !== 'eof') this.fail(`Unexpected ${describe(this.peek())}`);
    return body;
  }

  /** Statements up to `}` (or the end); a statement ending in a block needs no `;`. */
  private statements(topLevel = false): Stmt[] {
    const out: Stmt[] = [];
    for (;;) {
      while (this.eat(';'));
      if (this.peek().type === 'eof' || (!topLevel && this.is('}'))) return out;
      const stmt = this.statement();
      out.push(stmt);
      if (this.eat(';')) continue;
      if (this.peek().type === 'eof' || (!topLevel && this.is('}'))) return out;
      if (!endsWithBlock(stmt)) this.fail(`Expecting \`;\` to terminate this statement, found ${describe(this.peek())}`);
    }
  }

  private block(): Stmt[] {
    this.enter();
    this.expect('{');
    const body = this.statements();
    this.expect('}');
    this.depth--;
    return body;
  }

  private statement(): Stmt {
    const token = this.peek();
    if (token.type === 'ident') {
      const unsupported = UNSUPPORTED_KEYWORDS[token.text];
      if (unsupported) this.fail(`${unsupported} are not supported in document edition functions`);
      switch (token.text) {
        case 'let':
        case 'const': {
          this.pos++;
          const name = this.ident();
          const init = this.eat('=') ? this.expression() : null;
          if (token.text === 'const' && init === null) this.fail('A constant needs a value');
          return { kind: 'let', name, init, constant: token.text === 'const' };
        }
        case 'while': {
          this.pos++;
          const cond = this.expression();
          return { kind: 'while', cond, body: this.block() };
        }
        case 'loop':
          this.pos++;
          return { kind: 'while', cond: null, body: this.block() };
        case 'for': {
          this.pos++;
          let name: string;
          let counter: string | null = null;
          if (this.eat('(')) {
            name = this.ident();
            this.expect(',');
            counter = this.ident();
            this.expect(')');
          } else name = this.ident();
          if (!this.eat('in', 'ident')) this.fail(`Expecting \`in\`, found ${describe(this.peek())}`);
          const iterable = this.expression();
          return { kind: 'for', name, counter, iterable, body: this.block() };
        }
        case 'break':
          this.pos++;
          return { kind: 'break' };
        case 'continue':
          this.pos++;
          return { kind: 'continue' };
        case 'return': {
          this.pos++;
          const value = this.is(';') || this.is('}') || this.peek().type === 'eof' ? null : this.expression();
          return { kind: 'return', value };
        }
      }
    }
    const expr = this.expression();
    const op = this.peek();
    if (op.type === 'punct' && ASSIGNMENTS.includes(op.text)) {
      if (!isAssignable(expr)) this.fail('Only a variable, a property or an index can be assigned to', op);
      this.pos++;
      return { kind: 'assign', target: expr, op: op.text, value: this.expression() };
    }
    return { kind: 'expr', expr };
  }

  expression(minPrec = 0): Expr {
    this.enter();
    let left = this.unary();
    for (;;) {
      const token = this.peek();
      const op = token.type === 'punct' || (token.type === 'ident' && token.text === 'in') ? token.text : null;
      const info = op ? BINARY[op] : undefined;
      if (!op || !info || info.prec < minPrec) break;
      this.pos++;
      const right = this.expression(info.right ? info.prec : info.prec + 1);
      left = { kind: 'binary', op, left, right };
    }
    this.depth--;
    return left;
  }

  private unary(): Expr {
    for (const op of ['-', '!', '+'] as const) {
      if (this.eat(op)) {
        this.enter();
        const operand = this.unary();
        this.depth--;
        return { kind: 'unary', op, operand };
      }
    }
    return this.postfix(this.primary());
  }

  private postfix(expr: Expr): Expr {
    for (;;) {
      if (this.is('.') || this.is('?.')) {
        const optional = this.next().text === '?.';
        const name = this.ident();
        if (this.eat('(')) expr = { kind: 'method', target: expr, name, args: this.arguments() };
        else expr = { kind: 'prop', target: expr, name, optional };
      } else if (this.eat('[')) {
        const index = this.expression();
        this.expect(']');
        expr = { kind: 'index', target: expr, index };
      } else return expr;
    }
  }

  private arguments(): Expr[] {
    const args: Expr[] = [];
    while (!this.eat(')')) {
      args.push(this.expression());
      if (!this.eat(',') && !this.is(')')) this.fail(`Expecting \`,\` or \`)\`, found ${describe(this.peek())}`);
    }
    return args;
  }

  private primary(): Expr {
    const token = this.next();
    switch (token.type) {
      case 'num':
      case 'str':
      case 'char':
        return { kind: 'literal', value: token.value! };
      case 'template':
        return { kind: 'template', parts: templateParts(token) };
      case 'ident':
        return this.identifier(token);
      case 'punct':
        break;
      default:
        this.fail('Unexpected end of the function', token);
    }
    switch (token.text) {
      case '(': {
        if (this.eat(')')) return { kind: 'literal', value: null };
        const inner = this.expression();
        this.expect(')');
        return inner;
      }
      case '[': {
        const items: Expr[] = [];
        while (!this.eat(']')) {
          items.push(this.expression());
          if (!this.eat(',') && !this.is(']')) this.fail(`Expecting \`,\` or \`]\`, found ${describe(this.peek())}`);
        }
        return { kind: 'array', items };
      }
      case '#{': {
        const entries: Array<[string, Expr]> = [];
        while (!this.eat('}')) {
          const key = this.peek();
          if (key.type !== 'ident' && key.type !== 'str') this.fail(`Expecting a property name, found ${describe(key)}`);
          this.pos++;
          this.expect(':');
          entries.push([key.type === 'str' ? (key.value as string) : key.text, this.expression()]);
          if (!this.eat(',') && !this.is('}')) this.fail(`Expecting \`,\` or \`}\`, found ${describe(this.peek())}`);
        }
        return { kind: 'map', entries };
      }
      case '{':
        this.pos--;
        return { kind: 'block', body: this.block() };
      case '||':
        return { kind: 'closure', params: [], body: this.expression() };
      case '|': {
        const params: string[] = [];
        while (!this.eat('|')) {
          params.push(this.ident());
          if (!this.eat(',') && !this.is('|')) this.fail(`Expecting \`,\` or \`|\`, found ${describe(this.peek())}`);
        }
        return { kind: 'closure', params, body: this.expression() };
      }
    }
    return this.fail(`Unexpected ${describe(token)}`, token);
  }

  private identifier(token: Token): Expr {
    const name = token.text;
    const unsupported = UNSUPPORTED_KEYWORDS[name];
    if (unsupported) this.fail(`${unsupported} are not supported in document edition functions`, token);
    if (name === 'true' || name === 'false') return { kind: 'literal', value: name === 'true' };
    if (name === 'if') {
      const cond = this.expression();
      const then = this.block();
      let otherwise: Stmt[] | null = null;
      if (this.eat('else', 'ident')) {
        otherwise = this.is('if', 'ident') ? [{ kind: 'expr', expr: this.primary() }] : this.block();
      }
      return { kind: 'if', cond, then, otherwise };
    }
    if (['let', 'const', 'while', 'loop', 'for', 'break', 'continue', 'return'].includes(name)) this.fail(`\`${name}\` cannot be used as a value`, token);
    if (this.is('::')) this.fail('Modules (`::`) are not supported in document edition functions');
    if (this.eat('(')) return { kind: 'call', name, args: this.arguments() };
    return { kind: 'var', name };
  }
}

function templateParts(token: Token): Array<string | Expr> {
  const text = token.text;
  const parts: Array<string | Expr> = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('${', i)) {
      let depth = 1;
      let j = i + 2;
      while (j < text.length && depth > 0) {
        if (text[j] === '{') depth++;
        else if (text[j] === '}') depth--;
        j++;
      }
      if (literal) parts.push(literal);
      literal = '';
      const inner = new Parser(lex(text.slice(i + 2, j - 1)));
      const expr = inner.expression();
      parts.push(expr);
      i = j;
    } else if (text[i] === '\\' && i + 1 < text.length) {
      literal += text[i + 1] === 'n' ? '\n' : text[i + 1] === 't' ? '\t' : text[i + 1];
      i += 2;
    } else literal += text[i++];
  }
  if (literal) parts.push(literal);
  return parts;
}

function isAssignable(expr: Expr): boolean {
  return expr.kind === 'var' || (expr.kind === 'prop' && !expr.optional) || expr.kind === 'index';
}

function endsWithBlock(stmt: Stmt): boolean {
  if (stmt.kind === 'while' || stmt.kind === 'for') return true;
  return stmt.kind === 'expr' && (stmt.expr.kind === 'if' || stmt.expr.kind === 'block');
}

function describe(token: Token): string {
  return token.type === 'eof' ? 'the end of the function' : `\`${token.text}\``;
}

/** Parse a function; throws `EditFunctionSyntaxError` with the position of the first problem. */
export function parseEditFunction(source: string): Stmt[] {
  if (source.length > MAX_SOURCE) throw new EditFunctionSyntaxError(`The function is longer than ${MAX_SOURCE} characters`, 1, 1);
  return new Parser(lex(source)).program();
}
