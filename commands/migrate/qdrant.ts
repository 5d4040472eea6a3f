import { readFileSync } from 'node:fs';
import { Flags } from '@oclif/core';
import type { EmbedderSettings } from '../../src/engine/settings/types.js';
import { EngineTarget } from '../../src/migrate/engine-target.js';
import { MigrationError, type MigrationErrorKind } from '../../src/migrate/errors.js';
import { migrateQdrant, type MigrationResult } from '../../src/migrate/pipeline.js';
import { ProgressLines } from '../../src/migrate/progress-lines.js';
import { ProgressView } from '../../src/migrate/progress-view.js';
import { errorOf, exitCodeOf, failed, succeeded } from '../../src/cli/report.js';
import { ReportingCommand } from '../../src/cli/reporting-command.js';
import { RemoteTarget } from '../../src/migrate/remote-target.js';
import { formatSummary } from '../../src/migrate/summary.js';
import type { Target } from '../../src/migrate/target.js';

/** Exit codes: 1 verification failed; 2 usage/config; 3 auth; 4 unknown collection; 5 unreachable; 6 other HTTP or target failure. */
const EXIT: Record<MigrationErrorKind, number> = { verification: 1, config: 2, auth: 3, not_found: 4, unreachable: 5, http: 6, target: 6 };

export default class MigrateQdrant extends ReportingCommand {
  static override summary = 'Move Qdrant collections into indexes, verified and resumable.';

  static override description =
    'Reads each collection config (vectors, distances, sparse and multivectors, quantization, payload indexes, aliases), ' +
    'streams the points page by page, writes them in batches to the embedded database (--db-path) or a running server ' +
    '(--url, ours or Meilisearch), then verifies the exact count and a sample of documents field by field and vector by vector. ' +
    'A checkpoint after every confirmed batch lets --resume continue after a crash or Ctrl-C without duplicates or gaps. ' +
    'The mapping rules are in src/migrate/qdrant/README.md. Exit codes: 0 ok, 1 verification failed, 2 bad options, ' +
    '3 authentication refused, 4 unknown collection, 5 host unreachable, 6 other failure.';

  static override examples = [
    '<%= config.bin %> <%= command.id %> --qdrant-url http://localhost:6333 --collection articles --db-path ./data.ms',
    '<%= config.bin %> <%= command.id %> --qdrant-url https://q.example:6333 --qdrant-api-key $QDRANT_KEY --collection a --collection b --url http://localhost:7700 --api-key $KEY',
    '<%= config.bin %> <%= command.id %> --qdrant-url http://localhost:6333 --collection articles --db-path ./data.ms --swap',
    '<%= config.bin %> <%= command.id %> --qdrant-url http://localhost:6333 --collection articles --dry-run',
  ];

  static override flags = {
    'qdrant-url': Flags.string({ description: 'Qdrant REST URL', required: true, env: 'QDRANT_URL' }),
    'qdrant-api-key': Flags.string({ description: 'Qdrant API key (sent as api-key)', env: 'QDRANT_API_KEY' }),
    collection: Flags.string({ description: 'collection (or alias) to migrate; repeat for several', required: true, multiple: true }),
    index: Flags.string({ description: 'target index uid (single collection only) [default: the collection name]' }),
    'db-path': Flags.string({ description: 'embedded target: database directory', exclusive: ['url'] }),
    url: Flags.string({ description: 'remote target: URL of a running server (ours or Meilisearch)', exclusive: ['db-path'] }),
    'api-key': Flags.string({ description: 'API key of the remote target', env: 'SEARCH_API_KEY' }),
    'batch-size': Flags.integer({ description: 'documents per write', default: 100_000, min: 1 }),
    'batch-bytes': Flags.integer({ description: 'NDJSON bytes per write', default: 64 * 1024 * 1024, min: 1024 }),
    'page-size': Flags.integer({ description: 'points per Qdrant scroll request', default: 1000, min: 1 }),
    vectors: Flags.string({ description: 'copy vectors (keep), embed again with --embedder-from-settings (reembed), or none (skip)', options: ['keep', 'reembed', 'skip'], default: 'keep' }),
    'embedder-from-settings': Flags.string({ description: 'JSON file: {"embedders": {...}} or the embedders object itself' }),
    'unsupported-vectors': Flags.string({ description: 'Manhattan, sparse and multivectors: skip (reported) or convert (see the mapping table)', options: ['skip', 'convert'], default: 'skip' }),
    'rank-by-cosine': Flags.boolean({
      description: 'remote target (Meilisearch has no distance setting): rank Dot and Euclid vectors by cosine instead of stopping',
      default: false,
    }),
    'binary-quantized': Flags.boolean({ description: 'map Qdrant binary quantization to binaryQuantized embedders', default: false }),
    'geo-field': Flags.string({ description: 'payload key holding {lat, lon} to map to _geo [default: the first geo payload index]' }),
    resume: Flags.boolean({ description: 'continue from the checkpoint of an interrupted run', default: false }),
    swap: Flags.boolean({ description: 'migrate into <index>__migrating, verify, then swap it with <index> (zero downtime)', default: false }),
    'dry-run': Flags.boolean({ description: 'print the plan (settings, mapping, warnings) and write nothing', default: false }),
    json: Flags.boolean({ description: 'print a machine-readable JSON report on stdout, no progress display', default: false }),
    'checkpoint-dir': Flags.string({ description: 'where checkpoints are kept', default: '.search-migrate' }),
    'verify-sample': Flags.integer({ description: 'documents compared field by field after the copy', default: 100, min: 0 }),
    retries: Flags.integer({ description: 'retries of a failed request (429, 5xx, network)', default: 6, min: 0 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(MigrateQdrant);
    // a live view on a terminal, plain lines in a log; nothing under --json (stderr: errors only)
    const progress = flags.json ? null : process.stderr.isTTY ? new ProgressView() : new ProgressLines();
    let target: Target | null = null;
    let result: MigrationResult | undefined;
    let failure: Error | undefined;
    let interrupted: Promise<void> | null = null;
    const onSignal = () => {
      // the checkpoint already covers every confirmed batch; close the database cleanly and stop
      process.stderr.write('\ninterrupted: run again with --resume to continue\n');
      interrupted = (target?.close() ?? Promise.resolve()).finally(() => process.exit(130));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const embedders = flags['embedder-from-settings'] ? readEmbedders(flags['embedder-from-settings']) : undefined;
      if (!flags['dry-run']) target = await openTarget(flags['db-path'], flags.url, flags['api-key']);
      result = await migrateQdrant(
        {
          qdrantUrl: flags['qdrant-url'],
          qdrantApiKey: flags['qdrant-api-key'],
          collections: flags.collection,
          index: flags.index,
          batchSize: flags['batch-size'],
          batchBytes: flags['batch-bytes'],
          pageSize: Math.min(flags['page-size'], flags['batch-size']),
          mapping: {
            vectors: flags.vectors as 'keep' | 'reembed' | 'skip',
            embedders,
            unsupported: flags['unsupported-vectors'] as 'skip' | 'convert',
            binaryQuantized: flags['binary-quantized'],
            geoField: flags['geo-field'],
            // a remote server is taken for a Meilisearch, which has no `distance` setting
            distanceSetting: flags.url === undefined,
            rankByCosine: flags['rank-by-cosine'],
          },
          resume: flags.resume,
          swap: flags.swap,
          dryRun: flags['dry-run'],
          checkpointDir: flags['checkpoint-dir'],
          verifySample: flags['verify-sample'],
          retry: { retries: flags.retries },
          onEvent: progress?.onEvent,
        },
        target,
      );
    } catch (e) {
      failure = e as Error;
    } finally {
      if (progress instanceof ProgressView) await progress.close(failure);
      await target?.close();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    // a signal closed the database under the migration, which then failed: the signal's exit wins
    if (interrupted) await interrupted;
    if (failure) {
      const kind = failure instanceof MigrationError ? failure.kind : null;
      // a database in use or missing is a failure to start, as for every command (exit 2)
      const code = kind ?? errorOf(failure).code;
      // the report every command prints (src/cli/report.ts), `ok` and `error.kind` kept for existing readers
      if (flags.json) process.stdout.write(JSON.stringify({ ...failed(failure), ok: false, error: { code, kind: kind ?? 'internal', message: failure.message } }, null, 2) + '\n');
      this.error(failure.message, { exit: kind ? EXIT[kind] : exitCodeOf(failure) === 2 ? 2 : 6 });
    }
    const json = { ...result!, ...(result!.ok ? succeeded(null) : failed({ code: 'verification', message: 'the verification of the migrated documents failed' })) };
    process.stdout.write(flags.json ? JSON.stringify(json, null, 2) + '\n' : formatSummary(result!));
    if (!result!.ok) this.exit(EXIT.verification);
  }
}

async function openTarget(dbPath: string | undefined, url: string | undefined, apiKey: string | undefined): Promise<Target> {
  if (url) {
    const t = new RemoteTarget(url, apiKey);
    await t.check();
    return t;
  }
  if (dbPath) return EngineTarget.open(dbPath);
  throw new MigrationError('config', 'choose a target: --db-path DIR (embedded) or --url URL (running server), or use --dry-run');
}

function readEmbedders(file: string): Record<string, EmbedderSettings> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new MigrationError('config', `cannot read --embedder-from-settings ${file}: ${(e as Error).message}`);
  }
  const obj = (parsed && typeof parsed === 'object' && 'embedders' in parsed ? (parsed as { embedders: unknown }).embedders : parsed) as Record<string, unknown>;
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new MigrationError('config', `${file}: expected an object of embedders`);
  for (const [name, e] of Object.entries(obj)) {
    if (!e || typeof e !== 'object' || typeof (e as { source?: unknown }).source !== 'string') {
      throw new MigrationError('config', `${file}: embedder "${name}" needs a "source"`);
    }
  }
  return obj as Record<string, EmbedderSettings>;
}
