/**
 * The bucket sort: apply the ranking rules in order, each splitting the current bucket into
 * ordered sub-buckets, depth first, until enough documents are ranked. Documents of a final
 * bucket keep docid order. With a ranking score threshold, buckets whose best reachable score is
 * below it are skipped, and the documents above it are counted.
 */
import type { RuleDetail } from './score.js';
import { globalScore, upperBound } from './score.js';
import { sizeOf, type Docids, type RankingContext, type RankingRule } from './rules.js';

export interface RankedHit {
  docid: number;
  details: RuleDetail[];
  score: number;
  /** The weight dynamic search rules' scale actions gave the hit (absent: 1); see search-rules/apply.ts. */
  scale?: number;
}

export interface BucketSortResult {
  hits: RankedHit[];
  /** Documents above the threshold (only counted when a threshold is set). */
  aboveThreshold: number;
  /** Those documents, when a threshold is set: they replace the candidates for counts and facets. */
  aboveThresholdDocids: number[] | null;
  /** True when the search stopped early because of `searchCutoffMs`. */
  degraded: boolean;
}

export function bucketSort(
  rules: readonly RankingRule[],
  universe: Docids,
  ctx: RankingContext,
  options: { want: number; threshold: number | null; deadline: number | null; distinct?: (docid: number) => boolean },
): BucketSortResult {
  const hits: RankedHit[] = [];
  let counted = 0;
  const above: number[] | null = options.threshold !== null ? [] : null;
  let stop = false;
  let degraded = false;
  const active = ctx.terms.map((_, i) => i);
  let steps = 0;

  // The details of the bucket being visited, one per rule applied so far: pushed and popped as
  // the visit descends and returns, copied only for the hits of an emitted bucket.
  const details: RuleDetail[] = [];

  const emit = (docids: Docids) => {
    const score = globalScore(details);
    if (options.threshold !== null && score < options.threshold) return;
    let kept: RuleDetail[] | null = null;
    // Iterate lazily: a large final bucket is usually cut after a page of hits.
    for (const docid of docids) {
      if (options.distinct && !options.distinct(docid)) continue;
      counted++;
      above?.push(docid);
      if (hits.length < options.want) hits.push({ docid, details: (kept ??= details.slice()), score });
      else if (options.threshold === null) {
        stop = true;
        return;
      }
    }
  };

  const visit = (level: number, docids: Docids, act: number[]) => {
    if (stop || sizeOf(docids) === 0) return;
    if (options.threshold !== null && upperBound(details) < options.threshold) return;
    if (options.deadline !== null && ++steps % 16 === 0 && Date.now() > options.deadline) {
      // Out of time: what is left of this bucket keeps its current order.
      degraded = true;
      emit(docids);
      return;
    }
    if (level === rules.length) return emit(docids);
    for (const b of rules[level]!.split(docids, act, ctx)) {
      details.push(b.detail);
      visit(level + 1, b.docids, b.active);
      details.pop();
      if (stop) return;
    }
  };
  visit(0, universe, active);
  return { hits, aboveThreshold: counted, aboveThresholdDocids: above, degraded };
}
