import { Command, Flags } from '@oclif/core';
import { progress } from '../src/engine/ops/cli-support.js';
import { planUpgrade, upgradeLocal, upgradeRemote, upgradeViaDump, type UpgradeReport } from '../src/engine/ops/procedures.js';
import { RemoteTarget } from '../src/engine/ops/target.js';

export default class Upgrade extends Command {
  static override summary = 'Upgrade a database to this version: snapshot, dumpless upgrade, follow, roll back on failure.';

  static override description =
    'On a local database (server stopped): checks the version, takes a snapshot and waits for it, runs the dumpless ' +
    'upgrade task, follows it, and on failure or timeout cancels it, waits for the rollback and verifies that the ' +
    'database is back to its previous version, byte for byte. --via-dump takes the dump path instead: dump with this ' +
    'binary, import into a fresh directory, swap (the old directory is kept). Against a running server (--url), start ' +
    'it with --experimental-dumpless-upgrade first; this command then follows the upgrade task and rolls back on ' +
    'failure. --dry-run prints the plan. Exit code 1 when the upgrade was rolled back or failed.';

  static override examples = [
    '<%= config.bin %> upgrade --db-path ./data.ms --dry-run',
    '<%= config.bin %> upgrade --db-path ./data.ms --snapshot-dir /backups/snapshots --timeout 7200',
    '<%= config.bin %> upgrade --db-path ./data.ms --via-dump',
    '<%= config.bin %> upgrade --url http://127.0.0.1:7700 --api-key $MASTER_KEY',
  ];

  static override flags = {
    'db-path': Flags.string({ description: 'local database directory', default: './data.ms', exclusive: ['url'] }),
    url: Flags.string({ description: 'URL of a running server started with --experimental-dumpless-upgrade' }),
    'api-key': Flags.string({ description: 'API key for --url', env: 'SEARCH_API_KEY' }),
    'snapshot-dir': Flags.string({ description: 'where the pre-upgrade snapshot goes', default: 'snapshots' }),
    'dump-dir': Flags.string({ description: 'where the dump goes with --via-dump', default: 'dumps' }),
    'via-dump': Flags.boolean({ description: 'upgrade by dump and re-import instead of in place', default: false }),
    'dry-run': Flags.boolean({ description: 'print the plan and change nothing', default: false }),
    timeout: Flags.integer({ description: 'seconds to wait for the upgrade before rolling back', default: 3600, min: 1 }),
    json: Flags.boolean({ description: 'print a JSON report on stdout', default: false }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Upgrade);
    const view = progress(flags.json);
    if (flags['dry-run']) {
      if (flags.url) this.error('--dry-run works on a local database (--db-path)', { exit: 2 });
      const plan = planUpgrade(flags['db-path'], flags['snapshot-dir'], flags['via-dump']);
      if (flags.json) this.log(JSON.stringify(plan));
      else {
        this.log(`Database ${plan.dbPath}: version ${plan.from ?? 'none'}; this binary: ${plan.to}; ${describe(plan.status)}`);
        plan.steps.forEach((s, i) => this.log(`  ${i + 1}. ${s}`));
      }
      return;
    }
    let report: UpgradeReport;
    try {
      if (flags.url) {
        report = await upgradeRemote(new RemoteTarget(flags.url, flags['api-key']), { timeoutMs: flags.timeout * 1000, onPoll: view.onPoll, onStep: view.onStep });
      } else if (flags['via-dump']) {
        report = await upgradeViaDump({ dbPath: flags['db-path'], snapshotDir: flags['snapshot-dir'], dumpDir: flags['dump-dir'], onStep: view.onStep });
      } else {
        report = await upgradeLocal({ dbPath: flags['db-path'], snapshotDir: flags['snapshot-dir'], timeoutMs: flags.timeout * 1000, onPoll: view.onPoll, onStep: view.onStep });
      }
    } catch (error) {
      view.done();
      if (flags.json) this.log(JSON.stringify({ outcome: 'failed', error: (error as Error).message }));
      this.error(`Upgrade failed: ${(error as Error).message}`, { exit: 1 });
    }
    view.done();
    if (flags.json) this.log(JSON.stringify(report));
    else if (report.outcome === 'already-current' && flags.url)
      this.log(`Nothing to follow: no upgrade task is pending on ${flags.url} (version ${report.from}). Restart it with --experimental-dumpless-upgrade to upgrade.`);
    else if (report.outcome === 'already-current') this.log(`Nothing to do: the database is already version ${report.to}.`);
    else if (report.outcome === 'upgraded') this.log(`Upgraded from ${report.from} to ${report.to}.${report.snapshot ? ` Pre-upgrade snapshot: ${report.snapshot}` : ''}`);
    else this.log(`The upgrade failed (${report.error}) and was rolled back: the database is version ${report.verified?.version ?? report.from} again.`);
    if (report.outcome === 'rolled-back') this.exit(1);
  }
}

function describe(status: string): string {
  switch (status) {
    case 'current':
      return 'nothing to do';
    case 'upgrade':
      return 'the upgrade would:';
    case 'interrupted':
      return 'an upgrade was interrupted; it would be rolled back and run again:';
    case 'newer':
      return 'the database is newer than this binary: use a newer binary';
    default:
      return 'no dumpless path: create a dump with the old binary and import it';
  }
}
