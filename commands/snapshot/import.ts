import { Args, Flags } from '@oclif/core';
import { succeeded } from '../../src/cli/report.js';
import { ReportingCommand } from '../../src/cli/reporting-command.js';
import { jsonFlag } from '../../src/cli/target-flags.js';
import { importSnapshot } from '../../src/engine/ops/snapshot/snapshot.js';

export default class SnapshotImport extends ReportingCommand {
  static override summary = 'Restore a local database from a .snapshot file.';

  static override description =
    'Unpacks the snapshot beside --db-path and renames it into place once complete. The same as starting ' +
    '`search serve --import-snapshot <file>`, without serving.';

  static override examples = ['<%= config.bin %> snapshot import ./snapshots/data.ms.snapshot --db-path ./data.ms'];

  static override args = { file: Args.string({ description: 'the .snapshot file', required: true }) };

  static override flags = {
    'db-path': Flags.string({ description: 'database directory to create', default: './data.ms' }),
    'ignore-missing': Flags.boolean({ description: 'succeed without doing anything when the snapshot does not exist', default: false }),
    'ignore-if-db-exists': Flags.boolean({ description: 'succeed without doing anything when a database already exists', default: false }),
    ...jsonFlag,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SnapshotImport);
    try {
      const outcome = await importSnapshot(args.file, flags['db-path'], {
        ignoreMissing: flags['ignore-missing'],
        ignoreIfDbExists: flags['ignore-if-db-exists'],
        flagNames: { ignoreMissing: '--ignore-missing', ignoreIfDbExists: '--ignore-if-db-exists' },
      });
      this.report(succeeded(null, { outcome, dbPath: flags['db-path'] }), [
        outcome === 'imported' ? `Snapshot restored into ${flags['db-path']}.` : `Nothing imported (${outcome}).`,
      ]);
    } catch (error) {
      this.fail(error);
    }
  }
}
