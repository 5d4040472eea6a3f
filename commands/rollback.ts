import { succeeded } from '../src/cli/report.js';
import { ReportingCommand } from '../src/cli/reporting-command.js';
import { jsonFlag, targetFlags } from '../src/cli/target-flags.js';
import { rollbackLocal, rollbackRemote } from '../src/engine/ops/procedures.js';
import { RemoteTarget } from '../src/engine/ops/target.js';

export default class Rollback extends ReportingCommand {
  static override summary = 'Roll back a failed or interrupted dumpless upgrade to the exact previous state.';

  static override description =
    'Cancels the upgradeDatabase task (enqueued, running or failed), which restores every byte the upgrade changed and ' +
    'the previous VERSION, then verifies it. Works on a local database (server stopped; also after a crash mid-upgrade) ' +
    'and against a running server (--url). Afterwards, run the previous binary or upgrade again. With nothing to roll ' +
    'back it says so and exits 0, locally and remotely alike (`outcome: "nothing-to-roll-back"` in --json). Exit codes: ' +
    '0 rolled back or nothing to do, 1 the rollback failed, 2 it could not start (bad flags, no database, database in use).';

  static override examples = ['<%= config.bin %> rollback --db-path ./data.ms', '<%= config.bin %> rollback --url http://127.0.0.1:7700 --api-key $MASTER_KEY'];

  static override flags = { ...targetFlags, ...jsonFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(Rollback);
    try {
      if (flags.url) {
        const task = await rollbackRemote(new RemoteTarget(flags.url, flags['api-key']));
        if (!task) {
          this.report(succeeded(null, { outcome: 'nothing-to-roll-back' }), [`Nothing to roll back: no upgrade task is pending or failed on ${flags.url}.`]);
          return;
        }
        this.report(succeeded(task.uid, { outcome: 'rolled-back', task }), [
          `Upgrade task ${task.uid} canceled: the server rolled back to ${String(task.details?.upgradeFrom ?? 'its previous storage format')}.`,
        ]);
        return;
      }
      const report = await rollbackLocal(flags['db-path']);
      this.report(succeeded(report.task?.uid ?? null, { ...report, storageFormat: report.version }), [
        report.outcome === 'nothing-to-roll-back'
          ? `Nothing to roll back: no upgrade in progress (storage format ${report.version}).`
          : `Rolled back: the database is in storage format ${report.version} again.`,
      ]);
    } catch (error) {
      this.fail(error, { prefix: 'Rollback failed' });
    }
  }
}
