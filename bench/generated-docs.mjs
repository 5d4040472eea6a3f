/**
 * The 200k-document corpus of keyword-200k.bench.js and served.bench.mjs (not a section itself: its
 * name has no `.bench.`). No real 200k-document text corpus is at hand, so the documents are built
 * from real data: the 36,273 movies of `../shared/data/movies.json` repeated with fresh ids (title,
 * year, cast, genres, extract), each given three GloVe vocabulary words
 * (`../shared/data/glove-100/words.txt`, 200,000 distinct English tokens) as a `keywords` field,
 * so that the vocabulary grows as a larger corpus's would (about 250k words).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `../shared/data` beside the project, looked for upwards (a git worktree sits deeper than the main checkout). */
export function sharedDataDir() {
  for (let dir = dirname(dirname(fileURLToPath(import.meta.url))); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dirname(dir), 'shared', 'data');
    if (existsSync(join(candidate, 'movies.json'))) return candidate;
  }
  throw new Error('../shared/data (movies.json) not found beside the project');
}

/**
 * The `total` documents as NDJSON payloads of `perPayload` documents (the last one may be
 * shorter), one payload at a time: each string ends with a newline; ids run from 1 to `total`.
 */
export function* generatedPayloads(total, perPayload) {
  const data = sharedDataDir();
  const movies = JSON.parse(readFileSync(join(data, 'movies.json'), 'utf8'));
  const vocabulary = readFileSync(join(data, 'glove-100/words.txt'), 'utf8').split('\n').filter((w) => /\p{L}/u.test(w));
  let lines = [];
  for (let i = 0; i < total; i++) {
    const m = movies[i % movies.length];
    const keywords = [0, 1, 2].map((k) => vocabulary[(i * 3 + k) % vocabulary.length]);
    lines.push(JSON.stringify({ title: m.title, year: m.year, cast: m.cast, genres: m.genres, extract: m.extract, keywords, id: i + 1 }));
    if (lines.length === perPayload || i === total - 1) {
      yield lines.join('\n') + '\n';
      lines = [];
    }
  }
}
