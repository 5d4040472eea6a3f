import { basename, resolve } from 'node:path';
import { Command, Flags } from '@oclif/core';
import { formatBytes, openTarget, progress } from '../../src/engine/ops/cli-support.js';
import { TaskFailed, createBackup } from '../../src/engine/ops/procedures.js';

export default class SnapshotCreate extends Command {
  static override summary = 'Take a snapshot (compacted copy of every environment, .snapshot tar.gz) and wait for it.';

  static override description =
    'Enqueues a snapshotCreation task and follows it; searches and writes continue meanwhile. The file is ' +
    '<snapshot-dir>/<db-name>.snapshot; with --keep N each snapshot is kept as <db-name>.<date>.snapshot and only the ' +
    'N newest stay. Against a running server (--url) give --snapshot-dir when it is on this machine. Exit code 1 on failure.';

  static override examples = [
    '<%= config.bin %> snapshot create --db-path ./data.ms --snapshot-dir /backups/snapshots --keep 24',
    '<%= config.bin %> snapshot create --url http://127.0.0.1:7700 --api-key $MASTER_KEY --snapshot-dir /var/lib/search/snapshots --keep 7 --json',
  ];

  static override flags = {
    'db-path': Flags.string({ description: 'local database directory', default: './data.ms', exclusive: ['url'] }),
    url: Flags.string({ description: 'URL of a running server (ours or Meilisearch)' }),
    'api-key': Flags.string({ description: 'API key for --url', env: 'SEARCH_API_KEY' }),
    'snapshot-dir': Flags.string({ description: 'directory of the snapshot files [default: snapshots/ for a local database]' }),
    'db-name': Flags.string({ description: 'database directory name of the server (names the snapshot file) [default: basename of --db-path, or data.ms]' }),
    keep: Flags.integer({ description: 'keep only the N newest snapshots (dated names)', min: 1 }),
    timeout: Flags.integer({ description: 'seconds to wait for the task', default: 3600, min: 1 }),
    json: Flags.boolean({ description: 'print a JSON report on stdout', default: false }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SnapshotCreate);
    const snapshotDir = flags['snapshot-dir'] ?? (flags.url ? undefined : 'snapshots');
    if (flags.keep !== undefined && !snapshotDir) this.error('--keep needs --snapshot-dir when the snapshot is made by a server', { exit: 2 });
    const dbName = flags['db-name'] ?? (flags.url ? 'data.ms' : basename(resolve(flags['db-path'])));
    const view = progress(flags.json);
    let target;
    try {
      target = await openTarget(flags, { snapshotDir });
    } catch (error) {
      if (flags.json) this.log(JSON.stringify({ status: 'failed', taskUid: null, error: { message: (error as Error).message } }));
      this.error(`Snapshot failed: ${(error as Error).message}`, { exit: 1 });
    }
    try {
      const result = await createBackup('snapshot', target, { dir: snapshotDir, dbName, keep: flags.keep, timeoutMs: flags.timeout * 1000, onPoll: view.onPoll });
      view.done();
      const report = { status: 'succeeded', taskUid: result.task.uid, path: result.path, bytes: result.bytes, removed: result.removed };
      if (flags.json) this.log(JSON.stringify(report));
      else {
        this.log(result.path ? `Snapshot written: ${result.path} (${formatBytes(result.bytes)})` : `Snapshot written in the server's snapshot directory (task ${result.task.uid}).`);
        for (const file of result.removed) this.log(`Removed old snapshot: ${basename(file)}`);
      }
    } catch (error) {
      view.done();
      const task = error instanceof TaskFailed ? error.task : null;
      if (flags.json) this.log(JSON.stringify({ status: 'failed', taskUid: task?.uid ?? null, error: task?.error ?? { message: (error as Error).message } }));
      this.error(`Snapshot failed: ${(error as Error).message}`, { exit: 1 });
    } finally {
      await target.close();
    }
  }
}
