/** Where `slot` sits in an ascending array of slots, -1 when absent (a binary search). */
export function indexOfSlot(sorted: Uint32Array, slot: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = sorted[mid]!;
    if (v === slot) return mid;
    if (v < slot) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
