import { describe, expect, it } from 'vitest';
import { Vocabulary } from './vocabulary.js';
import { PackedWords } from '../../text/packed-words.js';
import { movies as filmsFixture } from '../../../../test/data.js';

/** Blocks of `size` ids as kw-id-blocks holds them. */
function blocks(words: ReadonlyArray<string | null>, size = 256): Array<{ base: number; words: Array<string | null> }> {
  const out = [];
  for (let base = 0; base < words.length; base += size) out.push({ base, words: words.slice(base, base + size) });
  return out;
}

describe('Vocabulary', () => {
  it('maps words to ids and back as a map and an array of the words do, on a fixture vocabulary', () => {
    const words = [...new Set(filmsFixture().slice(0, 800).flatMap((m) => `${m.title} ${m.overview ?? ''}`.toLowerCase().split(/[^\p{L}\p{N}]+/u)).filter(Boolean))];
    // ids in first-seen order, with holes (words that left the index) and words of other scripts
    const byId: Array<string | null> = [];
    words.forEach((w, i) => {
      byId.push(w);
      if (i % 37 === 0) byId.push(null);
    });
    byId.push('δέλτα', '日本語', 'œuvre');
    const ids = new Map<string, number>();
    byId.forEach((w, id) => w !== null && ids.set(w, id));
    const vocab = Vocabulary.load(blocks(byId));
    expect(vocab.size).toBe(byId.length);
    for (const [w, id] of ids) expect(vocab.idOf(w)).toBe(id);
    for (const missing of ['', 'zzzzqq', 'δέλτ', 'œuvres']) expect(vocab.idOf(missing)).toBeUndefined();
    byId.forEach((w, id) => {
      expect(vocab.word(id)).toBe(w ?? undefined);
      for (const prefix of ['a', 'th', 'δέ', w?.slice(0, 3) ?? 'x']) expect(vocab.startsWith(id, prefix)).toBe(w !== null && w.startsWith(prefix));
    });
    const packed = PackedWords.from([...ids.keys(), 'notaword']);
    for (let i = 0; i < packed.size; i++) expect(vocab.idOfPacked(packed, i)).toBe(ids.get(packed.word(i)) ?? -1);
  });

  it('gives a word re-added after it left the index its newest id, its old id still reading the word', () => {
    const vocab = Vocabulary.load(blocks(['alpha', 'beta', null, 'gamma', 'beta'], 2));
    expect(vocab.idOf('beta')).toBe(4);
    expect(vocab.word(1)).toBe('beta');
    expect(vocab.startsWith(1, 'be')).toBe(true);
    expect(vocab.word(2)).toBeUndefined();
    expect(vocab.size).toBe(5);
  });

  it('is empty without words', () => {
    const vocab = Vocabulary.load([]);
    expect(vocab.size).toBe(0);
    expect(vocab.idOf('a')).toBeUndefined();
    expect(vocab.startsWith(0, 'a')).toBe(false);
  });
});
