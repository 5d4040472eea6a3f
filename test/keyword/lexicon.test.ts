/**
 * The lexicon (src/engine/search/keyword/lexicon.ts): the write side stores an index's typo
 * dictionary, vocabulary and dictionary ids with each batch, and a search after the commit reads
 * them instead of rebuilding them. What users rely on: the stored structures are those a rebuild
 * gives, searches answer the same with or without them, and one left stale by a later transaction
 * is never used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { search } from '../../src/engine/search/index.js';
import { keywordDbs } from '../../src/engine/search/keyword/layout.js';
import { buildDictionary, buildDictionaryIds, buildVocabulary, decodeLexicon, dropLexicon, encodeLexicon, readLexicon, worthStoring } from '../../src/engine/search/keyword/lexicon.js';
import { bumpKeywordGeneration } from '../../src/engine/search/keyword/layout.js';
import { movies } from '../data.js';
import { openTestIndex, type TestIndex } from './helpers.js';

const QUERIES = ['star wars', 'the b', 'matrx', 'lord of the rings', 'jon', 'a', 'zz', 'Москва', '東京', 'sci fi'];

/** Words beyond one byte a code unit, so that both unit widths are stored. */
const WIDE = [
  { id: 900001, title: 'Москва слезам не верит', genres: ['Drama'] },
  { id: 900002, title: '東京物語', genres: ['Drama'] },
];

function answers(t: TestIndex): unknown[] {
  return QUERIES.map((q) => search(t.index, { q, limit: 10, showRankingScoreDetails: true }).hits.map((h) => [h.id, h._rankingScoreDetails]));
}

/**
 * The same searches with the stored lexicon removed: every structure rebuilt from the databases.
 * Put back afterwards, it carries an older commit than the index's: stale from then on.
 */
function answersRebuilt(t: TestIndex): unknown[] {
  const store = t.index.store;
  const dbs = keywordDbs(store);
  const stored = dbs.meta.get('lexicon') as Uint8Array | undefined;
  store.write(() => dropLexicon(dbs));
  bumpKeywordGeneration(store);
  try {
    return answers(t);
  } finally {
    if (stored) store.write(() => dbs.meta.putSync('lexicon', Buffer.from(stored)));
    bumpKeywordGeneration(store);
  }
}

function expectStoredMatchesRebuilt(t: TestIndex): void {
  const store = t.index.store;
  const dbs = keywordDbs(store);
  const lexicon = readLexicon(dbs, store.commit);
  expect(lexicon).not.toBeNull();
  const dictionary = buildDictionary(dbs);
  const vocabulary = buildVocabulary(dbs);
  const words = (d: typeof dictionary) => Array.from({ length: d.size }, (_, i) => d.words.word(i));
  const ids = (v: typeof vocabulary) => Array.from({ length: v.size }, (_, id) => v.word(id));
  expect(words(lexicon!.dictionary)).toEqual(words(dictionary));
  expect(ids(lexicon!.vocabulary)).toEqual(ids(vocabulary));
  for (const word of ['star', 'wars', 'москва', '東京物語', 'nowordlikethis']) expect(lexicon!.vocabulary.idOf(word)).toBe(vocabulary.idOf(word));
  expect([...lexicon!.dictionaryIds]).toEqual([...buildDictionaryIds(dictionary, vocabulary)]);
}

describe('the stored lexicon', () => {
  let t: TestIndex;
  // whatever this machine's memory (a limit below 4 GiB stores none, see the last test)
  const setting = process.env.SEARCH_STORED_LEXICON;
  beforeAll(() => {
    process.env.SEARCH_STORED_LEXICON = 'on';
    t = openTestIndex({ searchableAttributes: ['title', 'cast', 'genres', 'extract'] });
  });
  afterAll(async () => {
    if (setting === undefined) delete process.env.SEARCH_STORED_LEXICON;
    else process.env.SEARCH_STORED_LEXICON = setting;
    await t.close();
  });

  it('is stored with each batch and holds what a rebuild gives; searches answer the same with or without it', async () => {
    const docs = movies();
    t.add(docs.slice(0, Math.floor(docs.length / 2)));
    expectStoredMatchesRebuilt(t);
    await t.addPrepared([...docs.slice(Math.floor(docs.length / 2)), ...WIDE]);
    expectStoredMatchesRebuilt(t);
    expect(answers(t)).toEqual(answersRebuilt(t));
  });

  it('follows updates, deletions and a settings change that re-indexes', async () => {
    const docs = movies();
    t.add(docs.slice(0, 50).map((d) => ({ ...d, title: `${String(d.title)} remastered` })), 'update');
    t.remove(docs.slice(50, 120).map((d) => String(d.id)));
    expectStoredMatchesRebuilt(t);
    expect(answers(t)).toEqual(answersRebuilt(t));
    await t.setSettingsPrepared({ searchableAttributes: ['title', 'genres'] });
    expectStoredMatchesRebuilt(t);
    expect(answers(t)).toEqual(answersRebuilt(t));
  });

  it('follows words that leave the index and come back', async () => {
    const gone = [{ id: 910001, title: 'Xylophonist Quixotry', genres: ['Zarzuela'] }];
    t.add(gone);
    expectStoredMatchesRebuilt(t);
    t.remove(['910001']);
    expectStoredMatchesRebuilt(t);
    expect(search(t.index, { q: 'xylophonist' }).hits).toEqual([]);
    await t.addPrepared(gone);
    expectStoredMatchesRebuilt(t);
    expect(search(t.index, { q: 'xylophonist quixotry' }).hits.map((h) => h.id)).toEqual([910001]);
    expect(answers(t)).toEqual(answersRebuilt(t));
  });

  it('is not used once a later transaction changed the index without storing it', () => {
    const store = t.index.store;
    const dbs = keywordDbs(store);
    t.add([{ id: 900003, title: 'Stalker', genres: ['Science Fiction'] }]);
    const before = store.commit;
    expect(readLexicon(dbs, before)).not.toBeNull();
    const expected = answersRebuilt(t);
    store.write(() => store.touch(new Date().toISOString()));
    expect(store.commit).toBeGreaterThan(before);
    expect(readLexicon(dbs, store.commit)).toBeNull();
    // the searches rebuild what they need and answer as before
    expect(search(t.index, { q: 'stalkr' }).hits.map((h) => h.id)).toContain(900003);
    expect(answers(t)).toEqual(expected);
  });
});

describe('lexicon bytes', () => {
  it('come back as the same structures, and only for the commit they carry', () => {
    const t = openTestIndex();
    try {
      t.add([...movies().slice(0, 200), ...WIDE]);
      const dbs = keywordDbs(t.index.store);
      const dictionary = buildDictionary(dbs);
      const vocabulary = buildVocabulary(dbs);
      const bytes = encodeLexicon({ dictionary, vocabulary, dictionaryIds: buildDictionaryIds(dictionary, vocabulary) }, 41);
      expect(decodeLexicon(bytes, 42)).toBeNull();
      // at any byte offset (stored values come back as slices of larger buffers)
      const shifted = Buffer.alloc(bytes.length + 3);
      bytes.copy(shifted, 3);
      const back = decodeLexicon(shifted.subarray(3), 41)!;
      expect(back.dictionary.size).toBe(dictionary.size);
      expect(back.dictionary.prefixRange('mo')).toEqual(dictionary.prefixRange('mo'));
      expect(back.vocabulary.idOf('москва')).toBe(vocabulary.idOf('москва'));
      expect(back.vocabulary.idOf('東京物語')).toBe(vocabulary.idOf('東京物語'));
      expect(decodeLexicon(Buffer.from('not a lexicon at all, just bytes'), 41)).toBeNull();
    } finally {
      void t.close();
    }
  });
});

it('is stored for a batch worth its build, dropped for a small batch on a large index or under a memory limit', () => {
  const GiB = 2 ** 30;
  expect(worthStoring(40_000, 1, 8 * GiB, undefined)).toBe(true);
  expect(worthStoring(100_000, 9_000, 8 * GiB, undefined)).toBe(true);
  expect(worthStoring(500_000, 1_000, 8 * GiB, undefined)).toBe(false);
  // under a container's limit below 4 GiB the write side keeps its memory for the batch
  expect(worthStoring(40_000, 1, 512 * 2 ** 20, undefined)).toBe(false);
  expect(worthStoring(40_000, 1, 512 * 2 ** 20, 'on')).toBe(true);
  expect(worthStoring(40_000, 1, 8 * GiB, 'off')).toBe(false);
});
