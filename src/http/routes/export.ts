/**
 * `POST /export`: enqueue an `export` task that pushes this instance's indexes to another one
 * (see engine/export/). The body's shape is checked here with the reference's codes; the URL,
 * the index patterns and the filters' syntax by the engine.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ALL_INDEXES, parsePayloadSize, type ExportIndexSettings, type ExportRequest } from '../../engine/export/index.js';
import { assertIndexesAuthorized, requestAuthorization } from '../auth.js';
import type { HttpEngine } from '../engine-port.js';
import { expectObject, invalidType, invalidValue, missingField, readJsonBody, stringField } from '../json-body.js';
import { writeOptions } from '../query-params.js';
import { accepted, addRoute } from '../route.js';

const FIELDS = ['url', 'apiKey', 'payloadSize', 'indexes'] as const;
const INDEX_FIELDS = ['filter', 'overrideSettings'] as const;

export function exportRoutes(app: FastifyInstance, engine: HttpEngine): void {
  const exportTo = engine.exportTo?.bind(engine);
  if (!exportTo) return;
  addRoute(app, {
    method: 'POST',
    url: '/export',
    action: 'export',
    handler: async ({ request, reply, query }) => {
      const body = exportRequest(readJsonBody(request));
      assertExportAuthorized(request, Object.keys(body.indexes));
      return accepted(reply, await exportTo(body, writeOptions(query)));
    },
  });
}

/**
 * A key scoped to some indexes may export only those, named exactly: a pattern is resolved when
 * the task runs and could reach indexes the key cannot read (the reference does not check this).
 */
function assertExportAuthorized(request: FastifyRequest, patterns: readonly string[]): void {
  if (requestAuthorization(request).allIndexesAuthorized()) return;
  assertIndexesAuthorized(request, patterns.map((p) => (p.includes('*') ? '*' : p)));
}

function exportRequest(body: unknown): ExportRequest {
  const record = expectObject(body, { fields: FIELDS });
  if (record.url === undefined) throw missingField('url', 'invalid_export_url');
  if (typeof record.url !== 'string') throw invalidType('.url', 'a string', record.url, 'invalid_export_url');
  return {
    url: record.url,
    apiKey: stringField(record, 'apiKey', 'invalid_export_api_key', { nullable: true }) ?? null,
    payloadSize: payloadSize(record.payloadSize),
    indexes: indexes(record.indexes),
  };
}

/** Bytes as an integer, or a human size; null: the default. */
function payloadSize(value: unknown): number | null {
  const code = 'invalid_export_payload_size';
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value !== 'string') throw invalidType('.payloadSize', 'a positive integer or a string', value, code);
  const parsed = parsePayloadSize(value);
  if (typeof parsed !== 'number') throw invalidValue('.payloadSize', parsed.reason, code);
  return parsed;
}

function indexes(value: unknown): Record<string, ExportIndexSettings> {
  if (value === undefined || value === null) return structuredClone(ALL_INDEXES) as Record<string, ExportIndexSettings>;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidType('.indexes', 'an object', value, 'bad_request');
  const out: Record<string, ExportIndexSettings> = {};
  for (const [pattern, settings] of Object.entries(value as Record<string, unknown>)) {
    const path = `.indexes.${pattern}`;
    const record = expectObject(settings, { fields: INDEX_FIELDS }, path);
    const overrideSettings = record.overrideSettings ?? false;
    if (typeof overrideSettings !== 'boolean') throw invalidType(`${path}.overrideSettings`, 'a boolean', overrideSettings, 'invalid_export_index_override_settings');
    out[pattern] = { filter: record.filter ?? null, overrideSettings };
  }
  return out;
}
