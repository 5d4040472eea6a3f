import { describe, expect, it } from 'vitest';
import { WordDictionary, allowedTypos, type TypoRules } from './typo.js';
import { movies as filmsFixture } from '../../../test/data.js';
import { osa } from '../../../test/edit-distance.js';

const dict = new WordDictionary(
  ['abc', 'bat', 'batman', 'batmobile', 'batsman', 'catman', 'hatman', 'superman', 'supermen', 'tabman', 'btaman', 'atman', 'bbatman'].sort(),
);
const asMap = (m: readonly { word: string; typos: number }[]) => Object.fromEntries(m.map((x) => [x.word, x.typos]));

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
  it('keeps derivations apart by budget, prefix and limit when it answers from the ones it kept', () => {
    const d = new WordDictionary(['batman', 'batmobile', 'batsman', 'catman', 'bbatman', 'btaman'].sort());
    for (let pass = 0; pass < 2; pass++) {
      expect(asMap(d.fuzzy('batmo', 1, true))).toEqual({ batmobile: 0, batman: 1 });
      expect(asMap(d.fuzzy('batmo', 1, false))).toEqual({});
      expect(asMap(d.fuzzy('batman', 1, false))).toEqual({ batman: 0, batsman: 1, bbatman: 1, btaman: 1 });
      expect(asMap(d.fuzzy('batman', 2, false))).toMatchObject({ batman: 0, catman: 2 });
      expect(d.fuzzy('batman', 1, false, 2).map((m) => m.word)).toEqual(['batman', 'batsman']);
    }
  });
  it('agrees with a brute-force distance on a real vocabulary', async () => {
    const movies = filmsFixture();
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
  it('agrees with brute force on random typos, for both budgets, as a word and as a prefix', async () => {
    const movies = filmsFixture();
    const vocab = [...new Set(movies.slice(0, 1500).flatMap((m) => m.title.toLowerCase().split(/[^a-z0-9]+/)).filter(Boolean))].sort();
    const d = new WordDictionary(vocab);
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    /** Within budget under the first-letter rule: the typos counted, or undefined. */
    const typos = (q: string, w: string, budget: number): number | undefined => {
      const dist = osa(q, w);
      if (w[0] === q[0]) return dist <= budget ? dist : undefined;
      return budget === 2 && dist <= 1 ? 2 : undefined;
    };
    for (let n = 0; n < 40; n++) {
      const word = vocab[random(vocab.length)]!;
      const chars = [...word];
      // One or two random edits: substitution, deletion, insertion or transposition.
      for (let e = random(2); e >= 0; e--) {
        const at = random(chars.length + 1);
        const op = random(4);
        const letter = 'abcdefghijklmnopqrstuvwxyz'[random(26)]!;
        if (op === 0 && at < chars.length) chars[at] = letter;
        else if (op === 1 && chars.length > 2 && at < chars.length) chars.splice(at, 1);
        else if (op === 2) chars.splice(at, 0, letter);
        else if (at + 1 < chars.length) [chars[at], chars[at + 1]] = [chars[at + 1]!, chars[at]!];
      }
      const q = chars.join('');
      for (const budget of [1, 2] as const) {
        const want: Record<string, number> = {};
        const wantPrefix: Record<string, number> = {};
        for (const w of vocab) {
          const t = typos(q, w, budget);
          if (t !== undefined) want[w] = t;
          let best: number | undefined;
          for (let end = 1; end <= w.length; end++) {
            const tp = typos(q, w.slice(0, end), budget);
            if (tp !== undefined && (best === undefined || tp < best)) best = tp;
          }
          if (best !== undefined) wantPrefix[w] = best;
        }
        expect({ q, budget, got: asMap(d.fuzzy(q, budget, false, 100_000)) }).toEqual({ q, budget, got: want });
        expect({ q, budget, prefix: asMap(d.fuzzy(q, budget, true, 100_000)) }).toEqual({ q, budget, prefix: wantPrefix });
      }
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
