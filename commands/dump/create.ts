import { basename } from 'node:path';
import { Flags } from '@oclif/core';
import { onInterrupt } from '../../src/cli/interrupt.js';
import { succeeded, UsageError } from '../../src/cli/report.js';
import { ReportingCommand } from '../../src/cli/reporting-command.js';
import { jsonFlag, targetFlags } from '../../src/cli/target-flags.js';
import { formatBytes, openTarget, progress } from '../../src/engine/ops/cli-support.js';
import { createBackup } from '../../src/engine/ops/procedures.js';
import type { OpsTarget } from '../../src/engine/ops/target.js';

export default class DumpCreate extends ReportingCommand {
  static override summary = 'Create a dump (Meilisearch v6 .dump) of a local database or of a running server, and wait for it.';

  static override description =
    'Enqueues a dumpCreation task, follows it, and prints where the file is. On a local database (--db-path, which must ' +
    'exist and not be in use by a server) the dump lands in --dump-dir; against a running server (--url, ours or ' +
    'Meilisearch) it lands in the server\'s dump directory (give --dump-dir too when it is on this machine, to get its ' +
    'path, size and --keep). --keep deletes only older dumps this command made of the same database, and only once the ' +
    'new one is read back whole and holds at least one index. SIGINT/SIGTERM cancels a local dump and removes its work ' +
    'files. Exit codes: 0 done, 1 the dump failed, 2 it could not start (bad flags, no database, database in use), ' +
    '130/143 interrupted.';

  static override examples = [
    '<%= config.bin %> dump create --db-path ./data.ms --dump-dir /backups/dumps --keep 7',
    '<%= config.bin %> dump create --url http://127.0.0.1:7700 --api-key $MASTER_KEY --json',
  ];

  static override flags = {
    ...targetFlags,
    'dump-dir': Flags.string({ description: 'directory of the dump files [default: dumps/ for a local database]' }),
    keep: Flags.integer({ description: 'keep only the N newest dumps of this database made by this command in --dump-dir', min: 1 }),
    timeout: Flags.integer({ description: 'seconds to wait for the task', default: 3600, min: 1 }),
    ...jsonFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(DumpCreate);
    const dumpDir = flags['dump-dir'] ?? (flags.url ? undefined : 'dumps');
    if (flags.keep !== undefined && !dumpDir) this.fail(new UsageError('--keep needs --dump-dir when the dump is made by a server'));
    const view = progress(this.json);
    const interrupt = onInterrupt();
    let target: OpsTarget | undefined;
    try {
      target = await openTarget(flags, { dumpDir });
      const result = await createBackup('dump', target, { dir: dumpDir, keep: flags.keep, timeoutMs: flags.timeout * 1000, onPoll: view.onPoll, signal: interrupt.signal });
      view.done();
      const dumpUid = result.task.details?.dumpUid ?? null;
      this.report(succeeded(result.task.uid, { dumpUid, path: result.path, bytes: result.bytes, removed: result.removed, keepSkipped: result.keepSkipped }), [
        result.path ? `Dump written: ${result.path} (${formatBytes(result.bytes)})` : `Dump ${String(dumpUid)}.dump written in the server's dump directory (task ${result.task.uid}).`,
        ...result.removed.map((file) => `Removed old dump: ${basename(file)}`),
        ...(result.keepSkipped ? [`--keep: ${result.keepSkipped}`] : []),
      ]);
    } catch (error) {
      view.done();
      this.fail(error, { prefix: 'Dump failed', exit: interrupt.exitCode() ?? undefined });
    } finally {
      interrupt.dispose();
      await target?.close();
    }
  }
}
