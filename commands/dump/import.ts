import { Args, Flags } from '@oclif/core';
import { succeeded } from '../../src/cli/report.js';
import { ReportingCommand } from '../../src/cli/reporting-command.js';
import { jsonFlag } from '../../src/cli/target-flags.js';
import { importDump } from '../../src/engine/ops/dump/import.js';

export default class DumpImport extends ReportingCommand {
  static override summary = 'Build a local database from a dump file, re-indexing every document.';

  static override description =
    'Reads dumps of this engine and of Meilisearch, dump versions v1 (0.20) to v6 (1.x). ' +
    'Imports into a staging directory beside --db-path and renames it into place only when the whole dump went in: a ' +
    'corrupt or truncated dump fails with a clear error and leaves nothing behind. The same as starting ' +
    '`search serve --import-dump <file>`, without serving.';

  static override examples = ['<%= config.bin %> dump import ./dumps/20260101-000000000.dump --db-path ./restored.ms'];

  static override args = { file: Args.string({ description: 'the .dump file', required: true }) };

  static override flags = {
    'db-path': Flags.string({ description: 'database directory to create', default: './data.ms' }),
    'ignore-missing': Flags.boolean({ description: 'succeed without doing anything when the dump file does not exist', default: false }),
    'ignore-if-db-exists': Flags.boolean({ description: 'succeed without doing anything when a database already exists', default: false }),
    ...jsonFlag,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(DumpImport);
    try {
      const result = await importDump(args.file, flags['db-path'], {
        ignoreMissing: flags['ignore-missing'],
        ignoreIfDbExists: flags['ignore-if-db-exists'],
        flagNames: { ignoreMissing: '--ignore-missing', ignoreIfDbExists: '--ignore-if-db-exists' },
        log: this.json ? undefined : (m) => process.stderr.write(`${m}\n`),
      });
      this.report(succeeded(null, { dbPath: flags['db-path'], ...result }), [
        result.outcome === 'imported'
          ? `Imported ${result.documents} documents in ${result.indexes} indexes and ${result.tasks} tasks into ${flags['db-path']}.`
          : `Nothing imported (${result.outcome}).`,
      ]);
    } catch (error) {
      this.fail(error);
    }
  }
}
