/**
 * Nesting depth of JSON text, measured before it is parsed: `JSON.parse` copes with any depth,
 * but everything that walks the parsed value afterwards (structured clone to a worker, flattening
 * a document, `JSON.stringify` in an error message) recurses and overflows the stack on a
 * 10,000-level document. Refusing such text up front keeps those paths safe. The limit is the
 * reference's (serde_json's recursion limit of 128), and so is the wording of the error.
 */
export const MAX_JSON_DEPTH = 128;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const NEWLINE = 0x0a;

/** Where text first nests deeper than `max`, as the reference reports it; null when it never does. */
export function excessiveNesting(text: string, max = MAX_JSON_DEPTH): { line: number; column: number } | null {
  let depth = 0;
  let inString = false;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    switch (c) {
      case QUOTE:
        inString = true;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (++depth > max) return { line, column: i - lineStart + 1 };
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        // NDJSON: a malformed line must not shift the depth of the next ones below zero.
        if (depth > 0) depth--;
        break;
      case NEWLINE:
        line++;
        lineStart = i + 1;
        break;
    }
  }
  return null;
}

/** `recursion limit exceeded at line 1 column 129`, the detail of the `malformed_payload` error. */
export function nestingDetail(at: { line: number; column: number }): string {
  return `recursion limit exceeded at line ${at.line} column ${at.column}`;
}
