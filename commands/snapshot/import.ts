import { Args, Command, Flags } from '@oclif/core';
import { importSnapshot } from '../../src/engine/ops/snapshot/snapshot.js';

export default class SnapshotImport extends Command {
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
    json: Flags.boolean({ description: 'print a JSON report on stdout', default: false }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SnapshotImport);
    try {
      const outcome = await importSnapshot(args.file, flags['db-path'], {
        ignoreMissing: flags['ignore-missing'],
        ignoreIfDbExists: flags['ignore-if-db-exists'],
      });
      if (flags.json) this.log(JSON.stringify({ status: 'succeeded', outcome, dbPath: flags['db-path'] }));
      else this.log(outcome === 'imported' ? `Snapshot restored into ${flags['db-path']}.` : `Nothing imported (${outcome}).`);
    } catch (error) {
      if (flags.json) this.log(JSON.stringify({ status: 'failed', error: { message: (error as Error).message } }));
      this.error((error as Error).message, { exit: 1 });
    }
  }
}
