/**
 * Segments: the codes and layer-0 lists of a fixed range of slots, persisted as one value of at
 * least 16 MiB (`vectors:<e>:segments`, key = segment number).
 *
 * Why 16 MiB: lmdb-js (3.5) hands out a view of its memory map, rather than a copy, only for
 * values of SHARED_BUFFER_THRESHOLD (16 MiB) and more; a searching thread that holds a read
 * transaction reads such values in place, so the codes and links it walks are page cache, not
 * anonymous memory (see mapped-graph.ts). A segment is laid out as the arena keeps the same
 * slots (graph.ts, simd.ts), so that the writer fills one with three copies:
 *
 *   [0, slots * row)          the slots' arena rows (code, then the l2 norm when the row has one)
 *   [l0n, + slots)            layer-0 neighbour counts (u8)
 *   [l0, + slots * M0 * 4)    layer-0 lists (M0 u32 per slot), 8-aligned
 *
 * The last segment is padded (its slots past the store's end are empty). Blocks of 256 slots
 * changed since a segment was written are kept as separate small values (the overlay, see
 * store.ts) until they are folded into fresh segments.
 */
import type { Graph } from './graph.js';

/** Slots per block (the unit of the overlay and of the owners' records). */
export const SHIFT = 8;
export const BLOCK = 1 << SHIFT;
export const blocksFor = (slots: number) => Math.ceil(slots / BLOCK);

/** lmdb-js's SHARED_BUFFER_THRESHOLD: values this large are read through the map. */
export const SEGMENT_MIN_BYTES = 1 << 24;

export interface SegmentLayout {
  /** Slots per segment (a multiple of BLOCK). */
  slots: number;
  /** Bytes per slot in the codes part (the arena's row). */
  row: number;
  M0: number;
  /** Offsets of the counts and the lists, and the whole value's size, in bytes. */
  l0n: number;
  l0: number;
  bytes: number;
}

export function segmentLayout(row: number, M0: number): SegmentLayout {
  const perSlot = row + 1 + M0 * 4;
  const slots = Math.ceil(SEGMENT_MIN_BYTES / perSlot / BLOCK) * BLOCK;
  const l0n = slots * row;
  const l0 = Math.ceil((l0n + slots) / 8) * 8;
  return { slots, row, M0, l0n, l0, bytes: l0 + slots * M0 * 4 };
}

/** Bytes a block takes in the overlay (its codes and its lists), for the fold threshold. */
export function blockBytes(row: number, M0: number): { codes: number; links: number } {
  return { codes: BLOCK * row, links: BLOCK + BLOCK * M0 * 4 };
}

/** Segment `seg` built from the writer's arena (slots the arena does not hold yet are empty). */
export function segmentFrom(graph: Graph, seg: number, lay: SegmentLayout): Buffer {
  const out = Buffer.alloc(lay.bytes);
  const first = seg * lay.slots;
  const n = Math.max(0, Math.min(lay.slots, graph.cap - first));
  if (n === 0) return out;
  const k = graph.kernels;
  const from = k.codePtr(first);
  out.set(k.bytes.subarray(from, from + n * lay.row), 0);
  out.set(graph.l0n.subarray(first, first + n), lay.l0n);
  out.set(new Uint8Array(graph.l0.buffer, graph.l0.byteOffset + first * lay.M0 * 4, n * lay.M0 * 4), lay.l0);
  return out;
}
