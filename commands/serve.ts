import { availableParallelism } from 'node:os';
import { Command } from '@oclif/core';
// The package entry, so that every module wired into the engine there is served too.
import { Engine, type LogLevel } from '../src/index.js';
import { flagsFor } from '../src/cli/oclif-flags.js';
import { ConfigError, SERVE_OPTIONS, resolveOptions } from '../src/cli/serve-options.js';
import { createServer } from '../src/http/server.js';
import { createSecurity, StartupError, type Security } from '../src/http/auth.js';
import { openWithOps, startupOptionsFrom } from '../src/engine/ops/startup.js';
import { dumpRoutes } from '../src/http/routes/dumps.js';
import { snapshotRoutes } from '../src/http/routes/snapshots.js';
import { loadPreviewPage, previewPageRoutes } from '../src/http/routes/preview-page.js';
import { metricsRoutes } from '../src/http/routes/metrics.js';
import { engineMetricsSources, ServerMetrics } from '../src/http/metrics.js';
import type { ResolvedOptions } from '../src/cli/serve-options.js';

/**
 * Whether `/metrics` answers; the one place that decides, asked on every scrape: the `metrics`
 * experimental feature, turned on by `--experimental-enable-metrics` for this run or by
 * PATCH /experimental-features.
 */
function metricsFeature(engine: Engine): () => boolean {
  return () => engine.features.enabled('metrics');
}

/** The preview page's files, or null when it is off (production, `--no-preview-page`) or not built. */
function previewPage(options: ResolvedOptions, warn: (message: string) => void) {
  if (options.env === 'production' || options['no-preview-page'] === true) return null;
  const page = loadPreviewPage();
  if (!page) warn('The search preview page is not built (run `npm run build`): `/` only answers that the server runs.');
  return page;
}

/** The experimental features serve options turn on for this run (the reference's `--experimental-*` launch flags). */
function instanceFeatures(options: Record<string, unknown>): { metrics: boolean; containsFilter: boolean; logsRoute: boolean } {
  return {
    metrics: options['experimental-enable-metrics'] === true,
    containsFilter: options['experimental-contains-filter'] === true,
    logsRoute: options['experimental-enable-logs-route'] === true,
  };
}
import { exitCodeOf } from '../src/cli/report.js';
import { DB_FORMAT_VERSION } from '../src/engine/store/format.js';
import { preflight, PreflightError } from '../src/cli/serve-preflight.js';
import { deliveryLimitsFromEnv } from '../src/engine/webhooks/index.js';
import { LogTargets } from '../src/engine/logs/targets.js';
import { setStderrFormat, setStderrTargets, startupStderrSpec } from '../src/engine/logs/logger.js';

export default class Serve extends Command {
  static override summary = 'Start the HTTP server (Meilisearch v1 API) on a local database.';

  static override description =
    'Opens (or creates) the database directory and serves the Meilisearch-compatible HTTP API. ' +
    'Every option can also come from a SEARCH_* environment variable (MEILI_* is accepted too) or ' +
    'from a TOML config file; command-line flags win over the environment, which wins over the file. ' +
    'SIGINT or SIGTERM stops accepting requests, lets the current batch finish and closes the database.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --db-path /var/lib/search --http-addr 0.0.0.0:7700',
    'SEARCH_HTTP_PAYLOAD_SIZE_LIMIT="1 GiB" <%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --config-file-path ./config.toml',
  ];

  static override flags = flagsFor(SERVE_OPTIONS);

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    let options;
    try {
      options = resolveOptions(SERVE_OPTIONS, flags, process.env, process.cwd()).options;
    } catch (error) {
      if (error instanceof ConfigError) this.error(error.message, { exit: 2 });
      throw error;
    }
    try {
      await preflight(options);
    } catch (error) {
      if (error instanceof PreflightError) this.error(error.message, { exit: 2 });
      throw error;
    }
    const dbPath = options['db-path'] as string;
    const logLevel = (options['log-level'] as string).toLowerCase() as LogLevel;
    setStderrFormat(String(options['experimental-logs-mode']).toLowerCase() === 'json' ? 'json' : 'human');
    setStderrTargets(LogTargets.parse(startupStderrSpec(logLevel)));
    const maxIndexingMemory = options['max-indexing-memory'] as number | undefined;
    const searchThreads = (options['search-threads'] as number | undefined) ?? (availableParallelism() > 1 ? 2 : 0);

    // imports (--import-dump/--import-snapshot), version check and dumpless upgrade, then the engine with the ops processors
    let started;
    try {
      started = await openWithOps(
        // the engine emits everything; the logger's sinks (stderr, the logs stream) choose
        { dbPath, logLevel: 'trace', searchThreads, instanceFeatures: instanceFeatures(options), ...(maxIndexingMemory ? { maxIndexingMemory } : {}) },
        startupOptionsFrom(options),
      );
    } catch (error) {
      this.error((error as Error).message, { exit: exitCodeOf(error) });
    }
    const { engine, ops } = started;
    let security: Security;
    try {
      security = createSecurity({
        dbPath,
        env: options.env as 'development' | 'production',
        masterKey: (options['master-key'] as string | undefined) ?? null,
        taskWebhookUrl: (options['task-webhook-url'] as string | undefined) ?? null,
        taskWebhookAuthorizationHeader: (options['task-webhook-authorization-header'] as string | undefined) ?? null,
        allowedIpNetworks: (options['experimental-allowed-ip-networks'] as string | undefined) ?? null,
        scheduler: engine.scheduler,
        outbox: engine.webhookOutbox,
        webhookDelivery: deliveryLimitsFromEnv(process.env),
        log: (level, message) => engine.log(level, message, 'search::webhooks'),
      });
    } catch (error) {
      await engine.close();
      if (error instanceof StartupError) this.error(error.message, { exit: 2 });
      throw error;
    }
    for (const warning of security.warnings) this.warn(warning);
    const metrics = new ServerMetrics(engineMetricsSources(engine, security.notifier));
    const server = createServer(engine, {
      guard: security.guard,
      routes: [
        ...security.routes,
        dumpRoutes(ops),
        snapshotRoutes(ops),
        metricsRoutes(metrics, metricsFeature(engine)),
        previewPageRoutes(previewPage(options, (message) => this.warn(message))),
      ],
      payloadSizeLimit: options['http-payload-size-limit'] as number,
      limits: { maxMultiSearchQueries: options['max-multi-search-queries'] as number },
      // request lines come from our logger (target `search::http`; see logs/logger.ts)
      logLevel: 'off',
    });
    let address;
    try {
      address = await server.listen(options['http-addr'] as string);
    } catch (error) {
      await security.close();
      await engine.close();
      this.error(`Cannot listen on ${String(options['http-addr'])}: ${(error as Error).message}`, { exit: 1 });
    }

    this.log(
      [
        `search ${this.config.version} (storage format ${DB_FORMAT_VERSION})`,
        `Database path:       ${dbPath}`,
        `Server listening on: ${address.url}`,
        `Environment:         ${String(options.env)}`,
        security.auth.protected
          ? "A master key has been set. Requests won't be authorized unless you provide an authentication key."
          : 'No master key: every route but /keys is open.',
      ].join('\n'),
    );

    await new Promise<void>((resolve) => {
      let stopping = false;
      const stop = async (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        this.log(`Received ${signal}: shutting down.`);
        await server.close();
        await ops.close();
        await engine.close();
        await security.close();
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  }
}
