/**
 * The order of a batch's keys (UTF-16 code unit order, as JavaScript's `<` compares strings).
 *
 * A flush sorts hundreds of thousands of keys (the movies: 240k pair keys, 155k values) so that
 * its B-tree writes are sequential. Sorting their numbers with a comparator calling back into
 * JavaScript took 5-6% of the write thread. Here each key's first characters are packed into a
 * number beside the key's own number, those numbers sorted natively (a Float64Array sorts
 * without calling back), and only keys whose packed characters tie are compared as strings.
 */

/** Key numbers take the low bits of the packed number; more keys than this fall back to the comparator. */
const INDEX_BITS = 22;
const INDEX = 2 ** INDEX_BITS;
/** Characters packed per key, CLASS_BITS each: 5 x 6 + 22 = 52 bits, exact in a double. */
const PACKED_CHARS = 5;
const CLASS_BITS = 6;
const CLASSES = 2 ** CLASS_BITS;

/**
 * The class of each ASCII code unit, in code unit order. Class 0 is "no character" (the key
 * ended), which sorts before any character. A class holding one code unit (the separator \0,
 * digits, lower-case letters: what normalized words are made of) is exact, and packing goes on
 * past it; a class standing for a range of code units (everything else) stops the packing, as
 * the characters after it only matter between keys with the same code unit there.
 */
const CLASS = new Uint8Array(128);
const EXACT = new Uint8Array(CLASSES);
const RANGE_BEFORE_DIGITS = 2;
const RANGE_BEFORE_LETTERS = 13;
const RANGE_AFTER = 40;
for (let u = 0; u < 128; u++) {
  CLASS[u] = u === 0 ? 1 : u < 48 ? RANGE_BEFORE_DIGITS : u < 58 ? 3 + u - 48 : u < 97 ? RANGE_BEFORE_LETTERS : u < 123 ? 14 + u - 97 : RANGE_AFTER;
}
for (let c = 1; c < CLASSES; c++) EXACT[c] = c === RANGE_BEFORE_DIGITS || c === RANGE_BEFORE_LETTERS || c >= RANGE_AFTER ? 0 : 1;

/** The packed classes of `key`'s first characters: keys in order have packed values in order (ties allowed). */
function packed(key: string): number {
  let value = 0;
  let open = true;
  for (let i = 0; i < PACKED_CHARS; i++) {
    let cls = 0;
    if (open && i < key.length) {
      const u = key.charCodeAt(i);
      cls = u < 128 ? CLASS[u]! : RANGE_AFTER;
      if (EXACT[cls] === 0) open = false;
    }
    value = value * CLASSES + cls;
  }
  return value;
}

/**
 * The numbers 0..count-1 ordered by `keyOf` of each, ascending (keys are distinct, or equal
 * keys come in an unspecified order).
 */
export function orderByKey(count: number, keyOf: (k: number) => string): Uint32Array {
  const order = new Uint32Array(count);
  const compare = (a: number, b: number): number => (keyOf(a) < keyOf(b) ? -1 : 1);
  if (count >= INDEX) {
    for (let k = 0; k < count; k++) order[k] = k;
    return order.sort(compare);
  }
  const sorted = new Float64Array(count);
  for (let k = 0; k < count; k++) sorted[k] = packed(keyOf(k)) * INDEX + k;
  sorted.sort();
  for (let i = 0; i < count; ) {
    const prefix = Math.floor(sorted[i]! / INDEX);
    const base = prefix * INDEX;
    let j = i;
    while (j < count && sorted[j]! < base + INDEX) {
      order[j] = sorted[j]! - base;
      j++;
    }
    if (j - i > 1) order.subarray(i, j).sort(compare);
    i = j;
  }
  return order;
}

/** The numbers of `keys` in the order of their keys. */
export function keyOrder(keys: readonly string[]): Uint32Array {
  return orderByKey(keys.length, (k) => keys[k]!);
}
