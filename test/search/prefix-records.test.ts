/**
 * A short last word stands for more words than the ranking rules list (256): its record
 * (kw-prefix-parts, see PREFIX_RECORD_MIN_WORDS) says in which field and at which position its
 * words are, so the first keystrokes rank by where the typed letters start a word. A longer
 * prefix past that bound has no record: it is ranked as before, and its hits must still come
 * whole and once through pagination.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { movies } from '../data.js';
import { tempEngine } from '../engine/helpers.js';

let engine: Engine;
let cleanup: () => Promise<void>;

async function settled(task: Promise<{ taskUid: number }>): Promise<void> {
  const done = await engine.waitForTask((await task).taskUid, { timeoutMs: 120_000 });
  expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
}

beforeAll(async () => {
  ({ engine, cleanup } = await tempEngine({ searchThreads: 0 }));
  await settled(engine.updateSettings('movies', { searchableAttributes: ['title', 'cast', 'genres', 'extract'] }));
  await settled(engine.addDocuments('movies', movies(), { primaryKey: 'id' }));
  // 300 words of one 5-letter prefix: past the bound, and too long for a record
  const tags = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `zebra${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))} ${i % 3 === 0 ? 'zebra' : 'plain'} stripes`, note: i % 2 ? 'zebra crossing' : 'a horse' }));
  await settled(engine.addDocuments('tags', tags, { primaryKey: 'id' }));
}, 180_000);
afterAll(async () => {
  await cleanup();
});

const titles = async (q: string, limit = 10): Promise<string[]> => ((await engine.search('movies', { q, limit, attributesToRetrieve: ['title'] })).hits as Array<{ title: string }>).map((h) => h.title);

/** Whether `title` holds the typed words, the last one as a word's start. */
function holds(title: string, q: string): boolean {
  const words = title.toLowerCase().split(/[^a-z0-9]+/);
  const typed = q.split(' ');
  const last = typed.pop()!;
  return typed.every((w) => words.includes(w)) && words.some((w) => w.startsWith(last));
}

describe('a short last word with a record', () => {
  test.each(['the g', 'fa', 'bl', 'the d', 'lo', 'the c'])('%j: the first hits hold what was typed in their title', async (q) => {
    const top = await titles(q, 5);
    expect(top.length).toBe(5);
    for (const title of top) expect(holds(title, q), JSON.stringify(top)).toBe(true);
  });

  test('`the g`: a title starting "The G…" ranks before one with the letter g alone (G.I. Joe)', async () => {
    const top = await titles('the g', 20);
    expect(top.filter((t) => /^the g[a-z]/i.test(t)).length, JSON.stringify(top)).toBeGreaterThanOrEqual(17);
    expect(top.slice(0, 10).some((t) => t.startsWith('G.I. Joe')), JSON.stringify(top)).toBe(false);
  });
});

describe('a prefix past the bound without a record', () => {
  test('every hit comes once, page after page', async () => {
    const seen: number[] = [];
    for (let offset = 0; offset < 320; offset += 25) {
      const page = await engine.search('tags', { q: 'zebra', offset, limit: 25, attributesToRetrieve: ['id'] });
      seen.push(...(page.hits as Array<{ id: number }>).map((h) => h.id));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i));
  });
});
