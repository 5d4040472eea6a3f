/**
 * The fixture collections, generated deterministically from the committed real data sets (see
 * test/data.ts): same input, same points, every run. The migrate benchmark's full GloVe
 * collection is in bench/glove-collection.ts.
 */
import { readFileSync } from 'node:fs';
import { arraySource, type CollectionSpec, type PointSource, type StoredPoint } from './collection.js';
import { gloveBase, movies as moviesData, worldCities } from '../data.js';

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function uuidFrom(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16));
  hex[12] = '4';
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A float32-exact vector; normalised like Qdrant does for Cosine collections. */
export function randomVector(rand: () => number, size: number, normalise: boolean): number[] {
  const v = Array.from({ length: size }, () => rand() * 2 - 1);
  const norm = normalise ? Math.hypot(...v) || 1 : 1;
  return v.map((x) => Math.fround(x / norm));
}

/** Single unnamed Cosine vector, a geo field, nested payload; integer and UUID ids mixed. */
export function citiesCollection(n = 500): CollectionSpec {
  const cities = worldCities().slice(0, n);
  const rand = prng(7);
  const points: StoredPoint[] = cities.map((c, i) => ({
    id: i % 2 === 0 ? BigInt(c.geonameid) : uuidFrom(rand),
    payload: {
      name: c.name,
      country: c.country,
      population: c.population,
      location: { lat: c._geo.lat, lon: c._geo.lng },
      place: {
        timezone: c.timezone,
        country_code: c['country code'],
        names: { ascii: c.asciiname, alternate: c.alternatenames.split(',').filter(Boolean).slice(0, 3) },
      },
    },
    vector: randomVector(rand, 16, true),
  }));
  return {
    name: 'cities',
    vectors: { size: 16, distance: 'Cosine' },
    payloadIndexes: {
      location: { data_type: 'geo' },
      country: { data_type: 'keyword' },
      population: { data_type: 'integer', params: { type: 'integer', lookup: true, range: true } },
      'place.timezone': { data_type: 'keyword' },
      name: { data_type: 'text', params: { type: 'text', tokenizer: 'word', lowercase: true } },
    },
    aliases: ['cities_live'],
    points: arraySource(points),
  };
}

/** Named vectors of different sizes and distances; every fifth movie lacks `poster`. */
export function moviesCollection(n = 400): CollectionSpec {
  const movies = moviesData().filter((m) => m.extract).slice(0, n);
  const glove = gloveBase(1000 + n);
  const rand = prng(11);
  const points: StoredPoint[] = movies.map((m, i) => {
    const vector: Record<string, number[]> = {
      plot: Array.from(glove[1000 + i]!),
      rating: randomVector(rand, 3, false),
    };
    if (i % 5 !== 0) vector.poster = randomVector(rand, 4, false);
    return {
      id: BigInt(m.id),
      payload: { title: m.title, year: m.year, genres: m.genres, cast: m.cast, extract: m.extract },
      vector,
    };
  });
  return {
    name: 'movies',
    vectors: {
      plot: { size: 100, distance: 'Cosine' },
      poster: { size: 4, distance: 'Euclid' },
      rating: { size: 3, distance: 'Dot' },
    },
    payloadIndexes: {
      title: { data_type: 'text' },
      genres: { data_type: 'keyword' },
      year: { data_type: 'integer' },
    },
    points: arraySource(points),
  };
}

export const LEDGER_EDGE_IDS: bigint[] = [
  0n,
  1n,
  2n ** 53n - 1n,
  2n ** 53n,
  2n ** 53n + 1n,
  2n ** 63n - 1n,
  2n ** 63n,
  2n ** 64n - 2n,
  2n ** 64n - 1n,
];

/** Integer ids up to 2^64-1, every payload index type, binary quantization. */
export function ledgerCollection(n = 120): CollectionSpec {
  const rand = prng(23);
  const ids = [...LEDGER_EDGE_IDS, ...Array.from({ length: n - LEDGER_EDGE_IDS.length }, (_, i) => BigInt(1000 + i * 7))];
  const skus = ['red', 'green', 'blue', 'amber'];
  const points: StoredPoint[] = ids.map((id, i) => ({
    id,
    payload: {
      sku: skus[i % skus.length],
      qty: i * 3,
      price: Math.round(rand() * 10000) / 100,
      depot: { lat: 40 + rand() * 10, lon: -5 + rand() * 10 },
      note: `entry ${i} for ${skus[i % skus.length]} stock`,
      active: i % 3 !== 0,
      at: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString(),
      ref: uuidFrom(rand),
      // an integer beyond 2^53 inside the payload: kept as a number, reported as lossy
      ...(i === 4 ? { serial: 2n ** 60n + 1n } : {}),
    },
    vector: randomVector(rand, 8, false),
  }));
  return {
    name: 'ledger',
    vectors: { size: 8, distance: 'Dot' },
    quantization: { binary: { always_ram: true } },
    payloadIndexes: {
      sku: { data_type: 'keyword' },
      qty: { data_type: 'integer' },
      price: { data_type: 'float' },
      depot: { data_type: 'geo' },
      note: { data_type: 'text' },
      active: { data_type: 'bool' },
      at: { data_type: 'datetime' },
      ref: { data_type: 'uuid' },
    },
    points: arraySource(points),
  };
}

/** Sparse vectors, a multivector, a Manhattan vector, reserved payload names, empty payloads. */
export function edgeCollection(n = 30): CollectionSpec {
  const rand = prng(31);
  const points: StoredPoint[] = Array.from({ length: n }, (_, i) => {
    const vector: Record<string, unknown> = {};
    if (i % 4 !== 3) vector.dense = randomVector(rand, 4, true);
    vector.colbert = [randomVector(rand, 4, false), randomVector(rand, 4, false)];
    vector.manhattan = randomVector(rand, 3, false);
    if (i % 2 === 0) vector.keywords = { indices: [i, i + 10], values: [0.5, Math.fround(0.25 + i / 100)] };
    let payload: Record<string, unknown> | null;
    if (i === 0) payload = null;
    else if (i === 1) payload = {};
    else {
      payload = {
        label: `edge item ${i}`,
        id: `external-${i}`,
        _geo: 'not a point',
        _vectors: [1, 2, 3],
        _private: { secret: i },
        payload_id: 'already taken',
        'dotted.key': i,
      };
    }
    return { id: uuidFrom(rand), payload, vector: vector as StoredPoint['vector'] };
  });
  return {
    name: 'edge',
    vectors: {
      dense: { size: 4, distance: 'Cosine' },
      colbert: { size: 4, distance: 'Cosine', multivector_config: { comparator: 'max_sim' } },
      manhattan: { size: 3, distance: 'Manhattan' },
    },
    sparseVectors: { keywords: { modifier: 'idf' } },
    quantization: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } },
    payloadIndexes: { label: { data_type: 'keyword' } },
    points: arraySource(points),
  };
}

export function allFixtures(): CollectionSpec[] {
  return [citiesCollection(), moviesCollection(), ledgerCollection(), edgeCollection()];
}
