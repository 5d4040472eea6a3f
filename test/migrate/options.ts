import type { MigrateOptions } from '../../src/migrate/pipeline.js';

/** Migration options for one collection of the Qdrant test server: small batches and pages, quick retries. */
export function migrateOptions(qdrantUrl: string, collection: string, checkpointDir: string, over: Partial<MigrateOptions> = {}): MigrateOptions {
  return {
    qdrantUrl,
    collections: [collection],
    batchSize: 100,
    batchBytes: 10 * 1024 * 1024,
    pageSize: 64,
    mapping: { vectors: 'keep', unsupported: 'skip', binaryQuantized: false },
    resume: false,
    swap: false,
    dryRun: false,
    checkpointDir,
    verifySample: 40,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    ...over,
  };
}
