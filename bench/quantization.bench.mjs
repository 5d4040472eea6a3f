#!/usr/bin/env node
/**
 * How many bits per dimension a vector code needs to reach recall@10 >= 0.95 without exact
 * re-ranking, on GloVe-100 (../shared/data/glove-100, 200,000 base vectors, cosine).
 *
 * Each code width is searched exhaustively (every one of the 200k codes scored against the float
 * query): no graph over those codes can recall more, so this is the ceiling for a serving process
 * that keeps only codes and links resident. The peer is exact float search (recall 1 by
 * definition, against the data set's ground truth). Scalar quantization per dimension, between
 * the dimension's minimum and maximum over the base, as the vector store's int8 codes.
 *
 *   node bench/quantization.bench.mjs            (QUANT_BENCH_QUERIES=200 by default)
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DATA = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'data', 'glove-100');
const DIM = 100;
const K = 10;
const QUERIES = Number(process.env.QUANT_BENCH_QUERIES ?? 200);

const f32 = (name) => {
  const b = readFileSync(join(DATA, name));
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const meta = JSON.parse(readFileSync(join(DATA, 'meta.json'), 'utf8'));
const gtBytes = readFileSync(join(DATA, 'gt.i32'));
const gt = new Int32Array(gtBytes.buffer, gtBytes.byteOffset, gtBytes.byteLength / 4);
const n = meta.nBase;

function normalized(v) {
  let s = 0;
  for (let d = 0; d < v.length; d++) s += v[d] * v[d];
  const inv = 1 / (Math.sqrt(s) || 1);
  return v.map((x) => x * inv);
}

const base = f32('base.f32');
const unit = new Float32Array(n * DIM);
for (let i = 0; i < n; i++) unit.set(normalized(base.subarray(i * DIM, (i + 1) * DIM)), i * DIM);
const queries = f32('queries.f32');

/** The base as its codes decode back: each dimension snapped to one of 2^bits levels. */
function quantized(bits) {
  const levels = 2 ** bits - 1;
  const lo = new Float32Array(DIM).fill(Infinity);
  const hi = new Float32Array(DIM).fill(-Infinity);
  for (let i = 0; i < n * DIM; i++) {
    const d = i % DIM;
    if (unit[i] < lo[d]) lo[d] = unit[i];
    if (unit[i] > hi[d]) hi[d] = unit[i];
  }
  const out = new Float32Array(n * DIM);
  for (let i = 0; i < n * DIM; i++) {
    const d = i % DIM;
    const step = (hi[d] - lo[d]) / levels || 1;
    out[i] = lo[d] + Math.round((unit[i] - lo[d]) / step) * step;
  }
  return out;
}

/** Recall@10 of an exhaustive search over `vectors` against the ground truth. */
function exhaustiveRecall(vectors) {
  let hits = 0;
  const scores = new Float32Array(K);
  const ids = new Int32Array(K);
  for (let q = 0; q < QUERIES; q++) {
    const query = normalized(queries.subarray(q * DIM, (q + 1) * DIM));
    scores.fill(-Infinity);
    for (let i = 0; i < n; i++) {
      let s = 0;
      const o = i * DIM;
      for (let d = 0; d < DIM; d++) s += query[d] * vectors[o + d];
      if (s <= scores[K - 1]) continue;
      let j = K - 1;
      while (j > 0 && scores[j - 1] < s) {
        scores[j] = scores[j - 1];
        ids[j] = ids[j - 1];
        j--;
      }
      scores[j] = s;
      ids[j] = i;
    }
    const truth = new Set(gt.subarray(q * meta.k, q * meta.k + K));
    for (const id of ids) if (truth.has(id)) hits++;
  }
  return hits / (QUERIES * K);
}

console.log(`code width vs recall@10, exhaustive search, GloVe-100 ${n} vectors, ${QUERIES} queries (${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores)`);
console.log('| codes | bytes per vector | recall@10 | ratio to exact float search |');
console.log('| --- | --- | --- | --- |');
const exact = exhaustiveRecall(unit);
console.log(`| float32 (peer) | ${DIM * 4} | ${exact.toFixed(4)} | 1.00 |`);
for (const bits of [8, 7, 6, 4]) {
  const recall = exhaustiveRecall(quantized(bits));
  console.log(`| ${bits}-bit scalar | ${(DIM * bits) / 8} | ${recall.toFixed(4)} | ${(recall / exact).toFixed(2)} |`);
}
