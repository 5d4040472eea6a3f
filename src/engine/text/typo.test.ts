import { describe, expect, it } from 'vitest';
import { WordDictionary, allowedTypos, type TypoRules } from './typo.js';

const dict = new WordDictionary(
  ['abc', 'bat', 'batman', 'batmobile', 'batsman', 'catman', 'hatman', 'superman', 'supermen', 'tabman', 'btaman', 'atman', 'bbatman'].sort(),
);
const asMap = (m: { word: string; typos: number }[]) => Object.fromEntries(m.map((x) => [x.word, x.typos]));

/** Reference Damerau (optimal string alignment) distance. */
function osa(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[a.length]![b.length]!;
}

describe('WordDictionary.fuzzy', () => {
  it('counts a transposition as one typo and keeps the first letter under a one-typo budget', () => {
    expect(asMap(dict.fuzzy('batmna', 1, false))).toEqual({ batman: 1 });
    expect(asMap(dict.fuzzy('batman', 1, false))).toEqual({ batman: 0, batsman: 1, bbatman: 1, btaman: 1 });
  });
  it('allows a different first letter only as the single edit, counted as two typos', () => {
    const m = asMap(dict.fuzzy('batman', 2, false));
    expect(m).toMatchObject({ batman: 0, batsman: 1, catman: 2, hatman: 2, atman: 2, btaman: 1 });
    expect(m.tabman).toBeUndefined(); // first letter changed plus another edit
  });
  it('matches prefixes with typos for the last query word', () => {
    expect(asMap(dict.fuzzy('batmo', 1, true))).toEqual({ batmobile: 0, batman: 1 });
    expect(asMap(dict.fuzzy('bat', 0, true))).toEqual({ bat: 0, batman: 0, batmobile: 0, batsman: 0 });
  });
  it('agrees with a brute-force distance on a real vocabulary', async () => {
    const { readFileSync } = await import('node:fs');
    const movies = JSON.parse(readFileSync('../shared/data/movies.json', 'utf8')) as { title: string }[];
    const vocab = [...new Set(movies.slice(0, 5000).flatMap((m) => m.title.toLowerCase().split(/[^a-z0-9]+/)).filter(Boolean))].sort();
    const d = new WordDictionary(vocab);
    for (const q of ['godfahter', 'sprmn', 'matrix', 'lvoe', 'nigth']) {
      const got = asMap(d.fuzzy(q, 2, false, 10_000));
      const want: Record<string, number> = {};
      for (const w of vocab) {
        const dist = osa(q, w);
        if (w[0] === q[0] ? dist <= 2 : dist <= 1) want[w] = w[0] === q[0] ? dist : 2;
      }
      expect(got).toEqual(want);
    }
  });
});

describe('allowedTypos', () => {
  const rules: TypoRules = { enabled: true, oneTypo: 5, twoTypos: 9, disableOnWords: new Set(['batman']), disableOnNumbers: true };
  it('follows word length, disabled words and numbers', () => {
    expect(allowedTypos('bat', rules)).toBe(0);
    expect(allowedTypos('robin', rules)).toBe(1);
    expect(allowedTypos('superheroe', rules)).toBe(2);
    expect(allowedTypos('batman', rules)).toBe(0);
    expect(allowedTypos('123456789', rules)).toBe(0);
  });
});
