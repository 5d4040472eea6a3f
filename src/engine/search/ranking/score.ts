/**
 * Ranking scores as Meilisearch composes them. Each rule gives a document a rank in 1..maxRank
 * (maxRank best); the global score reads the ranks of all rules as one mixed-radix number,
 * rules earlier in the list being the more significant digits, scaled to [0, 1]. Sort rules
 * carry a value, not a rank, and do not contribute.
 */

export interface RuleDetail {
  /** Key in `_rankingScoreDetails`: the rule name, or `field:asc` for sort criteria. */
  key: string;
  rank?: number;
  maxRank?: number;
  /** Extra fields shown in the details (matchingWords, typoCount, value, ...). */
  extra?: Record<string, unknown>;
}

export function localScore(rank: number, maxRank: number): number {
  return maxRank <= 1 ? 1 : (rank - 1) / (maxRank - 1);
}

/** The rules' ranks composed into one rank out of the product of their maxima (first rule weighs most). */
function composedRank(details: readonly RuleDetail[]): { rank: number; max: number } {
  let rank = 1;
  let max = 1;
  for (const d of details) {
    if (d.rank === undefined || d.maxRank === undefined) continue;
    rank = (rank - 1) * d.maxRank + d.rank;
    max *= d.maxRank;
  }
  return { rank, max };
}

export function globalScore(details: readonly RuleDetail[]): number {
  const { rank, max } = composedRank(details);
  return localScore(rank, max);
}

/** Best score still reachable by a bucket whose first rules are decided (the rest at their best). */
export function upperBound(details: readonly RuleDetail[]): number {
  // With undecided rules at their best, the score tends to rank/max from below.
  const { rank, max } = composedRank(details);
  return max <= 1 ? 1 : rank / max;
}

export function detailsObject(details: readonly RuleDetail[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  details.forEach((d, order) => {
    const entry: Record<string, unknown> = { order, ...(d.extra ?? {}) };
    if (d.rank !== undefined && d.maxRank !== undefined) entry.score = localScore(d.rank, d.maxRank);
    out[d.key] = entry;
  });
  return out;
}
