/**
 * Keyword extraction on a second core. Extraction is the largest part of indexing new documents
 * (tokenizing, and every word's postings into the batch's deltas), and the write thread did it
 * alone while the machine's other core waited. For a large batch of documents new to the index,
 * the write thread now hands the later part of the batch to an extraction thread
 * (extract.worker.ts), extracts the earlier part itself meanwhile, then absorbs the other part's
 * deltas (`BatchWriter.absorb`): the same postings, entries and word ids as extracting it all in
 * order, so the databases come out byte for byte the same.
 *
 * Only documents new to the index go there: the other thread reads nothing (an update reads the
 * stored entry of the document to remove what it indexed). One thread per process, started on
 * first use, never keeping the process alive. If it fails, its part is extracted here as before.
 *
 * Off unless `SEARCH_PARALLEL_EXTRACTION=1`: measured on the movies (bench/README.md, 2026-11-25),
 * the write thread's CPU for a batch fell by about a tenth only (the documents are copied to the
 * other thread, its deltas copied back and absorbed: a second or more of the write thread's time
 * for 18,000 documents), the process spent about a quarter more CPU in all, and held 190 MiB more
 * anonymous memory at its peak (the other thread's heap: its copy of the documents and its
 * deltas). On a machine shared with other work that is a loss. What would make it pay: handing
 * over the update file rather than the parsed documents, and deltas that need no absorbing (the
 * two threads owning disjoint key ranges).
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { DocumentChange } from '../../index/extension.js';
import type { Settings } from '../../settings/types.js';
import { startWorker, workerScriptUrl } from '../../worker-script.js';
import { workerHeapLimits } from '../../thread-heaps.js';
import type { ExtractedBatch } from './extension.js';

/** Batches with fewer new documents than this are extracted in one thread: the hand-over would cost more than it saves. */
const MIN_PARALLEL_DOCUMENTS = 2000;

/**
 * The share of the batch the other thread extracts: the write thread also copies the documents
 * over and absorbs the result, so it keeps a little less than half.
 */
const ELSEWHERE_SHARE = 0.5;

export interface ExtractRequest {
  id: number;
  settings: Settings;
  paths: readonly string[];
  changes: readonly DocumentChange[];
  maxPending: number;
  /** The prefixes with records (see PrefixParts in extension.ts). */
  recorded: string[];
}

export type ExtractReply = { id: number; batch: ExtractedBatch; done: number } | { id: number; error: string };

const SCRIPT = workerScriptUrl(import.meta.url, './extract.worker.js');

let worker: Worker | null = null;
let nextId = 0;
const pending = new Map<number, (reply: ExtractReply | null) => void>();

function enabled(): boolean {
  return process.env.SEARCH_PARALLEL_EXTRACTION === '1' && availableParallelism() > 1;
}

/** Where the batch splits: changes from there on are extracted elsewhere (`changes.length`: none). */
export function parallelSplit(changes: readonly DocumentChange[]): number {
  const n = changes.length;
  if (n < MIN_PARALLEL_DOCUMENTS || !enabled()) return n;
  const split = Math.floor(n * (1 - ELSEWHERE_SHARE));
  for (let i = split; i < n; i++) if (changes[i]!.before || !changes[i]!.after) return n;
  return split;
}

function extractionWorker(): Worker {
  if (worker) return worker;
  const started = startWorker(SCRIPT, { resourceLimits: workerHeapLimits('extract') });
  started.unref();
  started.on('message', (reply: ExtractReply) => {
    const resolve = pending.get(reply.id);
    if (!resolve) return;
    pending.delete(reply.id);
    if (pending.size === 0) started.unref();
    resolve(reply);
  });
  const fail = () => {
    if (worker === started) worker = null;
    for (const [id, resolve] of pending) {
      pending.delete(id);
      resolve(null);
    }
  };
  started.on('error', fail);
  started.on('exit', fail);
  worker = started;
  return started;
}

/**
 * Extracts `changes` (documents new to the index) in the extraction thread: the first `done` of
 * them, up to `maxPending` postings. Null when that thread failed: the caller extracts them itself.
 */
export function extractElsewhere(
  settings: Settings,
  paths: readonly string[],
  changes: readonly DocumentChange[],
  maxPending: number,
  recorded: string[],
): Promise<{ batch: ExtractedBatch; done: number } | null> {
  let target: Worker;
  try {
    target = extractionWorker();
  } catch {
    return Promise.resolve(null);
  }
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, (reply) => {
      if (!reply || !('batch' in reply)) return resolve(null);
      handedOver += reply.done;
      resolve({ batch: reply.batch, done: reply.done });
    });
    target.ref();
    try {
      target.postMessage({ id, settings, paths, changes, maxPending, recorded } satisfies ExtractRequest);
    } catch {
      pending.delete(id);
      resolve(null);
    }
  });
}

let handedOver = 0;

/** How many documents were extracted in the extraction thread so far (for tests and diagnostics). */
export function documentsExtractedElsewhere(): number {
  return handedOver;
}
