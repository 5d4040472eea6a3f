/**
 * Byte sizes as operators write them in flags, environment variables and config files:
 * `100 MB` (decimal), `2 GiB` (binary), `1048576` (bytes), case-insensitive like the reference.
 */

const UNITS: Record<string, number> = {
  b: 1,
  k: 1e3,
  kb: 1e3,
  kib: 1024,
  m: 1e6,
  mb: 1e6,
  mib: 1024 ** 2,
  g: 1e9,
  gb: 1e9,
  gib: 1024 ** 3,
  t: 1e12,
  tb: 1e12,
  tib: 1024 ** 4,
};

/** Parse a byte size; returns undefined when the text is not one. */
export function parseByteSize(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isInteger(text) && text >= 0 ? text : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  if (!match) return undefined;
  const factor = UNITS[(match[2] || 'b').toLowerCase()];
  if (factor === undefined) return undefined;
  return Math.round(Number(match[1]) * factor);
}
