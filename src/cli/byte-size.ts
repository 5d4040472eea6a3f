/**
 * Byte sizes as operators write them in flags, environment variables and config files:
 * `100 MB` (decimal), `2 GiB` (binary), `1048576` (bytes), case-insensitive like the reference
 * (engine/byte-size.ts reads them).
 */
import { readByteSize } from '../engine/byte-size.js';

/** Parse a byte size; returns undefined when the text is not one. */
export function parseByteSize(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isInteger(text) && text >= 0 ? text : undefined;
  const size = readByteSize(text);
  return typeof size === 'number' ? Math.round(size) : undefined;
}
