/**
 * The real data sets the tests read, committed under `fixtures/data/`: small subsets of the
 * shared data sets, written by `fixtures/make-data-fixtures.mjs` (sources, subsets and licences
 * in `fixtures/data/README.md`). Every test gets its data from here: no test names a data file.
 *
 * Parsed documents are cached per test file (each file runs in its own module graph): treat the
 * arrays and their documents as read-only, copy before changing one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Document } from '../src/engine/types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DATA = join(ROOT, 'fixtures', 'data');

const cache = new Map<string, unknown>();
function json<T>(rel: string): T {
  if (!cache.has(rel)) cache.set(rel, JSON.parse(readFileSync(join(DATA, rel), 'utf8')));
  return cache.get(rel) as T;
}

export interface Movie {
  id: number;
  title: string;
  year: number;
  cast: string[];
  genres: string[];
  href?: string | null;
  extract?: string;
  thumbnail?: string;
  thumbnail_width?: number;
  thumbnail_height?: number;
  [field: string]: unknown;
}

/**
 * 7,943 films from English Wikipedia in their original order (ids 1-36273 as in the full data
 * set): the first 3,000 (1900-1918), every 40th film from 1918 to 2009 (every year is there), every
 * 1993 film with an extract, and the last 4,000 (2009-2023). So `movies().slice(0, 3000)` are the
 * 3,000 oldest films and `movies().slice(-4000)` the 4,000 most recent, as in the full set.
 */
export function movies(): Movie[] {
  return json<Movie[]>('movies.json');
}

/** Meilisearch's 244 books (primary key `id`; `isbn13` is unique too). */
export function books(): Document[] {
  return json<Document[]>('meili-datasets/books.json');
}

/** Meilisearch's 200 restaurants (primary key `id`). */
export function restaurants(): Document[] {
  return json<Document[]>('meili-datasets/restaurants.json');
}

export interface City {
  geonameid: string;
  name: string;
  asciiname: string;
  alternatenames: string;
  _geo: { lat: number; lng: number };
  'country code': string;
  population: number;
  timezone: string;
  country: string;
  [field: string]: unknown;
}

/** All 4,449 world cities of Meilisearch's data set (primary key `geonameid`). */
export function worldCities(): City[] {
  return json<City[]>('meili-datasets/world-cities.json');
}

export const GLOVE_DIM = 100;
/** Rows in the GloVe base subset: row i is row 33 * i of the full 200,000-row set (every word frequency). */
export const GLOVE_BASE_ROWS = 6000;
export const GLOVE_QUERY_ROWS = 150;

function f32Rows(rel: string, rows: number, count: number): Float32Array[] {
  if (count > rows) throw new Error(`fixtures/data/${rel} holds ${rows} rows, ${count} asked`);
  if (!cache.has(rel)) {
    const bytes = readFileSync(join(DATA, rel));
    cache.set(rel, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
  }
  const all = cache.get(rel) as Float32Array;
  return Array.from({ length: count }, (_, i) => all.slice(i * GLOVE_DIM, (i + 1) * GLOVE_DIM));
}

/** The first `count` GloVe base vectors (100-d, L2-normalised), as copies. */
export function gloveBase(count = GLOVE_BASE_ROWS): Float32Array[] {
  return f32Rows('glove-100/base.f32', GLOVE_BASE_ROWS, count);
}

/** The first `count` GloVe query vectors (words that are not in the base), as copies. */
export function gloveQueries(count = GLOVE_QUERY_ROWS): Float32Array[] {
  return f32Rows('glove-100/queries.f32', GLOVE_QUERY_ROWS, count);
}

/** GloVe base rows scaled to lengths in [0.5, 2), as plain arrays: cosine, euclidean and dot disagree on them. */
export function gloveOfVariedLength(count: number): number[][] {
  return gloveBase(count).map((v, i) => Array.from(v, (x) => x * (0.5 + ((i * 7919) % 1500) / 1000)));
}

/** Cosine similarity, computed plainly: the reference the engine's kernels are checked against. */
export function cosineSimilarity(a: number[], b: number[]): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb);
}

/** Qdrant's official OpenAPI definition, v1.19.0 (the Qdrant test server validates against it). */
export const qdrantOpenApiPath = join(DATA, 'qdrant', 'openapi-v1.19.0.json');
