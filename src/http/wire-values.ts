/**
 * How request values are named in error messages. The reference API describes a bad value by its
 * JSON kind ("a positive integer", "an array") followed by the value itself, so that a client can
 * see exactly what it sent; every validator in the HTTP layer words its errors through here.
 */

export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    case 'number':
      if (!Number.isInteger(value)) return 'a number';
      return value < 0 ? 'a negative integer' : 'a positive integer';
    case 'object':
      return 'an object';
    default:
      return 'a value';
  }
}

/** The value as compact JSON, cut short so that a huge payload does not end up in a message. */
export function render(value: unknown, max = 200): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `a`, `b`, `c`: the way the reference lists accepted names. */
export function quoteList(names: readonly string[]): string {
  return names.map((n) => `\`${n}\``).join(', ');
}
