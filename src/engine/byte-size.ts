/**
 * Byte sizes as people write them, read as the reference's byte parser reads them: a number of
 * bytes, or a number and a unit, case-insensitive, decimal (`100 MB`, `1k`) or binary (`2 GiB`),
 * up to exa. Used for the serve options (flags, environment, config file) and `POST /export`'s
 * `payloadSize`, with the reason in the parser's own wording when the text is not a size.
 */

const PREFIXES = ['k', 'm', 'g', 't', 'p', 'e'] as const;

/** The size in bytes (not rounded: each caller rounds as its setting needs), or why `text` is not one. */
export function readByteSize(text: string): number | { reason: string } {
  const match = /^\s*([0-9]*\.?[0-9]*)\s*(.*?)\s*$/.exec(text)!;
  const [, number = '', unit = ''] = match;
  if (number === '' || number === '.') {
    const first = text.trim()[0];
    return { reason: first === undefined ? 'the input is empty' : `the character ${quote(first)} is not a number` };
  }
  const factor = unitFactor(unit);
  return typeof factor === 'number' ? Number(number) * factor : factor;
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
export function formatByteSize(bytes: number): string {
  const binary = adjusted(bytes, 1024, 'iB');
  const decimal = adjusted(bytes, 1000, 'B');
  const best = String(decimal[0]).length < String(binary[0]).length ? decimal : binary;
  return `${String(best[0])} ${best[1]}`;
}

function adjusted(bytes: number, base: number, suffix: string): [number, string] {
  let power = 0;
  while (power < PREFIXES.length && bytes >= base ** (power + 1)) power++;
  if (power === 0) return [bytes, 'B'];
  return [bytes / base ** power, PREFIXES[power - 1]!.toUpperCase() + suffix];
}
