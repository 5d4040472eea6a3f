import { describe, expect, it } from 'vitest';
import { keyOrder } from './key-order.js';

/** The order a comparator sort gives (what the flushes used before). */
function reference(keys: readonly string[]): number[] {
  return Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
}

describe('keyOrder', () => {
  it('orders keys as JavaScript compares strings, across the packed classes and past them', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    // Letters, digits, the pair separator, ASCII punctuation and capitals (range classes),
    // accented and non-Latin letters, surrogate pairs; short keys that are prefixes of others.
    const alphabet = ['a', 'b', 'e', 'z', '0', '9', '\u0000', ' ', '-', 'A', '_', '{', '~', '\u007f', 'é', 'è', 'ß', 'ж', '日', '\ud83d\ude00'];
    for (let round = 0; round < 50; round++) {
      const keys = new Set<string>();
      const n = 1 + rnd(3000);
      while (keys.size < n) {
        let key = '';
        for (let i = 0, len = rnd(9); i < len; i++) key += alphabet[rnd(alphabet.length)];
        keys.add(key);
      }
      const list = [...keys];
      expect([...keyOrder(list)]).toEqual(reference(list));
    }
  });

  it('orders words that share long prefixes and differ past the packed characters', () => {
    const list = ['starship', 'stars', 'star', 'starwars', 'star\u0000wars', 'star\u0000war', 'starr', 'stará', 'starà', 'starz'];
    expect(keyOrder(list).map((k) => 0 + k)).toEqual(Uint32Array.from(reference(list)));
    expect([...keyOrder(list)].map((k) => list[k])).toEqual([...list].sort());
  });
});
