/**
 * Index uid patterns, as used by API keys (`indexes`) and tenant token search rules: `*` matches
 * every index, `prefix*` every index whose uid starts with `prefix`, anything else exactly one uid.
 */

const INDEX_UID_CHARS = /^[A-Za-z0-9_-]+$/;
const MAX_INDEX_UID_BYTES = 400;

export const INVALID_PATTERN_HINT =
  'Index uid patterns can be an integer or a string containing only alphanumeric characters, hyphens (-), underscores (_), and optionally end with a star (*).';

/** True when `pattern` is `*`, a valid index uid, or a valid index uid followed by `*`. */
export function isValidIndexPattern(pattern: string): boolean {
  if (pattern === '*') return true;
  const stem = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
  return INDEX_UID_CHARS.test(stem) && Buffer.byteLength(stem) <= MAX_INDEX_UID_BYTES;
}

export function matchesAll(pattern: string): boolean {
  return pattern === '*';
}

export function patternMatches(pattern: string, indexUid: string): boolean {
  if (pattern.endsWith('*')) return indexUid.startsWith(pattern.slice(0, -1));
  return pattern === indexUid;
}

export function anyPatternMatches(patterns: Iterable<string>, indexUid: string): boolean {
  for (const p of patterns) if (patternMatches(p, indexUid)) return true;
  return false;
}

/**
 * Of the patterns matching `indexUid`, the most specific: an exact uid first, then the longest
 * prefix. Used to pick the tenant token rule that applies to one index.
 */
export function mostSpecificPattern(patterns: Iterable<string>, indexUid: string): string | undefined {
  let best: string | undefined;
  let bestRank = -1;
  for (const p of patterns) {
    if (!patternMatches(p, indexUid)) continue;
    const rank = p.endsWith('*') ? p.length : Number.MAX_SAFE_INTEGER;
    if (rank > bestRank) {
      best = p;
      bestRank = rank;
    }
  }
  return best;
}
