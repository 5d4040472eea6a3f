import { describe, expect, it } from 'vitest';
import { PackedWords, PackedWordsBuilder } from './packed-words.js';
import { WordDictionary } from './typo.js';
import { movies as filmsFixture } from '../../../test/data.js';
import { osa } from '../../../test/edit-distance.js';

/** Every distinct word of the movies' titles and overviews, accents and other scripts kept. */
function fixtureVocabulary(count: number): string[] {
  const words = filmsFixture()
    .slice(0, count)
    .flatMap((m) => `${m.title} ${m.overview ?? ''}`.toLowerCase().split(/[^\p{L}\p{N}]+/u))
    .filter(Boolean);
  // and words of other scripts (two bytes per unit), with near neighbours
  // and emoji (surrogate pairs) that share a prefix, so that front coding cuts pairs in two
  const others = ['δέλτα', 'δέλτο', 'δάλτα', '日本語', '日本', '本語', 'œuvre', 'œuvres', 'ŝipo', 'ŝipoj', 'łódź', 'łodzie', 'smile\u{1F600}', 'smile\u{1F601}', 'smile\u{1F600}s'];
  return [...new Set([...words, ...others])].sort();
}

/** The typo dictionary's rules on a plain list of strings: within budget, first letter counting two. */
function reference(vocab: readonly string[], q: string, budget: 1 | 2, prefix: boolean): Array<[string, number]> {
  const typos = (w: string): number | undefined => {
    const dist = osa(q, w);
    if (w[0] === q[0]) return dist <= budget ? dist : undefined;
    return budget === 2 && dist <= 1 ? 2 : undefined;
  };
  const out: Array<[string, number]> = [];
  for (const w of vocab) {
    let best = typos(w);
    if (prefix)
      for (let end = 1; end < w.length; end++) {
        const t = typos(w.slice(0, end));
        if (t !== undefined && (best === undefined || t < best)) best = t;
      }
    if (best !== undefined) out.push([w, best]);
  }
  return out.sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

describe('PackedWords', () => {
  it('holds words in JS string order whatever order they come in, each read back as it was', () => {
    // Latin-1 first, then a unit above 255 (widening), surrogate pairs and a unit above them:
    // LMDB's UTF-8 order puts "\u{1F600}" after "\uFFFD", JS order before it.
    const words = ['zebra', 'apple', 'café', 'ça', 'δέλτα', '日本', '\uFFFDx', '\u{1F600}', 'a', '', 'apples', 'äpfel'];
    const packed = PackedWords.from(words);
    const sorted = [...words].sort();
    expect(packed.size).toBe(words.length);
    expect(packed.slice(0, packed.size)).toEqual(sorted);
    sorted.forEach((w, i) => {
      expect(packed.indexOf(w)).toBe(i);
      expect(packed.length(i)).toBe(w.length);
      expect(packed.code(i, w.length)).toBe(-1);
    });
    expect(packed.indexOf('appl')).toBe(-1);
    expect(packed.indexOf('zz')).toBe(-1);
    // Latin-1 words stay one byte per unit: 'abc' whole, 'café' shares nothing with it (7 units),
    // one block (two 4-byte bases), a byte of end and a byte of shared count per word
    const latin = PackedWords.from(['café', 'abc']);
    expect(latin.byteLength).toBe(7 + 2 * 4 + 2 + 2);
  });

  it('reads every word, unit and comparison back as the plain strings give them, across block boundaries', () => {
    // Sorted ids (long shared prefixes), words of other scripts, emoji whose surrogate pairs are
    // cut by the shared prefix, a prefix longer than a shared count can say (255), the empty word.
    const long = 'x'.repeat(300);
    const words = [
      '',
      ...Array.from({ length: 1000 }, (_, i) => String(i * 7)),
      ...['δέλτα', 'δέλτο', 'δάλτα', '日本語', '日本', '本語', 'ŝipo', 'ŝipoj', 'łódź', 'łodzie', 'кот', 'котёнок', 'مرحبا', 'مرحب'],
      ...['\u{1F600}', '\u{1F600}a', '\u{1F601}', '\u{1F600}\u{1F601}', 'a\u{1F600}', 'a\u{1F601}', '\uD83D', '\uFFFD', '\uFFFDx'],
      ...Array.from({ length: 40 }, (_, i) => `${long}${String.fromCharCode(97 + (i % 26))}${i}`),
    ];
    const packed = PackedWords.from([...words].reverse());
    const sorted = [...new Set(words)].sort();
    expect(packed.size).toBe(sorted.length);
    const absent = ['0a', '10000', '\u{1F600}b', 'δ', `${long}`, `${long}zz`, '日本語語', 'zzz'];
    sorted.forEach((w, i) => {
      expect(packed.word(i)).toBe(w);
      expect(packed.length(i)).toBe(w.length);
      for (let d = 0; d <= w.length; d++) expect(packed.code(i, d)).toBe(d < w.length ? w.charCodeAt(d) : -1);
      expect(packed.indexOf(w)).toBe(i);
      expect(packed.lowerBound(w)).toBe(i);
      // against neighbours and keys between words
      for (const key of [sorted[i - 1], sorted[i + 1], w.slice(0, -1), `${w}\u0000`, w.slice(0, 2), ...absent]) {
        if (key === undefined) continue;
        expect(Math.sign(packed.compare(i, key))).toBe(w < key ? -1 : w > key ? 1 : 0);
        expect(packed.startsWith(i, key)).toBe(w.startsWith(key));
      }
    });
    for (const key of absent) {
      expect(packed.indexOf(key)).toBe(-1);
      expect(packed.lowerBound(key)).toBe(sorted.filter((w) => w < key).length);
    }
    // sorted ids cost a few units each: about 2 bytes a word beside the units they do not share
    const ids = PackedWords.from(Array.from({ length: 100_000 }, (_, i) => String(i)));
    expect(ids.byteLength).toBeLessThan(100_000 * 4.5); // flat: 8.9 bytes a word
    expect(ids.indexOf('99999')).toBe(100_000 - 1);
  });

  it('keeps blocks of very long words (ends past 65,535 units in a block)', () => {
    const words = Array.from({ length: 40 }, (_, i) => `${String.fromCharCode(97 + (i % 3)).repeat(5000)}${i}`);
    const packed = PackedWords.from(words);
    const sorted = [...words].sort();
    expect(packed.slice(0, packed.size)).toEqual(sorted);
    sorted.forEach((w, i) => {
      expect(packed.indexOf(w)).toBe(i);
      expect(packed.code(i, w.length - 1)).toBe(w.charCodeAt(w.length - 1));
    });
  });

  it('drops duplicates and sorts only what came out of order', () => {
    const builder = new PackedWordsBuilder();
    for (const w of ['b', 'a', 'b', 'c']) builder.add(w);
    expect(builder.finish().slice(0, 3)).toEqual(['a', 'b', 'c']);
  });
});

describe('WordDictionary over packed words, against a plain list of strings', () => {
  const vocab = fixtureVocabulary(600);
  const dict = new WordDictionary(vocab);

  it('holds the fixture vocabulary, non-ASCII words included', () => {
    expect(vocab.some((w) => [...w].some((c) => c.charCodeAt(0) > 0xff))).toBe(true);
    expect(dict.size).toBe(vocab.length);
    expect(dict.words.slice(0, dict.size)).toEqual(vocab);
    for (const w of vocab.filter((_, i) => i % 97 === 0)) {
      expect(dict.has(w)).toBe(true);
      expect(dict.has(`${w}\u0000`)).toBe(false);
    }
  });

  it('enumerates the words of a prefix as a filter of the list does', () => {
    const prefixes = new Set<string>();
    for (const w of vocab.filter((_, i) => i % 53 === 0)) for (let n = 1; n <= Math.min(4, w.length); n++) prefixes.add(w.slice(0, n));
    for (const p of ['', 'zzzz', 'é', 'ü']) prefixes.add(p);
    for (const prefix of prefixes) {
      const want = vocab.filter((w) => w.startsWith(prefix));
      expect({ prefix, got: dict.wordsWithPrefix(prefix) }).toEqual({ prefix, got: want });
      expect(dict.wordsWithPrefix(prefix, 3)).toEqual(want.slice(0, 3));
      const [lo, hi] = dict.prefixRange(prefix);
      expect(hi - lo).toBe(want.length);
    }
  });

  it('finds the typo candidates a brute force over the list finds, in the same order, with a limit', () => {
    const queries = ['godfahter', 'lvoe', 'nigth', 'wrold', 'amérque', 'famly', 'détctive', 'δέτλα', 'œvure', 'ŝpo', 'lódź', '日本x', 'smlie\u{1F600}', 'smile\u{1F602}'];
    // words of the vocabulary with one edit each, non-ASCII ones among them
    for (const w of vocab.filter((x, i) => i % 401 === 0 && x.length >= 5)) queries.push(w.slice(0, 2) + w.slice(3));
    for (const q of queries)
      for (const budget of [1, 2] as const)
        for (const prefix of [false, true]) {
          const want = reference(vocab, q, budget, prefix);
          const got = dict.fuzzy(q, budget, prefix, 100_000).map((m) => [m.word, m.typos]);
          expect({ q, budget, prefix, got }).toEqual({ q, budget, prefix, got: want });
          expect(dict.fuzzy(q, budget, prefix, 5).map((m) => [m.word, m.typos])).toEqual(want.slice(0, 5));
        }
  });
});
