/**
 * How much document payload one batch may gather, from the memory the indexer may use
 * (`--max-indexing-memory`).
 *
 * A batch holds its documents parsed, the keyword deltas and the write transaction's dirty pages
 * until it commits, so its peak memory follows the payload it gathered: on movie-like documents
 * about 15 bytes of RAM per byte of NDJSON (ten 12 MB payloads of 20,000 documents batched
 * together peaked at 1.9 GB RSS). Consecutive payloads are therefore batched only up to
 * budget / MEMORY_PER_PAYLOAD_BYTE; a single payload larger than that still forms one batch.
 */
import { totalmem } from 'node:os';

export const MEMORY_PER_PAYLOAD_BYTE = 16;
const MIB = 1024 * 1024;

/**
 * The memory this process may use: the machine's, or the container's limit when it is lower
 * (`process.constrainedMemory()` reads the cgroup limit; unconstrained it returns 0 or a huge
 * value). Sizing from the machine alone inside a 512 MB container would gather batches of 64 MiB
 * of payload and get the process killed.
 */
export function availableMemory(machine = totalmem(), constrained = process.constrainedMemory?.() ?? 0): number {
  return constrained > 0 && constrained < machine ? constrained : machine;
}

/**
 * The default budget: a quarter of the available memory, at most 256 MiB, so batches gather up to
 * 16 MiB of payload. The cap was set when a batch's write transaction held the thread that served
 * searches (at 200k documents a 64 MiB batch held it for 20 s; the bulk rate went from 4,895 to
 * 4,300-4,600 docs/s under the cap). Batches now run in the write thread, so the cap only bounds
 * a batch's memory; a larger `--max-indexing-memory` buys larger batches.
 */
export const DEFAULT_INDEXING_MEMORY_CAP = 256 * MIB;

export function defaultIndexingMemory(memory = availableMemory()): number {
  return Math.min(DEFAULT_INDEXING_MEMORY_CAP, Math.floor(memory / 4));
}

/** Payload bytes a batch may gather under `indexingMemory` bytes (never below 1 MiB). */
export function batchPayloadBytes(indexingMemory: number): number {
  return Math.max(MIB, Math.floor(indexingMemory / MEMORY_PER_PAYLOAD_BYTE));
}
