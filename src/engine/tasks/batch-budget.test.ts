import { describe, expect, it } from 'vitest';
import { availableMemory, batchPayloadBytes, defaultIndexingMemory } from './batch-budget.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

describe('indexing memory budget', () => {
  it('follows a container limit below the machine memory', () => {
    expect(availableMemory(24 * GIB, 512 * MIB)).toBe(512 * MIB);
    expect(defaultIndexingMemory(availableMemory(24 * GIB, 512 * MIB))).toBe(128 * MIB);
    expect(batchPayloadBytes(defaultIndexingMemory(availableMemory(24 * GIB, 512 * MIB)))).toBe(8 * MIB);
  });

  it('ignores the "no limit" answers of an unconstrained process', () => {
    expect(availableMemory(24 * GIB, 0)).toBe(24 * GIB);
    expect(availableMemory(24 * GIB, 2 ** 64)).toBe(24 * GIB);
  });

  it('caps the default budget at 256 MiB (batches of 16 MiB) and never gathers less than 1 MiB of payload', () => {
    expect(defaultIndexingMemory(64 * GIB)).toBe(256 * MIB);
    expect(batchPayloadBytes(defaultIndexingMemory(64 * GIB))).toBe(16 * MIB);
    expect(batchPayloadBytes(4 * MIB)).toBe(MIB);
  });
});
