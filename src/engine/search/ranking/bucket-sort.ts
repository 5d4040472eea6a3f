/**
 * The bucket sort: apply the ranking rules in order, each splitting the current bucket into
 * ordered sub-buckets, depth first, until enough documents are ranked. Documents of a final
 * bucket keep docid order; a rule's bucket may hold documents it checks only as they are
 * returned (Unsure). With a ranking score threshold, buckets whose best reachable score is
 * below it are skipped, and the documents above it are counted.
 */
import type { RuleDetail } from './score.js';
import { globalScore, upperBound } from './score.js';
import roaring from 'roaring';
import { BITMAP_PATH_MIN, sizeOf, toBitmap, type Docids, type RankingContext, type RankingRule, type Unsure } from './rules.js';

const { RoaringBitmap32 } = roaring;

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
  // The unsure documents of the buckets being visited (see Unsure), and those each turned away:
  // moved to a later bucket of its rule, such a document must not come back from a later rule's
  // bucket under this one (a rule may yield again what it holds unread, see exactnessBuckets).
  const unsures: Unsure[] = [];
  const turnedAway: Array<Set<number>> = [];
  const admitted = (docid: number): boolean => {
    for (let i = 0; i < unsures.length; i++) {
      if (turnedAway[i]!.has(docid)) return false;
      if (!unsures[i]!.admit(docid)) {
        turnedAway[i]!.add(docid);
        return false;
      }
    }
    return true;
  };

  /**
   * The rules rank a bucket from posting lists from BITMAP_PATH_MIN documents on and from each
   * document's entry below, and the two differ on pure prefix matches where a term's words are
   * cut (RankingContext.termWordsCut). Where unsure documents may make that choice, they are
   * asked about first, until the bucket is known to be large or all are read, so that the rule
   * ranks the bucket it would have ranked had they been read.
   */
  const settle = (docids: Docids, act: number[]): Docids => {
    const size = sizeOf(docids);
    if (size < BITMAP_PATH_MIN || !act.some((i) => ctx.termWordsCut(i))) return docids;
    const all = toBitmap(docids);
    const pending = unsures.length === 1 ? unsures[0]!.docs : RoaringBitmap32.orMany(unsures.map((u) => u.docs));
    // documents of the bucket still to admit before it is large whatever the others turn out to be
    let missing = BITMAP_PATH_MIN - (size - all.andCardinality(pending));
    if (missing <= 0) return docids;
    const moved: number[] = [];
    for (const d of RoaringBitmap32.and(all, pending)) {
      if (admitted(d)) missing--;
      else moved.push(d);
      if (missing === 0) break;
    }
    return moved.length === 0 ? docids : RoaringBitmap32.andNot(all, new RoaringBitmap32(moved));
  };

  const emit = (docids: Docids) => {
    const score = globalScore(details);
    if (options.threshold !== null && score < options.threshold) return;
    let kept: RuleDetail[] | null = null;
    // Iterate lazily: a large final bucket is usually cut after a page of hits.
    for (const docid of docids) {
      // Without a threshold nothing past the page is counted: stop before checking the next one.
      if (options.threshold === null && hits.length >= options.want) {
        stop = true;
        return;
      }
      // before `distinct`, which marks the document's value as seen
      if (unsures.length > 0 && !admitted(docid)) continue;
      if (options.distinct && !options.distinct(docid)) continue;
      counted++;
      above?.push(docid);
      if (hits.length < options.want) hits.push({ docid, details: (kept ??= details.slice()), score });
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
    const bucket = unsures.length > 0 ? settle(docids, act) : docids;
    if (sizeOf(bucket) === 0) return;
    for (const b of rules[level]!.split(bucket, act, ctx)) {
      details.push(b.detail);
      if (b.unsure) {
        unsures.push(b.unsure);
        turnedAway.push(new Set());
      }
      visit(level + 1, b.docids, b.active);
      if (b.unsure) {
        unsures.pop();
        turnedAway.pop();
      }
      details.pop();
      if (stop) return;
    }
  };
  visit(0, universe, active);
  return { hits, aboveThreshold: counted, aboveThresholdDocids: above, degraded };
}
