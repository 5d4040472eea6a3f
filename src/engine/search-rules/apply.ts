/**
 * Dynamic search rules at search time: the pins and scales of the active rules applied to one
 * query's ranking, whatever ranks it (keyword, hybrid or vector search, alone or federated).
 *
 * As in the reference:
 * - A pinned document must exist and pass the search's filter (pinning never shows what a filter
 *   or a tenant token hides); it need not match the query. It leaves the organic ranking and is
 *   placed at its position.
 * - Scale actions select documents (`ids`, `filter`, or both: documents in both). The filtered
 *   documents are split by which actions select them, larger combinations first, and each part is
 *   ranked on its own (the same query over fewer documents); the parts are then merged by score
 *   times the part's weight (the product of its actions' weights), each keeping its own order.
 *   Weight 0 hides a part's documents: they are in no result and no count (unless pinned).
 */
import { SearchError } from '../errors.js';
import type { Index } from '../index/index.js';
import { RoaringBitmap32, type Bitmap } from '../index/store.js';
import type { RankedHit } from '../search/ranking/bucket-sort.js';
import { placePins, type RuleEffects, type Scale } from './rules.js';

/** One ranking of the query over (part of) the filtered documents. */
export interface RankedPart {
  hits: RankedHit[];
  /** The documents of this part matching the query and filter. */
  candidates: Bitmap;
  /** How many of them count towards the totals (a threshold may leave some out). */
  total: number;
}

/** Rank the query with the filtered documents narrowed by `restrict` (null: all of them). */
export type PartRanker<R extends RankedPart> = (restrict: ((universe: Bitmap) => Bitmap) | null) => R | Promise<R>;

export interface RuledRanking<R extends RankedPart> {
  /** The ranking of the documents no scale action selected (or the only one): its terms and flags serve the response. */
  main: R;
  /** Organic hits, merged by weighted score (pins not placed). */
  organic: RankedHit[];
  /** The pinned documents with their positions, in precedence order. */
  pins: Array<{ hit: RankedHit; position: number }>;
  /** Organic hits with the pins placed. */
  hits: RankedHit[];
  candidates: Bitmap;
  total: number;
}

/** Scale combinations ranked per search, as the reference bounds them. */
const MAX_SCALE_ACTIONS = 8;
const MAX_PARTS = 64;

/** `rankWithRules` for a ranker that answers at once (keyword search stays synchronous). */
export function rankWithRulesSync<R extends RankedPart>(index: Index, effects: RuleEffects | null, filtered: () => Bitmap, rank: (restrict: Restrict | null) => R): RuledRanking<R> {
  if (!effects || (effects.pins.length === 0 && effects.scales.length === 0)) return unruled(rank(null));
  const plan = planRules(index, effects, filtered());
  const ranked = plan.parts.map((part) => ({ result: rank(part.restrict), weight: part.weight }));
  return finish(ranked, plan.pins);
}

export async function rankWithRules<R extends RankedPart>(index: Index, effects: RuleEffects | null, filtered: () => Bitmap, rank: PartRanker<R>): Promise<RuledRanking<R>> {
  if (!effects || (effects.pins.length === 0 && effects.scales.length === 0)) return unruled(await rank(null));
  const plan = planRules(index, effects, filtered());
  const ranked: Array<{ result: R; weight: number }> = [];
  for (const part of plan.parts) ranked.push({ result: await rank(part.restrict), weight: part.weight });
  return finish(ranked, plan.pins);
}

type Restrict = (universe: Bitmap) => Bitmap;

function unruled<R extends RankedPart>(main: R): RuledRanking<R> {
  return { main, organic: main.hits, pins: [], hits: main.hits, candidates: main.candidates, total: main.total };
}

/** The pinned hits, and the parts to rank: each scaled part, then the rest (last, weight 1). Hidden parts are not ranked. */
function planRules(index: Index, effects: RuleEffects, universe: Bitmap) {
  const pins: Array<{ hit: RankedHit; position: number }> = [];
  const pinned = new RoaringBitmap32();
  for (const pin of effects.pins) {
    const docid = index.store.docidOf(pin.id);
    if (docid === undefined || !universe.has(docid) || pinned.has(docid)) continue;
    pinned.add(docid);
    pins.push({ hit: { docid, score: 1, details: [] }, position: pin.position });
  }
  const scaled = scaleParts(index, effects.scales, universe, pinned);
  const assigned = RoaringBitmap32.orMany([pinned, ...scaled.map((p) => p.docs)]);
  const parts: Array<{ restrict: Restrict | null; weight: number }> = scaled
    .filter((part) => part.weight > 0)
    .map((part) => ({ restrict: (u: Bitmap) => RoaringBitmap32.and(u, part.docs), weight: part.weight }));
  parts.push({ restrict: assigned.size === 0 ? null : (u: Bitmap) => RoaringBitmap32.andNot(u, assigned), weight: 1 });
  return { pins, parts };
}

function finish<R extends RankedPart>(ranked: Array<{ result: R; weight: number }>, pins: Array<{ hit: RankedHit; position: number }>): RuledRanking<R> {
  const main = ranked[ranked.length - 1]!.result;
  const organic = mergeWeighted(ranked.map(({ result, weight }) => ({ hits: result.hits, weight })));
  const candidates = RoaringBitmap32.orMany(ranked.map((r) => r.result.candidates));
  const total = ranked.reduce((sum, r) => sum + r.result.total, 0) + pins.filter((p) => !candidates.has(p.hit.docid)).length;
  return { main, organic, pins, hits: placePins(organic, pins), candidates, total };
}

/** The documents each combination of scale actions selects (and no larger combination did), with its weight. */
function scaleParts(index: Index, scales: Scale[], universe: Bitmap, pinned: Bitmap): Array<{ docs: Bitmap; weight: number }> {
  const selections = scales
    .slice(0, MAX_SCALE_ACTIONS)
    .map((scale) => ({ docs: RoaringBitmap32.andNot(RoaringBitmap32.and(selected(index, scale), universe), pinned), weight: scale.weight }))
    .filter((s) => s.docs.size > 0);
  const parts: Array<{ docs: Bitmap; weight: number }> = [];
  let taken = new RoaringBitmap32();
  for (let k = selections.length; k >= 1 && parts.length < MAX_PARTS; k--) {
    for (const combination of combinations(selections, k)) {
      let docs = combination.slice(1).reduce((acc, s) => RoaringBitmap32.and(acc, s.docs), combination[0]!.docs);
      docs = RoaringBitmap32.andNot(docs, taken);
      if (docs.size === 0) continue;
      taken = RoaringBitmap32.or(taken, docs);
      parts.push({ docs, weight: combination.reduce((w, s) => w * s.weight, 1) });
      if (parts.length >= MAX_PARTS) break;
    }
  }
  return parts;
}

function* combinations<T>(items: T[], k: number, from = 0): Generator<T[]> {
  if (k === 0) {
    yield [];
    return;
  }
  for (let i = from; i <= items.length - k; i++) for (const rest of combinations(items, k - 1, i + 1)) yield [items[i]!, ...rest];
}

/** The documents a scale action selects in this index; none when its filter names attributes the index cannot filter on. */
function selected(index: Index, scale: Scale): Bitmap {
  let docs: Bitmap | null = null;
  if (scale.ids) {
    docs = new RoaringBitmap32();
    for (const id of scale.ids) {
      const docid = index.store.docidOf(id);
      if (docid !== undefined) docs.add(docid);
    }
  }
  if (scale.filter !== undefined) {
    let matching: Bitmap;
    try {
      matching = index.filterDocids(scale.filter, 'invalid_search_filter');
    } catch (error) {
      if (error instanceof SearchError) return new RoaringBitmap32();
      throw error;
    }
    docs = docs ? RoaringBitmap32.and(docs, matching) : matching;
  }
  return docs ?? new RoaringBitmap32();
}

/** Merge ranked lists by score times their weight; each keeps its order; hits of a weighted list carry their weight. */
function mergeWeighted(lists: Array<{ hits: RankedHit[]; weight: number }>): RankedHit[] {
  if (lists.length === 1 && lists[0]!.weight === 1) return lists[0]!.hits;
  const at = lists.map(() => 0);
  const out: RankedHit[] = [];
  for (;;) {
    let best = -1;
    let bestScore = -Infinity;
    for (const [i, list] of lists.entries()) {
      const hit = list.hits[at[i]!];
      if (!hit) continue;
      const score = hit.score * list.weight;
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    if (best < 0) return out;
    const list = lists[best]!;
    const hit = list.hits[at[best]!++]!;
    out.push(list.weight === 1 ? hit : { ...hit, scale: list.weight });
  }
}
