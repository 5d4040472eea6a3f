/**
 * `distribution`: users describe the similarity scores their model really produces (mean and
 * sigma); scores are then mapped affinely so that this distribution lands on mean 0.5 and sigma
 * 0.4, clamped to ]0, 1], which keeps semantic scores comparable with keyword scores in hybrid
 * search (the reference's behaviour).
 */
import type { Distribution } from './types.js';

const TARGET_MEAN = 0.5;
const TARGET_SIGMA = 0.4;

export function shiftScore(score: number, distribution: Distribution | undefined): number {
  if (!distribution) return score;
  const factor = TARGET_SIGMA / Math.max(distribution.sigma, Number.EPSILON);
  const offset = TARGET_MEAN - factor * distribution.mean;
  const shifted = factor * score + offset;
  if (shifted <= 0) return Number.EPSILON;
  return Math.min(1, shifted);
}
