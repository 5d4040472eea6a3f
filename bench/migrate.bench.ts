/**
 * Migration throughput, end to end: `search migrate qdrant` (the built CLI, its own process) reads
 * N points with 100-d GloVe vectors from the Qdrant test server and writes them into a fresh
 * database directory, then verifies. Every figure is reported next to peers measured in the same
 * run on the same machine:
 *   - source peer: scrolling the same collection with the official @qdrant/js-client-rest
 *     (read-only, nothing mapped or written): the best the source side can do;
 *   - sink peer: `Engine.addDocuments` of the same documents built in memory (no Qdrant, no
 *     mapping, no checkpoints): the best the target side can do;
 *   - pipeline ceiling: the same pipeline in-process into a target that only counts what it
 *     receives: what reading, mapping, batching and checkpointing cost on their own.
 * Memory: the CLI (run with --expose-gc, so that it samples after a full collection) reports
 * its RSS, anonymous RSS and heap after every confirmed batch, and its peak RSS. Flat means the
 * live anonymous memory of the last quarter of the run is within 1.25x of the first quarter's:
 * it then grows only by the vector graph kept in RAM (about 260 bytes per vector). RSS itself
 * also counts the database's pages mapped into the process, which grow with the index and are
 * page cache the kernel can reclaim; it is reported beside.
 *
 * Run: npm run build && MIGRATE_BENCH_POINTS=200000 npx vitest run --config bench/migrate.vitest.config.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QdrantClient } from '@qdrant/js-client-rest';
import { execa } from 'execa';
import { expect, it } from 'vitest';
import { Engine } from '../src/engine/engine.js';
import { migrateQdrant, type MigrationResult } from '../src/migrate/pipeline.js';
import type { DocumentBatch, PendingWrite, Target, TargetIndex } from '../src/migrate/target.js';
import { gloveCollection, gloveReader } from './glove-collection.js';
import { startQdrantServer } from '../test/qdrant-server/server.js';

const N = Number(process.env.MIGRATE_BENCH_POINTS ?? 200_000);
const BATCH = Number(process.env.MIGRATE_BENCH_BATCH ?? 100_000);
const PAGE = 1000;

it(`migrates ${N} GloVe points end to end`, async () => {
  const qdrant = await startQdrantServer({ collections: [gloveCollection(N)] });
  const work = mkdtempSync(join(tmpdir(), 'migrate-bench-'));
  try {
    // source peer: official client, full scroll with payload and vectors
    const client = new QdrantClient({ url: qdrant.url, checkCompatibility: false });
    let t0 = performance.now();
    let offset: string | number | undefined | null = undefined;
    let read = 0;
    do {
      const page: { points: unknown[]; next_page_offset?: unknown } = await client.scroll('glove', { limit: PAGE, with_payload: true, with_vector: true, ...(offset != null ? { offset } : {}) });
      read += page.points.length;
      offset = page.next_page_offset as string | number | null | undefined;
    } while (offset != null);
    const sourceRate = read / ((performance.now() - t0) / 1000);

    // pipeline ceiling: everything but the indexing
    const counting = new CountingTarget();
    t0 = performance.now();
    const ceilingRun = await migrateQdrant(
      { qdrantUrl: qdrant.url, collections: ['glove'], batchSize: BATCH, batchBytes: 64 * 1024 * 1024, pageSize: PAGE, mapping: { vectors: 'keep', unsupported: 'skip', binaryQuantized: false }, resume: false, swap: false, dryRun: false, checkpointDir: join(work, 'cp0'), verifySample: 0 },
      counting,
    );
    expect(ceilingRun.ok).toBe(true);
    const ceilingRate = N / ((performance.now() - t0) / 1000);

    // end to end through the CLI: once for throughput, once more under --expose-gc for memory
    // (a full collection before each sample costs seconds over a run: not in the throughput)
    const cli = async (name: string, nodeArgs: string[]) => {
      const started = performance.now();
      const run = await execa(
        'node',
        [...nodeArgs, join(process.cwd(), 'bin/run.js'), 'migrate', 'qdrant', '--qdrant-url', qdrant.url, '--collection', 'glove', '--db-path', join(work, name), '--json', '--batch-size', String(BATCH), '--page-size', String(PAGE), '--checkpoint-dir', join(work, `cp-${name}`)],
        { reject: false },
      );
      const seconds = (performance.now() - started) / 1000;
      expect(run.exitCode, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as MigrationResult;
      expect(report.collections[0]!.verification?.passed).toBe(true);
      rmSync(join(work, name), { recursive: true, force: true });
      return { report, c: report.collections[0]!, seconds };
    };
    // MIGRATE_BENCH_NODE_ARGS: node flags for the CLI process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
    const timed = await cli('db', process.env.MIGRATE_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []);
    const wall = timed.seconds;
    const e2eRate = N / wall;
    const { report, c } = await cli('db-memory', ['--expose-gc']);

    // sink peer: the engine ingesting the same documents from memory, same batch size
    const glove = gloveReader();
    const words = readFileSync('../shared/data/glove-100/words.txt', 'utf8').split('\n');
    const engine = await Engine.open({ dbPath: join(work, 'peer'), logLevel: 'off' });
    t0 = performance.now();
    await engine.waitForTask((await engine.createIndex('glove', { primaryKey: 'id' })).taskUid);
    await engine.waitForTask(
      (await engine.updateSettings('glove', { filterableAttributes: ['bucket', 'rank'], sortableAttributes: ['rank'], embedders: { default: { source: 'userProvided', dimensions: 100 } } } as never)).taskUid,
    );
    const pending: number[] = [];
    for (let start = 0; start < N; start += BATCH) {
      const docs = [];
      for (let i = start; i < Math.min(N, start + BATCH); i++) docs.push({ id: String(i), word: words[i], rank: i, bucket: `b${i % 50}`, _vectors: { default: glove.row(i) } });
      pending.push((await engine.addDocuments('glove', docs, { primaryKey: 'id', method: 'replace' })).taskUid);
    }
    for (const uid of pending) expect((await engine.waitForTask(uid, { timeoutMs: 3 * 60 * 60 * 1000 })).status).toBe('succeeded');
    const sinkRate = N / ((performance.now() - t0) / 1000);
    const peerRss = process.resourceUsage().maxRSS / 1024;
    await engine.close();

    const samples = c.rssSamplesMb;
    const growth = (series: number[]) => {
      const q = Math.max(1, Math.floor(series.length / 4));
      return Math.max(...series.slice(-q)) / Math.max(...series.slice(0, q));
    };
    const anonGrowth = c.anonRssSamplesMb.length > 0 ? growth(c.anonRssSamplesMb) : NaN;
    const lines = [
      `migrate bench: ${N} points, 100-d vectors, batch ${BATCH}, page ${PAGE}, ${c.counts.batches} batches`,
      `  end to end (CLI wall clock, incl. start-up and verification): ${e2eRate.toFixed(0)} points/s (${wall.toFixed(1)} s); pipeline-reported ${timed.c.pointsPerSecond} points/s`,
      `  source peer (official client scroll only): ${sourceRate.toFixed(0)} points/s -> end to end = ${(e2eRate / sourceRate).toFixed(2)}x`,
      `  sink peer (Engine.addDocuments from memory): ${sinkRate.toFixed(0)} points/s -> end to end = ${(e2eRate / sinkRate).toFixed(2)}x`,
      `  pipeline ceiling (in-process, counting target): ${ceilingRate.toFixed(0)} points/s -> end to end = ${(e2eRate / ceilingRate).toFixed(2)}x; ceiling vs source peer ${(ceilingRate / sourceRate).toFixed(2)}x`,
      `  memory run (--expose-gc, sampled after a full collection): ${c.pointsPerSecond} points/s`,
      `  CLI live heap after batches (MB): ${c.heapSamplesMb.join(', ')}`,
      `  CLI live anonymous RSS after batches (MB, RSS without memory-mapped database pages): ${c.anonRssSamplesMb.join(', ')}`,
      `  live anonymous memory, last quarter vs first quarter: ${anonGrowth.toFixed(2)}x (${anonGrowth <= 1.25 ? 'flat' : 'GROWS'})`,
      `  CLI peak RSS ${report.peakRssMb} MB; RSS after batches incl. mapped database pages (MB): ${samples.join(', ')} (${growth(samples).toFixed(2)}x)`,
      `  bench process (server + sink peer) peak RSS ${peerRss.toFixed(0)} MB`,
    ];
    console.log(lines.join('\n'));
  } finally {
    await qdrant.close();
    rmSync(work, { recursive: true, force: true });
  }
});

/** Accepts every batch and remembers only how many documents it saw. */
class CountingTarget implements Target {
  readonly description = 'counting target';
  readonly wantsNdjson = false;
  private docs = 0;
  private exists = false;
  async getIndex(): Promise<TargetIndex | null> {
    return this.exists ? { primaryKey: 'id', numberOfDocuments: this.docs } : null;
  }
  async createIndex(): Promise<void> {
    this.exists = true;
  }
  async deleteIndex(): Promise<void> {
    this.exists = false;
  }
  async updateSettings(): Promise<void> {}
  async getSettings(): Promise<Record<string, unknown>> {
    return {};
  }
  async addDocuments(_uid: string, batch: DocumentBatch): Promise<PendingWrite> {
    this.docs += batch.docs.length;
    return { taskUid: this.docs };
  }
  async wait(): Promise<void> {}
  async getDocuments(): Promise<Map<string, Record<string, unknown>>> {
    return new Map();
  }
  async swapIndexes(): Promise<void> {}
  async close(): Promise<void> {}
}
