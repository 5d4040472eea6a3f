/**
 * `payloadSize` of `POST /export`: a byte count (integer) or a human size (`24MiB`, `50 MB`,
 * `1000`), read case-insensitively as the reference's byte parser does, and shown back in task
 * details with the unit that writes it most simply (`24 MiB`, `20 MB`).
 */

/** The reference's default when the request sets none. */
export const DEFAULT_EXPORT_PAYLOAD_BYTES = 20 * 1024 * 1024;

const PREFIXES = ['k', 'm', 'g', 't', 'p', 'e'] as const;

/** The size in bytes, or the reason `text` is not one (the parser's own wording). */
export function parsePayloadSize(text: string): number | { reason: string } {
  const match = /^\s*([0-9]*\.?[0-9]*)\s*(.*?)\s*$/.exec(text)!;
  const [, number = '', unit = ''] = match;
  if (number === '' || number === '.') {
    const first = text.trim()[0];
    return { reason: first === undefined ? 'the input is empty' : `the character ${quote(first)} is not a number` };
  }
  const factor = unitFactor(unit);
  if (typeof factor !== 'number') return factor;
  const bytes = Math.ceil(Number(number) * factor);
  if (!Number.isSafeInteger(bytes)) return { reason: 'the value is too large' };
  return bytes;
}

function unitFactor(unit: string): number | { reason: string } {
  if (unit === '') return 1;
  const lower = unit.toLowerCase();
  if (lower === 'b') return 1;
  const power = PREFIXES.indexOf(lower[0] as (typeof PREFIXES)[number]) + 1;
  if (power === 0) return { reason: `the character ${quote(unit[0]!)} is incorrect ('B', 'K', 'M', 'G', 'T', 'P', 'E' or no character is expected)` };
  let rest = lower.slice(1);
  const binary = rest.startsWith('i');
  if (binary) rest = rest.slice(1);
  if (rest !== '' && rest !== 'b') return { reason: `the character ${quote(unit[unit.length - rest.length]!)} is incorrect ('B' or no character is expected)` };
  return (binary ? 1024 : 1000) ** power;
}

function quote(character: string): string {
  return `'${character}'`;
}

/** `24 MiB`, `20 MB`, `512 B`: of the binary and decimal units, the one giving the shorter number. */
export function formatPayloadSize(bytes: number): string {
  const candidates = [adjusted(bytes, 1024, 'iB'), adjusted(bytes, 1000, 'B')];
  const [binary, decimal] = candidates as [[number, string], [number, string]];
  const best = String(decimal[0]).length < String(binary[0]).length ? decimal : binary;
  return `${String(best[0])} ${best[1]}`;
}

function adjusted(bytes: number, base: number, suffix: string): [number, string] {
  let power = 0;
  while (power < PREFIXES.length && bytes >= base ** (power + 1)) power++;
  if (power === 0) return [bytes, 'B'];
  return [bytes / base ** power, PREFIXES[power - 1]!.toUpperCase() + suffix];
}
