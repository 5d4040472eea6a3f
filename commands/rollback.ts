import { Command, Flags } from '@oclif/core';
import { rollbackLocal, rollbackRemote } from '../src/engine/ops/procedures.js';
import { RemoteTarget } from '../src/engine/ops/target.js';

export default class Rollback extends Command {
  static override summary = 'Roll back a failed or interrupted dumpless upgrade to the exact previous state.';

  static override description =
    'Cancels the upgradeDatabase task (enqueued, running or failed), which restores every byte the upgrade changed and ' +
    'the previous VERSION, then verifies it. Works on a local database (server stopped; also after a crash mid-upgrade) ' +
    'and against a running server (--url). Afterwards, run the previous binary or upgrade again.';

  static override examples = ['<%= config.bin %> rollback --db-path ./data.ms', '<%= config.bin %> rollback --url http://127.0.0.1:7700 --api-key $MASTER_KEY'];

  static override flags = {
    'db-path': Flags.string({ description: 'local database directory', default: './data.ms', exclusive: ['url'] }),
    url: Flags.string({ description: 'URL of a running server' }),
    'api-key': Flags.string({ description: 'API key for --url', env: 'SEARCH_API_KEY' }),
    json: Flags.boolean({ description: 'print a JSON report on stdout', default: false }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Rollback);
    try {
      if (flags.url) {
        const task = await rollbackRemote(new RemoteTarget(flags.url, flags['api-key']));
        if (flags.json) this.log(JSON.stringify({ outcome: 'rolled-back', task }));
        else this.log(`Upgrade task ${task.uid} canceled: the server rolled back to ${String(task.details?.upgradeFrom ?? 'its previous version')}.`);
        return;
      }
      const report = await rollbackLocal(flags['db-path']);
      if (flags.json) this.log(JSON.stringify(report));
      else if (report.outcome === 'nothing-to-roll-back') this.log(`Nothing to roll back: no upgrade in progress (database version ${report.version}).`);
      else this.log(`Rolled back: the database is version ${report.version} again.`);
    } catch (error) {
      if (flags.json) this.log(JSON.stringify({ outcome: 'failed', error: (error as Error).message }));
      this.error(`Rollback failed: ${(error as Error).message}`, { exit: 1 });
    }
  }
}
