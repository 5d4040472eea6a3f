import { Command } from '@oclif/core';
import { Engine, type LogLevel } from '../src/engine/engine.js';
import { flagsFor } from '../src/cli/oclif-flags.js';
import { ConfigError, SERVE_OPTIONS, resolveOptions } from '../src/cli/serve-options.js';
import { createServer } from '../src/http/server.js';

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
    const dbPath = options['db-path'] as string;
    const logLevel = (options['log-level'] as string).toLowerCase() as LogLevel;
    const maxIndexingMemory = options['max-indexing-memory'] as number | undefined;

    const engine = await Engine.open({ dbPath, logLevel, ...(maxIndexingMemory ? { maxIndexingMemory } : {}) });
    const server = createServer(engine, {
      payloadSizeLimit: options['http-payload-size-limit'] as number,
      // Request logs are debug-level noise; operators asking for debug or trace get them.
      logLevel: logLevel === 'debug' || logLevel === 'trace' ? logLevel : 'off',
    });
    let address;
    try {
      address = await server.listen(options['http-addr'] as string);
    } catch (error) {
      await engine.close();
      this.error(`Cannot listen on ${String(options['http-addr'])}: ${(error as Error).message}`, { exit: 1 });
    }

    this.log(
      [
        `search ${this.config.version}`,
        `Database path:       ${dbPath}`,
        `Server listening on: ${address.url}`,
        `Environment:         ${String(options.env)}`,
      ].join('\n'),
    );

    await new Promise<void>((resolve) => {
      let stopping = false;
      const stop = async (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        this.log(`Received ${signal}: shutting down.`);
        await server.close();
        await engine.close();
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  }
}
