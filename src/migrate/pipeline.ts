/**
 * `search migrate qdrant`: one collection at a time, read config -> plan -> create index and
 * apply settings -> stream pages -> batched writes -> checkpoint -> verify -> (swap).
 *
 * Memory stays bounded by the pages read ahead (READ_AHEAD, background-scroll.ts) plus
 * the batches in flight (at most `MAX_IN_FLIGHT`), whatever the collection size. Checkpoints
 * advance only when the target confirms a batch.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MigrationError } from './errors.js';
import { checkpointPath, loadCheckpoint, removeCheckpoint, saveCheckpoint, type Checkpoint } from './checkpoint.js';
import type { CollectionConfig } from './qdrant/config.js';
import { scrollInBackground } from './qdrant/background-scroll.js';
import { QdrantHttp } from './qdrant/http.js';
import { PointMapper, planMapping, type MappingOptions, type MappingPlan } from './qdrant/mapping.js';
import { MappingReport, type MappingReportJson } from './qdrant/report.js';
import { QdrantSource } from './qdrant/source.js';
import type { RetryPolicy } from './retry.js';
import type { DocumentBatch, PendingWrite, Target, TargetDocument } from './target.js';
import { compareDocument, IdSample, type Mismatch, type VerificationResult } from './verify.js';

/** Batches sent and not yet confirmed: indexing of one overlaps reading and mapping the next. */
const MAX_IN_FLIGHT = 2;

export interface MigrateOptions {
  qdrantUrl: string;
  qdrantApiKey?: string;
  collections: string[];
  /** Index uid; only with a single collection. Defaults to the collection name. */
  index?: string;
  batchSize: number;
  batchBytes: number;
  pageSize: number;
  mapping: MappingOptions;
  resume: boolean;
  swap: boolean;
  dryRun: boolean;
  checkpointDir: string;
  verifySample: number;
  retry?: Partial<RetryPolicy>;
  onEvent?: (e: MigrationEvent) => void;
}

export type MigrationEvent =
  | { type: 'collection'; collection: string; index: string; total: number; resumedAt: number }
  | { type: 'phase'; collection: string; phase: 'config' | 'settings' | 'documents' | 'verify' | 'swap' }
  | { type: 'progress'; collection: string; points: number; total: number }
  | { type: 'retry'; attempt: number; delayMs: number; reason: string };

export interface CollectionResult {
  collection: string;
  viaAlias: string | null;
  index: string;
  status: 'planned' | 'migrated' | 'failed';
  config: CollectionConfig;
  plan: { primaryKey: string; settings: MappingPlan['settings']; notes: string[]; warnings: string[]; withVector: MappingPlan['withVector'] };
  counts: { qdrantPoints: number; migratedThisRun: number; pages: number; batches: number; documents: number | null };
  resumedFrom: string | null;
  report: MappingReportJson;
  norms: Record<string, { total: number; notUnit: number }>;
  verification: VerificationResult | null;
  swapped: boolean;
  seconds: number;
  pointsPerSecond: number;
  /** RSS and JS heap after each confirmed batch: flat when memory does not grow with the collection. */
  rssSamplesMb: number[];
  heapSamplesMb: number[];
  /** Anonymous RSS (Linux `RssAnon`): RSS minus memory-mapped database pages, which grow with the index. */
  anonRssSamplesMb: number[];
}

export interface MigrationResult {
  ok: boolean;
  dryRun: boolean;
  target: string;
  collections: CollectionResult[];
  peakRssMb: number;
}

export function defaultIndexUid(collection: string): string {
  return collection.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 400) || 'collection';
}

export async function migrateQdrant(o: MigrateOptions, target: Target | null): Promise<MigrationResult> {
  if (o.index && o.collections.length > 1) throw new MigrationError('config', '--index can only be used with a single --collection');
  if (!o.dryRun && !target) throw new MigrationError('config', 'a target is needed: --db-path DIR or --url URL');
  if (o.batchSize < 1 || o.pageSize < 1 || o.batchBytes < 1024) throw new MigrationError('config', '--batch-size, --page-size must be >= 1 and --batch-bytes >= 1024');
  const http = new QdrantHttp({ url: o.qdrantUrl, apiKey: o.qdrantApiKey, retry: o.retry, onRetry: (r) => o.onEvent?.({ type: 'retry', ...r }) });
  const source = new QdrantSource(http);
  const results: CollectionResult[] = [];
  for (const name of o.collections) results.push(await migrateCollection(o, source, target, name));
  return {
    ok: results.every((r) => r.status !== 'failed'),
    dryRun: o.dryRun,
    target: target?.description ?? '(dry run)',
    collections: results,
    peakRssMb: peakRssMb(),
  };
}

/** `RssAnon` from /proc/self/status (Linux); null elsewhere. */
function anonRssMb(): number | null {
  try {
    const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

function peakRssMb(): number {
  return Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
}

function planHash(plan: MappingPlan): string {
  const stable = { settings: plan.settings, routes: plan.vectorRoutes, geo: plan.geoPath, sparse: plan.sparseNames, pk: plan.primaryKey };
  return createHash('sha256').update(JSON.stringify(stable)).digest('hex').slice(0, 16);
}

async function migrateCollection(o: MigrateOptions, source: QdrantSource, target: Target | null, requested: string): Promise<CollectionResult> {
  const started = Date.now();
  o.onEvent?.({ type: 'phase', collection: requested, phase: 'config' });
  const { collection, viaAlias } = await source.resolve(requested);
  const config = await source.readConfig(collection);
  const plan = planMapping(config, o.mapping);
  const finalIndex = o.index ?? defaultIndexUid(collection);
  const total = await source.countExact(collection);
  const result: CollectionResult = {
    collection,
    viaAlias,
    index: finalIndex,
    status: 'planned',
    config,
    plan: { primaryKey: plan.primaryKey, settings: plan.settings, notes: plan.notes, warnings: plan.warnings, withVector: plan.withVector },
    counts: { qdrantPoints: total, migratedThisRun: 0, pages: 0, batches: 0, documents: null },
    resumedFrom: null,
    report: new MappingReport().toJSON(),
    norms: {},
    verification: null,
    swapped: false,
    seconds: 0,
    pointsPerSecond: 0,
    rssSamplesMb: [],
    heapSamplesMb: [],
    anonRssSamplesMb: [],
  };
  if (o.dryRun || !target) return result;

  const writeIndex = o.swap ? `${finalIndex}__migrating` : finalIndex;
  const cpPath = checkpointPath(o.checkpointDir, collection, finalIndex);
  const hash = planHash(plan);
  let cp = o.resume ? loadCheckpoint(cpPath) : null;
  if (cp) {
    if (cp.collection !== collection || cp.writeIndex !== writeIndex) {
      throw new MigrationError('config', `checkpoint ${cpPath} is for ${cp.collection} -> ${cp.writeIndex}, not ${collection} -> ${writeIndex}`);
    }
    if (cp.planHash !== hash) {
      throw new MigrationError('config', `checkpoint ${cpPath} was written with different mapping options or collection config; rerun with the same flags, or without --resume to start over`);
    }
    result.resumedFrom = cp.nextOffset;
  } else {
    await prepareIndex(target, writeIndex, finalIndex, plan.primaryKey, o.swap);
    cp = {
      version: 1,
      qdrantUrl: o.qdrantUrl,
      collection,
      writeIndex,
      finalIndex,
      planHash: hash,
      settingsApplied: false,
      nextOffset: null,
      done: false,
      counts: { points: 0, pages: 0, batches: 0 },
      report: new MappingReport().toJSON(),
      norms: {},
      startedAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    };
    saveCheckpoint(cpPath, cp);
  }

  if (!cp.settingsApplied) {
    o.onEvent?.({ type: 'phase', collection, phase: 'settings' });
    await target.updateSettings(writeIndex, plan.settings);
    cp.settingsApplied = true;
    saveCheckpoint(cpPath, cp);
  }

  const report = MappingReport.fromJSON(cp.report);
  const mapper = new PointMapper(plan, report);
  for (const [k, v] of Object.entries(cp.norms)) mapper.norms.set(k, { ...v });
  const sample = new IdSample(o.verifySample);
  const before = cp.counts.points;
  if (!cp.done) {
    o.onEvent?.({ type: 'phase', collection, phase: 'documents' });
    o.onEvent?.({ type: 'collection', collection, index: finalIndex, total, resumedAt: before });
    await streamDocuments(o, source, target, collection, writeIndex, plan, mapper, sample, cp, cpPath, total, result);
  }
  result.counts.migratedThisRun = cp.counts.points - before;
  result.counts.pages = cp.counts.pages;
  result.counts.batches = cp.counts.batches;
  result.report = report.toJSON();
  result.norms = Object.fromEntries(mapper.norms);
  for (const [embedder, n] of mapper.norms) {
    if (n.notUnit > 0) report.warn(`embedder "${embedder}": ${n.notUnit} of ${n.total} vectors are not unit length, so cosine ranking here differs from Qdrant's`);
  }
  result.report = report.toJSON();

  o.onEvent?.({ type: 'phase', collection, phase: 'verify' });
  const verification = await verify(source, target, collection, writeIndex, plan, sample, o.verifySample);
  result.verification = verification;
  result.counts.documents = verification.documentCount;
  result.status = verification.passed ? 'migrated' : 'failed';

  if (verification.passed) {
    if (o.swap) {
      o.onEvent?.({ type: 'phase', collection, phase: 'swap' });
      if (!(await target.getIndex(finalIndex))) await target.createIndex(finalIndex, plan.primaryKey);
      await target.swapIndexes(finalIndex, writeIndex);
      await target.deleteIndex(writeIndex);
      result.swapped = true;
    }
    removeCheckpoint(cpPath);
  }
  result.seconds = (Date.now() - started) / 1000;
  result.pointsPerSecond = result.seconds > 0 ? Math.round(result.counts.migratedThisRun / result.seconds) : 0;
  return result;
}

async function prepareIndex(target: Target, writeIndex: string, finalIndex: string, primaryKey: string, swap: boolean): Promise<void> {
  const existing = await target.getIndex(writeIndex);
  if (existing && swap) {
    // a leftover temporary index from an interrupted --swap run without --resume
    await target.deleteIndex(writeIndex);
  } else if (existing) {
    if (existing.numberOfDocuments > 0) {
      throw new MigrationError(
        'config',
        `index "${finalIndex}" already holds ${existing.numberOfDocuments} documents in ${target.description}; ` +
          'use --swap to re-migrate behind it with no downtime, --resume to continue an interrupted run, or --index to choose another index',
      );
    }
    if (existing.primaryKey !== null && existing.primaryKey !== primaryKey) {
      throw new MigrationError('config', `index "${finalIndex}" has primary key "${existing.primaryKey}"; the migration needs "${primaryKey}"`);
    }
    return;
  }
  await target.createIndex(writeIndex, primaryKey);
}

interface InFlight {
  write: PendingWrite;
  /** Resume offset once this write (and every earlier one) is indexed; undefined = no page completed. */
  resumeAt: { next: string | null } | undefined;
  points: number;
  pages: number;
}

async function streamDocuments(
  o: MigrateOptions,
  source: QdrantSource,
  target: Target,
  collection: string,
  writeIndex: string,
  plan: MappingPlan,
  mapper: PointMapper,
  sample: IdSample,
  cp: Checkpoint,
  cpPath: string,
  total: number,
  result: CollectionResult,
): Promise<void> {
  const inFlight: InFlight[] = [];
  let docs: TargetDocument[] = [];
  let lines: string[] = [];
  let bytes = 0;
  let completedPage: { next: string | null } | undefined;
  let pagesInBatch = 0;
  // The first batch of a run is smaller (an eighth, at least four pages): the target starts
  // indexing while the next batches are read instead of waiting for a whole batch's pages.
  let maxDocs = Math.min(o.batchSize, Math.max(4 * o.pageSize, Math.ceil(o.batchSize / 8)));
  let maxBytes = Math.max(1024, Math.ceil(o.batchBytes / 8));
  let confirmedPoints = cp.counts.points;

  const confirmOldest = async (): Promise<void> => {
    const f = inFlight.shift()!;
    await target.wait(f.write);
    cp.counts.batches++;
    cp.counts.pages += f.pages;
    confirmedPoints += f.points;
    if (f.resumeAt) {
      cp.nextOffset = f.resumeAt.next;
      cp.counts.points = confirmedPoints;
      cp.report = mapper.report.toJSON();
      cp.norms = Object.fromEntries(mapper.norms);
      if (f.resumeAt.next === null) cp.done = true;
      saveCheckpoint(cpPath, cp);
    }
    // Under `node --expose-gc` (the benchmark), sample live memory rather than the collector's
    // timing: on a machine with plenty of RAM V8 lets garbage grow to hundreds of MB between
    // collections. A full collection per batch of thousands of documents costs little.
    (globalThis as { gc?: () => void }).gc?.();
    const mem = process.memoryUsage();
    result.rssSamplesMb.push(Math.round((mem.rss / 1048576) * 10) / 10);
    result.heapSamplesMb.push(Math.round((mem.heapUsed / 1048576) * 10) / 10);
    const anon = anonRssMb();
    if (anon !== null) result.anonRssSamplesMb.push(anon);
  };

  const flush = async (): Promise<void> => {
    if (docs.length === 0) return;
    const batch: DocumentBatch = { docs, bytes, ...(target.wantsNdjson ? { ndjson: lines.join('\n') } : {}) };
    const write = await target.addDocuments(writeIndex, batch, plan.primaryKey);
    inFlight.push({ write, resumeAt: completedPage, points: docs.length, pages: pagesInBatch });
    maxDocs = o.batchSize;
    maxBytes = o.batchBytes;
    completedPage = undefined;
    pagesInBatch = 0;
    docs = [];
    lines = [];
    bytes = 0;
    o.onEvent?.({ type: 'progress', collection, points: confirmedPoints + inFlight.reduce((s, f) => s + f.points, 0), total });
    while (inFlight.length > MAX_IN_FLIGHT) await confirmOldest();
  };

  try {
    for await (const page of scrollInBackground(source.http, collection, { start: cp.nextOffset, pageSize: o.pageSize, withVector: plan.withVector })) {
      // targets that take objects get a size estimate from the page text instead of a serialisation
      const estimate = page.points.length > 0 ? Math.ceil(page.length / page.points.length) : 0;
      for (const p of page.points) {
        const doc = mapper.map(p);
        const line = target.wantsNdjson ? JSON.stringify(doc) : '';
        const size = target.wantsNdjson ? Buffer.byteLength(line) + 1 : estimate;
        if (docs.length > 0 && (docs.length >= maxDocs || bytes + size > maxBytes)) await flush();
        docs.push(doc);
        if (target.wantsNdjson) lines.push(line);
        bytes += size;
        sample.add(p.id);
      }
      pagesInBatch++;
      completedPage = { next: page.next };
      if (docs.length >= maxDocs) await flush();
    }
  } catch (error) {
    // reading failed: keep what the target already accepted, so --resume starts after it
    try {
      while (inFlight.length > 0) await confirmOldest();
    } catch {
      // the original error is the one to report
    }
    throw error;
  }
  if (docs.length > 0) await flush();
  else if (completedPage) {
    // the last page was empty (or ended exactly at a batch): record completion
    cp.counts.pages += pagesInBatch;
    if (inFlight.length > 0) inFlight[inFlight.length - 1]!.resumeAt = completedPage;
    else {
      cp.nextOffset = completedPage.next;
      cp.done = completedPage.next === null;
      saveCheckpoint(cpPath, cp);
    }
  }
  while (inFlight.length > 0) await confirmOldest();
  if (!cp.done) {
    cp.done = true;
    cp.nextOffset = null;
    saveCheckpoint(cpPath, cp);
  }
}

async function verify(
  source: QdrantSource,
  target: Target,
  collection: string,
  writeIndex: string,
  plan: MappingPlan,
  sample: IdSample,
  sampleSize: number,
): Promise<VerificationResult> {
  const qdrantCount = await source.countExact(collection);
  const info = await target.getIndex(writeIndex);
  const documentCount = info?.numberOfDocuments ?? 0;
  const mismatches: Mismatch[] = [];
  let ids = sample.values();
  if (ids.length === 0 && sampleSize > 0 && documentCount > 0) {
    // resumed after the last batch: sample the start of the collection instead
    const first = await source.scroll(collection, { start: null, pageSize: Math.min(sampleSize, 100), withVector: false }).next();
    ids = first.done || !first.value ? [] : first.value.points.map((p: { id: string }) => p.id);
  }
  if (ids.length > 0) {
    const points = await source.retrieve(collection, ids, plan.withVector);
    const mapper = new PointMapper(plan, new MappingReport());
    const stored = await target.getDocuments(writeIndex, ids);
    for (const p of points) {
      const actual = stored.get(p.id);
      if (!actual) {
        mismatches.push({ id: p.id, field: '(document)', expected: 'present', actual: 'missing' });
        continue;
      }
      mismatches.push(...compareDocument(p.id, mapper.map(p), actual, plan));
    }
  }
  const countOk = qdrantCount === documentCount;
  return { passed: countOk && mismatches.length === 0, qdrantCount, documentCount, sampled: ids.length, mismatches: mismatches.slice(0, 50) };
}
