/** `POST /export`: the request, its task details, and the processor that pushes indexes to a remote. */
import { SearchError } from '../errors.js';
import type { IndexRegistry } from '../index/registry.js';
import type { Scheduler } from '../tasks/scheduler.js';
import { remoteLimitsFromEnv } from './remote.js';
import type { ExportRequest } from './request.js';
import { runExport } from './transfer.js';

export { DEFAULT_EXPORT_PAYLOAD_BYTES, formatPayloadSize, parsePayloadSize } from './payload-size.js';
export { ALL_INDEXES, checkExportRequest, exportDetails, type ExportIndexSettings, type ExportRequest } from './request.js';

/** Install the `export` processor where the scheduler runs (the write thread by default). */
export function registerExportProcessor(scheduler: Scheduler, registry: IndexRegistry, log: (level: 'info' | 'debug' | 'warn', message: string) => void): void {
  scheduler.registerOperation('export', (_task, ctx) => {
    const payload = ctx.tasks[0]!.payload;
    if (payload.kind !== 'operation' || !payload.options) throw new SearchError('invalid_state', 'An export task without its request.');
    return runExport(payload.options as unknown as ExportRequest, ctx, { registry, limits: remoteLimitsFromEnv(process.env), log });
  });
}
