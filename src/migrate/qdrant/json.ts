/**
 * JSON that keeps integers beyond 2^53 exact.
 *
 * Qdrant point ids are unsigned 64-bit integers; `JSON.parse` on Node 20 turns 18446744073709551615
 * into 18446744073709552000, and Node 20 has no reviver access to the source text. So integer
 * literals outside the safe range are rewritten into tagged strings before `JSON.parse` and turned
 * into `bigint` afterwards. Text without such literals (the common case) goes straight through
 * `JSON.parse`: the check is one regular expression.
 */

const TAG = '\u0000bigint:';
/**
 * A possible big integer literal: 16 digits right after `:`, `,` or `[` (fractions such as
 * `0.1234567890123456` never match: a `.` follows their first digit). Strings may match too;
 * the exact scan below sorts that out.
 */
const CANDIDATE = /[:,[]\s*-?\d{16}/;

export function parseLossless(text: string): unknown {
  if (!CANDIDATE.test(text)) return JSON.parse(text);
  const rewritten = tagBigIntegers(text);
  if (rewritten === text) return JSON.parse(text);
  return untag(JSON.parse(rewritten));
}

/** Serialises like `JSON.stringify`, writing `bigint` values as bare integer literals. */
export function stringifyLossless(value: unknown): string {
  let sawBig = false;
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') {
      sawBig = true;
      return TAG + v.toString();
    }
    return v;
  });
  if (!sawBig) return text;
  return text.replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}

function isSafeLiteral(digits: string): boolean {
  const abs = digits.startsWith('-') ? digits.slice(1) : digits;
  if (abs.length < 16) return true;
  return BigInt(abs) <= BigInt(Number.MAX_SAFE_INTEGER);
}

/** Walks the text once, tracking strings, and tags unsafe integer literals (no fraction, no exponent). */
function tagBigIntegers(text: string): string {
  const out: string[] = [];
  let last = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i += 2;
        else if (d === 0x22) break;
        else i++;
      }
      i++;
      continue;
    }
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d >= 0x30 && d <= 0x39) i++;
        else break;
      }
      const next = i < n ? text.charCodeAt(i) : 0;
      const isInteger = next !== 0x2e /* . */ && next !== 0x65 /* e */ && next !== 0x45; /* E */
      if (!isInteger) {
        // skip the rest of the number literal
        while (i < n && /[0-9.eE+-]/.test(text[i]!)) i++;
        continue;
      }
      const literal = text.slice(start, i);
      if (!isSafeLiteral(literal)) {
        out.push(text.slice(last, start), JSON.stringify(TAG + literal));
        last = i;
      }
      continue;
    }
    i++;
  }
  if (last === 0) return text;
  out.push(text.slice(last));
  return out.join('');
}

function untag(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith(TAG) ? BigInt(value.slice(TAG.length)) : value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = untag(value[i]);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    for (const k of Object.keys(obj)) obj[k] = untag(obj[k]);
    return obj;
  }
  return value;
}
