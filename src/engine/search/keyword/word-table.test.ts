import { describe, expect, it } from 'vitest';
import { WordTable } from './word-table.js';

describe('WordTable', () => {
  it('finds every word it was given, as a Map does, across growth and after clear', () => {
    const table = new WordTable<{ word: string; n: number }>();
    const map = new Map<string, { word: string; n: number }>();
    let seed = 3;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const letters = 'abcdeéz09\u0000日';
    for (let round = 0; round < 2; round++) {
      let wrong = 0;
      for (let i = 0; i < 60_000; i++) {
        let word = '';
        for (let j = 0, len = 1 + rnd(8); j < len; j++) word += letters[rnd(letters.length)];
        // a fresh string each time, as the tokenizer slices them
        word = word.split('').join('');
        const got = table.getOrAdd(word, (w) => ({ word: w, n: table.size }));
        const known = map.get(word);
        if (known ? got !== known : got.word !== word || got.n !== map.size) wrong++;
        if (!known) map.set(word, got);
      }
      expect(wrong).toBe(0);
      // past the table's first growth (32,768 words)
      expect(map.size).toBeGreaterThan(40_000);
      expect(table.size).toBe(map.size);
      table.clear();
      map.clear();
      expect(table.size).toBe(0);
    }
  });
});
