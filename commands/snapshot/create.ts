import { basename, resolve } from 'node:path';
import { Flags } from '@oclif/core';
import { onInterrupt } from '../../src/cli/interrupt.js';
import { succeeded, UsageError } from '../../src/cli/report.js';
import { ReportingCommand } from '../../src/cli/reporting-command.js';
import { jsonFlag, targetFlags } from '../../src/cli/target-flags.js';
import { formatBytes, openTarget, progress } from '../../src/engine/ops/cli-support.js';
import { createBackup } from '../../src/engine/ops/procedures.js';
import type { OpsTarget } from '../../src/engine/ops/target.js';

export default class SnapshotCreate extends ReportingCommand {
  static override summary = 'Take a snapshot (a consistent copy of every environment, .snapshot tar.gz) and wait for it.';

  static override description =
    'Enqueues a snapshotCreation task and follows it; searches and writes continue meanwhile. The file is ' +
    '<snapshot-dir>/<db-name>.snapshot; with --keep N each snapshot is kept as <db-name>.<date>.snapshot and only the ' +
    'N newest of this database made by this command stay (once the new one is read back whole and holds at least one ' +
    'index). Against a running server (--url) give --snapshot-dir when it is on this machine: the new .snapshot file ' +
    'there is found whatever the server\'s folder is named. SIGINT/SIGTERM cancels a local snapshot and removes its ' +
    'work files. Exit codes: 0 done, 1 failed, 2 could not start, 130/143 interrupted.';

  static override examples = [
    '<%= config.bin %> snapshot create --db-path ./data.ms --snapshot-dir /backups/snapshots --keep 24',
    '<%= config.bin %> snapshot create --url http://127.0.0.1:7700 --api-key $MASTER_KEY --snapshot-dir /var/lib/search/snapshots --keep 7 --json',
  ];

  static override flags = {
    ...targetFlags,
    'snapshot-dir': Flags.string({ description: 'directory of the snapshot files [default: snapshots/ for a local database]' }),
    'db-name': Flags.string({ description: 'database directory name of the server, which names its snapshot file [default: basename of --db-path; with --url: found in --snapshot-dir]' }),
    keep: Flags.integer({ description: 'keep only the N newest snapshots of this database made by this command (dated names)', min: 1 }),
    timeout: Flags.integer({ description: 'seconds to wait for the task', default: 3600, min: 1 }),
    ...jsonFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SnapshotCreate);
    const snapshotDir = flags['snapshot-dir'] ?? (flags.url ? undefined : 'snapshots');
    if (flags.keep !== undefined && !snapshotDir) this.fail(new UsageError('--keep needs --snapshot-dir when the snapshot is made by a server'));
    const dbName = flags['db-name'] ?? (flags.url ? undefined : basename(resolve(flags['db-path'])));
    const view = progress(this.json);
    const interrupt = onInterrupt();
    let target: OpsTarget | undefined;
    try {
      target = await openTarget(flags, { snapshotDir });
      const result = await createBackup('snapshot', target, { dir: snapshotDir, dbName, keep: flags.keep, timeoutMs: flags.timeout * 1000, onPoll: view.onPoll, signal: interrupt.signal });
      view.done();
      this.report(succeeded(result.task.uid, { path: result.path, bytes: result.bytes, removed: result.removed, keepSkipped: result.keepSkipped }), [
        result.path ? `Snapshot written: ${result.path} (${formatBytes(result.bytes)})` : `Snapshot written in the server's snapshot directory (task ${result.task.uid}).`,
        ...result.removed.map((file) => `Removed old snapshot: ${basename(file)}`),
        ...(result.keepSkipped ? [`--keep: ${result.keepSkipped}`] : []),
      ]);
    } catch (error) {
      view.done();
      this.fail(error, { prefix: 'Snapshot failed', exit: interrupt.exitCode() ?? undefined });
    } finally {
      interrupt.dispose();
      await target?.close();
    }
  }
}
