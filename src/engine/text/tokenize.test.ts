import { describe, expect, it } from 'vitest';
import { Tokenizer } from './tokenize.js';
import { normalizeWord } from './normalize.js';

const words = (tokens: { word: string }[]) => tokens.map((t) => t.word);

describe('normalizeWord', () => {
  it('folds case, compatibility forms and Latin diacritics', () => {
    expect(normalizeWord('Élan')).toBe('elan');
    expect(normalizeWord('ＡＢＣ')).toBe('abc');
    expect(normalizeWord('ﬁnal')).toBe('final');
    expect(normalizeWord('Straße')).toBe('strasse');
    expect(normalizeWord('Ωμέγα')).toBe('ωμεγα');
    expect(normalizeWord('Хайма')).toBe('хайма');
  });
  it('keeps marks that carry meaning in other scripts', () => {
    expect(normalizeWord('が')).toBe('が');
    expect(normalizeWord('한국')).toBe('한국');
    expect(normalizeWord('हिन्दी')).toBe('हिन्दी');
    expect(normalizeWord('رَأْس')).toBe('راس');
    expect(normalizeWord('Ёлка')).toBe('елка');
  });
});

describe('Tokenizer', () => {
  it('splits on punctuation, counts hard separators as a gap of 8', () => {
    const tokens = new Tokenizer().tokenize("Don't stop. Go on, 3.14");
    expect(words(tokens)).toEqual(['don', 't', 'stop', 'go', 'on', '3', '14']);
    expect(tokens.map((t) => t.position)).toEqual([0, 1, 2, 10, 11, 12, 20]);
    expect(tokens[2]).toMatchObject({ start: 6, end: 10 });
  });
  it('segments CJK and Thai with Intl.Segmenter', () => {
    expect(words(new Tokenizer().tokenize('我爱北京天安门'))).toEqual(['我', '爱', '北京', '天安门']);
    expect(words(new Tokenizer().tokenize('東京都に住んでいます', ['jpn']))).toContain('東京');
    expect(words(new Tokenizer().tokenize('สวัสดีครับ'))).toEqual(['สวัสดี', 'ครับ']);
  });
  it('honours nonSeparatorTokens, separatorTokens and dictionary', () => {
    const t = new Tokenizer({ nonSeparatorTokens: ['#', '+'], separatorTokens: ['&sep'], dictionary: ['J.R.R.'] });
    expect(words(t.tokenize('C++ and C# #tag'))).toEqual(['c++', 'and', 'c#', '#tag']);
    expect(words(t.tokenize('left&sepright'))).toEqual(['left', 'right']);
    expect(words(t.tokenize('J.R.R. Tolkien'))).toEqual(['j.r.r.', 'tolkien']);
  });
  it('flags stop words but keeps their positions', () => {
    const tokens = new Tokenizer({ stopWords: new Set(['the']) }).tokenize('The Lord of the Rings');
    expect(tokens.map((t) => [t.word, t.position, t.stop])).toEqual([
      ['the', 0, true], ['lord', 1, false], ['of', 2, false], ['the', 3, true], ['rings', 4, false],
    ]);
  });
  it('handles non-Latin words with hyphens and astral characters', () => {
    expect(words(new Tokenizer().tokenize('Рас-эль-Хайма رأس الخيمة'))).toEqual(['рас', 'эль', 'хайма', 'راس', 'الخيمة']);
  });
});

describe('indexWords (the indexing path)', () => {
  /** What extraction took from `tokenize`: non-stop words up to maxPosition, and the last position. */
  function viaTokenize(tokenizer: Tokenizer, text: string, first: number, maxPosition: number) {
    const tokens = tokenizer.tokenize(text, null, first);
    const kept = tokens.filter((t) => !t.stop && t.position <= maxPosition);
    return { words: kept.map((t) => t.word), positions: kept.map((t) => t.position), last: tokens.length > 0 ? tokens[tokens.length - 1]!.position : -1 };
  }
  function viaIndexWords(tokenizer: Tokenizer, text: string, first: number, maxPosition: number) {
    const words: string[] = [];
    const positions: number[] = [];
    const last = tokenizer.indexWords(text, null, first, words, positions, maxPosition);
    return { words, positions, last };
  }
  const alphabet = ['a', 'B', 'é', 'Ž', '1', ' ', ' ', '.', ',', '\n', '!', '-', "'", 'ß', 'ﬁ', 'Ω', '\u0301', '😀', '𝐀', '\ud800', '…', '¿', 'я', 'ё', 'ك', '\u064e', '_', '\t', 'x'];
  let seed = 7;
  const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  const randomText = () => Array.from({ length: rnd(60) }, () => alphabet[rnd(alphabet.length)]).join('');

  it('gives the words, positions and last position of tokenize on random texts', () => {
    const plain = new Tokenizer();
    const withStops = new Tokenizer({ stopWords: new Set(['a', 'x', 'the']) });
    for (let n = 0; n < 3000; n++) {
      const text = randomText();
      const first = rnd(3) * 8;
      const max = rnd(4) === 0 ? first + rnd(10) : 65_535;
      for (const t of [plain, withStops]) expect(viaIndexWords(t, text, first, max)).toEqual(viaTokenize(t, text, first, max));
    }
  });

  it('falls back to the full path for segmenter scripts and special tokens, with the same result', () => {
    const special = new Tokenizer({ separatorTokens: ['&'], nonSeparatorTokens: ['#'], dictionary: ['c++'] });
    for (const text of ['東京タワーに行きました. The C++ & C# book', 'ภาษาไทย ง่าย', "rock&roll isn't dead"]) {
      for (const t of [new Tokenizer(), special]) expect(viaIndexWords(t, text, 0, 65_535)).toEqual(viaTokenize(t, text, 0, 65_535));
    }
  });
});
