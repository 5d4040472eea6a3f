import { afterEach, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import { openTestIndex, type TestIndex } from './helpers.js';

const docs = [
  { id: 1, title: 'Batman Begins', tag: 'C# guide', sku: 'ABCDEF1234' },
  { id: 2, title: 'Batmobile Stories', tag: 'C guide', sku: 'ABCDEF1235' },
  { id: 3, title: 'Superman Returns', tag: 'hero|villain', sku: 'XYZ' },
  { id: 4, title: 'The Man who was Bat', tag: 'noir', sku: '987654321' },
];
let t: TestIndex | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});
const ids = (r: { hits: Array<Record<string, unknown>> }) => r.hits.map((h) => h.id);

describe('typo tolerance settings', () => {
  it('default rules: 1 typo from 5 chars, none below, first-letter typo needs a 2-typo word', () => {
    t = openTestIndex();
    t.add(docs);
    expect(ids(search(t.index, { q: 'batmna ' }))).toEqual([1]);
    expect(ids(search(t.index, { q: 'btman ' }))).toEqual([1]); // one edit on a 5-letter word is fine...
    expect(ids(search(t.index, { q: 'vatman ' }))).toEqual([]); // ...but a first-letter typo counts as two
    expect(ids(search(t.index, { q: 'supreman ' }))).toEqual([3]);
  });
  it('disableOnWords, disableOnAttributes, disableOnNumbers, minWordSizeForTypos, enabled', () => {
    t = openTestIndex();
    t.add(docs);
    t.setSettings({ typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 3, twoTypos: 6 }, disableOnWords: ['batmen'], disableOnAttributes: ['sku'], disableOnNumbers: true } });
    expect(ids(search(t.index, { q: 'bta ' }))).toEqual([4]); // 3 letters now allow one typo
    expect(ids(search(t.index, { q: 'vatman ' }))).toEqual([1]); // 6 letters: two typos, first-letter typo allowed
    expect(ids(search(t.index, { q: 'batmen ' }))).toEqual([]); // a query word listed in disableOnWords
    expect(ids(search(t.index, { q: 'batmna ' }))).toEqual([1]);
    expect(ids(search(t.index, { q: 'abcdef1236 ' }))).toEqual([]);
    expect(ids(search(t.index, { q: 'abcdef1234 ' }))).toEqual([1]);
    expect(ids(search(t.index, { q: '987654320 ' }))).toEqual([]);
    t.setSettings({ typoTolerance: { ...t.index.settings.typoTolerance, enabled: false } });
    expect(ids(search(t.index, { q: 'batmna ' }))).toEqual([]);
  });
});

describe('text settings', () => {
  it('nonSeparatorTokens and separatorTokens change what a word is', () => {
    t = openTestIndex();
    t.add(docs);
    expect(ids(search(t.index, { q: 'c# ' })).sort()).toEqual([1, 2]);
    t.setSettings({ nonSeparatorTokens: ['#'], separatorTokens: ['|'] });
    expect(ids(search(t.index, { q: 'c# ' }))).toEqual([1]);
    expect(ids(search(t.index, { q: 'villain ' }))).toEqual([3]);
  });
  it('prefixSearch disabled matches whole words only', () => {
    t = openTestIndex();
    t.add(docs);
    expect(ids(search(t.index, { q: 'batm' })).sort()).toEqual([1, 2]);
    t.setSettings({ prefixSearch: 'disabled' });
    expect(ids(search(t.index, { q: 'batm' }))).toEqual([]);
  });
  it('ranks by proximity, and only by attribute with proximityPrecision byAttribute', () => {
    t = openTestIndex();
    t.add([
      { id: 1, text: 'man of the year who was a bat' },
      { id: 2, text: 'bat man' },
    ]);
    expect(ids(search(t.index, { q: 'bat man ' }))).toEqual([2, 1]);
    const details = search(t.index, { q: 'bat man ', showRankingScoreDetails: true }).hits.map((h) => (h._rankingScoreDetails as any).proximity.score);
    expect(details[0]).toBe(1);
    expect(details[1]).toBeLessThan(1);
    t.setSettings({ proximityPrecision: 'byAttribute' });
    const flat = search(t.index, { q: 'bat man ', showRankingScoreDetails: true }).hits.map((h) => (h._rankingScoreDetails as any).proximity.score);
    expect(flat).toEqual([1, 1]);
  });
});
