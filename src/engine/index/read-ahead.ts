/**
 * Whether the kernel reads ahead around the pages an index's memory map faults in.
 *
 * A search reads a few pages scattered over the index (B-tree leaves of postings, a document, a
 * vector's neighbour list), and on a cold page the kernel reads some 128 KiB around it by default
 * (mmap read-around). That costs nothing when the whole index stays cached, but inside a memory
 * limit smaller than the index it fills the cache with pages nobody asked for and pushes out the
 * ones searches need. Measured (bench/README.md, "Memory in a container"): the 200k keyword index
 * (780 MB) searched by a fresh process in 512 MiB kept hitting the limit, with 433 MB of cache of
 * which the process had mapped 115, and a query p99 of 450-560 ms; without read-ahead the same
 * searches needed 173 MiB of cache in all, never reached the limit, and answered at p99 174-215 ms
 * (114-119 ms with no limit, same machine load). The 200k vector index behaved the same.
 *
 * So under a memory limit (below AMPLE_MEMORY, the threshold from which the threads' heaps keep
 * V8's defaults too) the index environments are opened with LMDB's MDB_NORDAHEAD, which LMDB
 * documents for databases larger than memory. With ample memory nothing changes: a cold start
 * then fills the cache faster with read-ahead, and there is room for it.
 * SEARCH_READ_AHEAD=on|off overrides the choice; `auto` (the default) follows the limit.
 */
import { availableMemory } from '../tasks/batch-budget.js';
import { AMPLE_MEMORY } from '../thread-heaps.js';

export function readAhead(env: NodeJS.ProcessEnv = process.env, memory = availableMemory()): boolean {
  const mode = env.SEARCH_READ_AHEAD ?? 'auto';
  if (mode === 'on') return true;
  if (mode === 'off') return false;
  return memory >= AMPLE_MEMORY;
}
