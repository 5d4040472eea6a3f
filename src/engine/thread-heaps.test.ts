import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { availableMemory } from './tasks/batch-budget.js';
import { AMPLE_MEMORY, workerHeapLimits } from './thread-heaps.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** The heap size limit V8 reports inside a worker thread started with `resourceLimits`. */
function heapLimitInWorker(resourceLimits: ReturnType<typeof workerHeapLimits>): Promise<number> {
  const worker = new Worker("const { parentPort } = require('node:worker_threads'); parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit);", {
    eval: true,
    resourceLimits,
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (limit: number) => {
      void worker.terminate();
      resolve(limit);
    });
    worker.once('error', reject);
  });
}

describe('worker heap limits', () => {
  it('follow a 512 MiB container limit: small young generations, old generations by share', () => {
    const memory = availableMemory(24 * GIB, 512 * MIB);
    expect(workerHeapLimits('write', memory)).toEqual({ maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 256 });
    expect(workerHeapLimits('intake', memory)).toEqual({ maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 128 });
    expect(workerHeapLimits('search', memory)).toEqual({ maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 128 });
  });

  it('scale with the limit, within their bounds', () => {
    expect(workerHeapLimits('write', availableMemory(24 * GIB, 2 * GIB))).toEqual({ maxYoungGenerationSizeMb: 32, maxOldGenerationSizeMb: 1024 });
    // a tiny container still leaves the engine's threads room to start
    expect(workerHeapLimits('intake', availableMemory(24 * GIB, 128 * MIB))).toEqual({ maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 96 });
  });

  it("keep V8's own sizing without a limit, or with a generous one", () => {
    expect(workerHeapLimits('write', availableMemory(24 * GIB, 0))).toBeUndefined();
    expect(workerHeapLimits('write', availableMemory(24 * GIB, 2 ** 64))).toBeUndefined();
    expect(workerHeapLimits('search', availableMemory(64 * GIB, AMPLE_MEMORY))).toBeUndefined();
  });

  it('are what V8 applies to a worker thread started with them', async () => {
    const limits = workerHeapLimits('write', availableMemory(24 * GIB, 512 * MIB))!;
    const limit = await heapLimitInWorker(limits);
    // the old generation's limit plus the young generation's (V8 rounds the semi-spaces up)
    expect(limit).toBeGreaterThanOrEqual(limits.maxOldGenerationSizeMb! * MIB);
    expect(limit).toBeLessThanOrEqual((limits.maxOldGenerationSizeMb! + 2 * limits.maxYoungGenerationSizeMb!) * MIB);
    expect(await heapLimitInWorker(undefined)).toBeGreaterThan(1024 * MIB);
  });
});
