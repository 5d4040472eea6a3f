/**
 * Self-tuning parameters: nothing here is a user knob.
 *
 * Build: M = 16 (32 layer-0 links, about 130 bytes of links per vector, 200 with the keys) and
 * efConstruction = 64. On GloVe-100 200k (2026-11-23, same harness, same run): efConstruction
 * 100 built 5,808 vectors/s and searched at recall@10 0.9559 / 3,537 QPS with the beam of 150;
 * 64 builds 8,036/s (1.38x) and, with the beam widened to 168, searches at 0.9557 / 3,243 QPS
 * (0.92x): bulk loads are bound by the build, searches were far above their target.
 * Search: the beam grows with k and, slowly, with the graph size (bigger graphs need a wider
 * beam for the same recall). Filters: an exact scan is chosen when the allowed set costs fewer
 * distance computations than the restricted graph walk would.
 */
export const BUILD = { M: 16, efConstruction: 64 } as const;

/**
 * Beam width for `k` results on a graph of `size` nodes: 168 at 200k vectors, where GloVe-100
 * reaches recall@10 0.955 after re-ranking; never below 128 (small graphs are cheap to search).
 */
export function efSearch(k: number, size: number): number {
  const bySize = Math.ceil(9.5 * Math.log2(Math.max(2, size)));
  return Math.max(Math.ceil(k * 1.5), Math.min(400, Math.max(128, bySize)));
}

/**
 * How many code-ranked candidates are re-ranked with exact vectors (each one a read of its
 * stored vector: about a tenth of a search's CPU at 40). GloVe-100, k = 10 (2026-11-25):
 * recall@10 is the same with 20 as with 40 for cosine at 200,000 (walk, ef 210: 0.9666) and for
 * dot and euclidean with lengths in [0.5, 2) at 50,000 (ef 128 / 400 / 2,000); 15 loses up to
 * 0.0004 (euclidean), 10 loses 0.01-0.05.
 */
export function rerankCount(k: number, ef: number): number {
  return Math.min(ef, Math.max(k * 2, 20));
}

/**
 * True when scanning the `allowed` vectors exactly is cheaper than a graph walk that must see
 * about ef / selectivity nodes, each costing a neighbour list of `M0` distances.
 */
export function preferScan(allowed: number, total: number, ef: number, M0: number): boolean {
  if (allowed <= 4096) return true;
  const selectivity = allowed / Math.max(1, total);
  return allowed < (ef / selectivity) * M0;
}

/**
 * Pending vectors are merged into the graph when they reach this count. Searches scan their
 * codes exactly, so the cap bounds that scan (16,384 codes of 100 bytes: about 0.5 ms); a merge
 * costs the same per vector whatever its size, so merging more often costs little.
 */
export function mergeThreshold(graphSize: number): number {
  return Math.min(16_384, Math.max(4096, Math.floor(graphSize / 4)));
}
