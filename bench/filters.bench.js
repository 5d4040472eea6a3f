/**
 * Filters, facet counts and sort on ../shared/data/movies.json (36,273 films): our facet
 * databases (LMDB, read through the filter evaluator, facet counter and sort buckets) against
 * Orama's in-memory `where` filters, `facets` and `sortBy` on the same documents, in the same
 * process and run. Reported: p50/p99 per query kind and our p50 as a ratio to Orama's.
 *
 * The engine side is measured at the module level (no keyword ranking, no HTTP), the Orama side
 * with an empty term so that it only filters, counts and sorts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DATA = '../shared/data/movies.json';
const RUNS = Number(process.env.BENCH_RUNS ?? 60);

const { IndexStore } = await import('../dist/src/engine/index/store.js');
const { defaultSettings } = await import('../dist/src/engine/settings/types.js');
const { facetExtension } = await import('../dist/src/engine/search/facets/extension.js');
const { parseFilter } = await import('../dist/src/engine/search/filter/parser.js');
const { evaluateFilter } = await import('../dist/src/engine/search/filter/evaluate.js');
const { computeFacets } = await import('../dist/src/engine/search/facets/distribution.js');
const { sortBuckets } = await import('../dist/src/engine/search/sort/buckets.js');
const orama = await import('@orama/orama');

const movies = JSON.parse(readFileSync(DATA, 'utf8'));

/** The same question asked of both: a filter, the genres facet, the first 20 by year desc. */
const QUERIES = [
  { name: 'year range', filter: 'year 1990 TO 1999', where: { year: { between: [1990, 1999] } } },
  { name: 'genre equality', filter: 'genres = Drama', where: { genres: { containsAll: ['Drama'] } } },
  { name: 'range AND genre', filter: 'year >= 1950 AND genres = Comedy', where: { year: { gte: 1950 }, genres: { containsAll: ['Comedy'] } } },
  { name: 'genre IN', filter: 'genres IN [Horror, Thriller, Crime]', where: { genres: { containsAny: ['Horror', 'Thriller', 'Crime'] } } },
  { name: 'narrow', filter: 'year = 1925 AND genres = Western', where: { year: { eq: 1925 }, genres: { containsAll: ['Western'] } } },
];

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function timeIt(fn) {
  for (let i = 0; i < 5; i++) fn(); // warm up
  const samples = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

// --- ours ------------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'bench-filters-'));
const store = new IndexStore(dir);
const settings = { ...defaultSettings(), filterableAttributes: ['genres', 'year'], sortableAttributes: ['year'] };
store.write(() => store.setSettings(settings));
let t = performance.now();
store.write(() => {
  const docids = store.docids().clone();
  const changes = movies.map((doc) => {
    const docid = store.allocateDocid();
    store.documents.putSync(docid, doc);
    docids.add(docid);
    return { docid, after: doc };
  });
  store.setDocids(docids);
  facetExtension.apply(changes, { store, settings, prepared: null });
});
const oursIndexMs = performance.now() - t;

function ours(q) {
  const candidates = evaluateFilter(store, parseFilter(q.filter), settings);
  const facets = computeFacets(store, candidates, ['genres'], settings);
  const top = [];
  for (const bucket of sortBuckets(store, candidates, { kind: 'field', field: 'year', order: 'desc' })) {
    for (const docid of bucket) {
      top.push(docid);
      if (top.length === 20) break;
    }
    if (top.length === 20) break;
  }
  return { count: candidates.size, facets: facets.facetDistribution.genres, top };
}

// --- Orama -----------------------------------------------------------------------------------
t = performance.now();
const db = orama.create({ schema: { id: 'string', year: 'number', genres: 'enum[]' } });
await orama.insertMultiple(db, movies.map((m) => ({ id: String(m.id), year: m.year, genres: m.genres })), 5000);
const oramaIndexMs = performance.now() - t;

async function theirs(q) {
  const res = await orama.search(db, { term: '', where: q.where, facets: { genres: { limit: 100 } }, sortBy: { property: 'year', order: 'DESC' }, limit: 20 });
  return { count: res.count, facets: res.facets?.genres?.values };
}

async function timeAsync(fn) {
  for (let i = 0; i < 5; i++) await fn();
  const samples = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    await fn();
    samples.push(performance.now() - s);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

// --- run -------------------------------------------------------------------------------------
const fmt = (ms) => `${ms.toFixed(2)} ms`;
console.log(`## filters, facets and sort — movies (${movies.length} documents), ${RUNS} runs per query`);
console.log(`build of filter/facet structures: ours ${fmt(oursIndexMs)} (persisted, LMDB) vs Orama ${fmt(oramaIndexMs)} (in memory, 3 fields): ratio ${(oursIndexMs / oramaIndexMs).toFixed(2)}x`);
console.log('| query | hits (ours / Orama) | ours p50 | ours p99 | Orama p50 | Orama p99 | p50 ratio (ours/Orama) |');
console.log('|---|---|---|---|---|---|---|');
for (const q of QUERIES) {
  const a = ours(q);
  const b = await theirs(q);
  const mine = timeIt(() => ours(q));
  const peer = await timeAsync(() => theirs(q));
  console.log(`| ${q.name} | ${a.count} / ${b.count} | ${fmt(mine.p50)} | ${fmt(mine.p99)} | ${fmt(peer.p50)} | ${fmt(peer.p99)} | ${(mine.p50 / peer.p50).toFixed(2)}x |`);
}
await store.close();
rmSync(dir, { recursive: true, force: true });
