/**
 * Dumps written by Meilisearch before v6 (0.20 to 0.29): which reader reads which version.
 *
 *   v1  0.20 and older   one folder per index at the root, `updates.jsonl` per index
 *   v2  0.21 - 0.22      `index_uuids/`, `indexes/index-<uuid>/`, `updates/data.jsonl`
 *   v3  0.23 - 0.24      the same, `indexes/<uuid>/`, update files as JSON lines
 *   v4  0.25 - 0.27      tasks instead of updates, API keys, instance uid
 *   v5  0.28 - 0.30      tasks name their index inside their content; dump tasks
 *
 * None of them has batches or webhooks.
 */
import type { Batch } from '../../../types.js';
import type { DumpContents, DumpFiles, DumpVersion } from '../contents.js';
import { openTasksEra } from './tasks-era.js';
import { openUpdatesEra } from './updates-era.js';
import { openV1 } from './v1.js';

export async function openLegacy(files: DumpFiles, version: Exclude<DumpVersion, 'V6'>, metadata: Record<string, unknown>): Promise<DumpContents> {
  const parts = version === 'V1' ? await openV1(files, metadata) : version === 'V2' || version === 'V3' ? await openUpdatesEra(files, version) : await openTasksEra(files, version);
  return {
    version,
    dbVersion: String(metadata.dbVersion ?? 'unknown'),
    dumpDate: typeof metadata.dumpDate === 'string' ? metadata.dumpDate : null,
    batches: noBatches,
    webhooks: async () => ({ webhooks: {} }),
    experimentalFeatures: async () => ({}),
    searchRules: noRules,
    ...parts,
  };
}

async function* noBatches(): AsyncGenerator<Batch> {}

async function* noRules(): AsyncGenerator<Record<string, unknown>> {}

/** What each legacy reader provides; the rest is the same for all. */
export type LegacyParts = Pick<DumpContents, 'instanceUid' | 'indexes' | 'tasks' | 'keys'>;

/** `now`, for index dates the reference cannot recover either. */
export const now = () => new Date().toISOString();
