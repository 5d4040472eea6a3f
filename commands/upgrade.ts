import { Flags } from '@oclif/core';
import { failed, succeeded, UsageError, type Report } from '../src/cli/report.js';
import { ReportingCommand, taskUidOf } from '../src/cli/reporting-command.js';
import { jsonFlag, targetFlags } from '../src/cli/target-flags.js';
import { AddressPolicy } from '../src/engine/net/index.js';
import { progress } from '../src/engine/ops/cli-support.js';
import { planUpgrade, upgradeLocal, upgradeRemote, upgradeViaDump, type UpgradeReport } from '../src/engine/ops/procedures.js';
import { RemoteTarget } from '../src/engine/ops/target.js';
import { sendNotice, StatusTrail } from '../src/engine/ops/upgrade-status.js';

export default class Upgrade extends ReportingCommand {
  static override summary = 'Upgrade a database to this version: snapshot, dumpless upgrade, follow, roll back on failure.';

  static override description =
    'On a local database (server stopped): checks the storage format, takes a snapshot and waits for it, runs the dumpless ' +
    'upgrade task, follows it, and on failure or timeout cancels it, waits for the rollback and verifies that the ' +
    'database is back to its previous storage format, byte for byte. --via-dump takes the dump path instead: dump with this ' +
    'binary, import into a fresh directory, swap (the old directory is kept). Against a running server (--url), start ' +
    'it with --experimental-dumpless-upgrade first; this command then follows the upgrade task and rolls back on ' +
    'failure. The instance status is told as a hosted console does: `running -> updating -> running` (or `-> rolled back`), ' +
    'one line per change on stderr, `statusHistory` in --json, and a JSON POST to --notify-url when it ends. ' +
    '--dry-run prints the plan. Exit codes: 0 upgraded or nothing to do, 1 rolled back or failed, 2 could not start.';

  static override examples = [
    '<%= config.bin %> upgrade --db-path ./data.ms --dry-run',
    '<%= config.bin %> upgrade --db-path ./data.ms --snapshot-dir /backups/snapshots --timeout 7200',
    '<%= config.bin %> upgrade --db-path ./data.ms --via-dump',
    '<%= config.bin %> upgrade --url http://127.0.0.1:7700 --api-key $MASTER_KEY --notify-url https://hooks.example.com/search',
  ];

  static override flags = {
    ...targetFlags,
    url: Flags.string({ description: 'URL of a running server started with --experimental-dumpless-upgrade' }),
    'snapshot-dir': Flags.string({ description: 'where the pre-upgrade snapshot goes', default: 'snapshots' }),
    'dump-dir': Flags.string({ description: 'where the dump goes with --via-dump', default: 'dumps' }),
    'via-dump': Flags.boolean({ description: 'upgrade by dump and re-import instead of in place', default: false }),
    'dry-run': Flags.boolean({ description: 'print the plan and change nothing', default: false }),
    timeout: Flags.integer({ description: 'seconds to wait for the upgrade before rolling back', default: 3600, min: 1 }),
    'notify-url': Flags.string({ description: 'URL that receives a JSON POST {event, status, history, from, to, taskUid, error} when the upgrade ends' }),
    'notify-authorization-header': Flags.string({ description: 'Authorization header sent to --notify-url' }),
    'experimental-allowed-ip-networks': Flags.string({
      description: 'private, loopback or link-local networks --notify-url may reach (comma-separated CIDRs, or `any`), as for webhooks. Default: public addresses only.',
    }),
    ...jsonFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Upgrade);
    const view = progress(this.json);
    if (flags['dry-run']) return this.dryRun(flags['db-path'], flags['snapshot-dir'], flags['via-dump'], Boolean(flags.url));
    let policy: AddressPolicy;
    try {
      policy = AddressPolicy.parse(flags['experimental-allowed-ip-networks'] ?? null);
      if (flags['notify-url']) new URL(flags['notify-url']);
    } catch (error) {
      this.fail(new UsageError((error as Error).message));
    }
    const trail = new StatusTrail((status, previous) => view.onStep(`status: ${previous ? `${previous} -> ` : ''}${status}`));
    trail.set('running');
    const common = { onPoll: view.onPoll, onStep: view.onStep, onUpdating: () => trail.set('updating') };
    let report: UpgradeReport | undefined;
    let failure: unknown;
    try {
      if (flags.url) report = await upgradeRemote(new RemoteTarget(flags.url, flags['api-key']), { timeoutMs: flags.timeout * 1000, ...common });
      else if (flags['via-dump']) report = await upgradeViaDump({ dbPath: flags['db-path'], snapshotDir: flags['snapshot-dir'], dumpDir: flags['dump-dir'], ...common });
      else report = await upgradeLocal({ dbPath: flags['db-path'], snapshotDir: flags['snapshot-dir'], timeoutMs: flags.timeout * 1000, ...common });
      trail.set(report.outcome === 'rolled-back' ? 'rolled back' : 'running');
    } catch (error) {
      failure = error;
      // nothing changed when it failed before the upgrade started; else the state is unknown
      trail.set(trail.current === 'updating' ? 'failed' : 'running');
    }
    view.done();
    const taskUid = report?.task?.uid ?? taskUidOf(failure);
    const rolledBack = report?.outcome === 'rolled-back' ? { code: 'upgrade_rolled_back', message: `The upgrade failed (${report.error}) and was rolled back.` } : null;
    const notice = flags['notify-url']
      ? await sendNotice(
          flags['notify-url'],
          {
            event: 'upgrade',
            status: trail.current!,
            history: trail.history,
            from: report?.from ?? null,
            to: report?.to ?? null,
            taskUid,
            error: failure ? failed(failure).error : rolledBack,
            finishedAt: new Date().toISOString(),
          },
          { policy: policy!, authorization: flags['notify-authorization-header'] },
        )
      : null;
    if (notice && !notice.delivered) this.warn(`The notice to ${notice.url} was not delivered: ${notice.error}`);
    const statusDetails = { instanceStatus: trail.current, statusHistory: trail.history, notified: notice };
    if (failure) this.fail(failure, { prefix: 'Upgrade failed', taskUid, details: statusDetails });
    const done = report!;
    const json: Report = { ...done, ...statusDetails, ...(rolledBack ? failed(rolledBack, taskUid) : succeeded(taskUid)) };
    this.report(json, [this.summary(done, flags.url)]);
    if (rolledBack) this.exit(1);
  }

  private summary(report: UpgradeReport, url: string | undefined): string {
    if (report.outcome === 'already-current' && url)
      return `Nothing to follow: no upgrade task is pending on ${url} (version ${report.from}). Restart it with --experimental-dumpless-upgrade to upgrade.`;
    if (report.outcome === 'already-current') return `Nothing to do: the database is already in storage format ${report.to}.`;
    if (report.outcome === 'upgraded') return `Upgraded from storage format ${report.from} to ${report.to}.${report.snapshot ? ` Pre-upgrade snapshot: ${report.snapshot}` : ''}`;
    return `The upgrade failed (${report.error}) and was rolled back: the database is in storage format ${report.verified?.version ?? report.from} again.`;
  }

  private dryRun(dbPath: string, snapshotDir: string, viaDump: boolean, remote: boolean): void {
    if (remote) this.fail(new UsageError('--dry-run works on a local database (--db-path)'));
    let plan;
    try {
      plan = planUpgrade(dbPath, snapshotDir, viaDump);
    } catch (error) {
      this.fail(error);
    }
    this.report(succeeded(null, { plan }), [
      `Database ${plan.dbPath}: storage format ${plan.from ?? 'none'}; this binary: storage format ${plan.to}; ${describe(plan.status)}`,
      ...plan.steps.map((s, i) => `  ${i + 1}. ${s}`),
    ]);
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
