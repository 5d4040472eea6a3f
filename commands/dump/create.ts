import { basename } from 'node:path';
import { Command, Flags } from '@oclif/core';
import { formatBytes, openTarget, progress } from '../../src/engine/ops/cli-support.js';
import { TaskFailed, createBackup } from '../../src/engine/ops/procedures.js';

export default class DumpCreate extends Command {
  static override summary = 'Create a dump (Meilisearch v6 .dump) of a local database or of a running server, and wait for it.';

  static override description =
    'Enqueues a dumpCreation task, follows it, and prints where the file is. On a local database (--db-path) the dump ' +
    'lands in --dump-dir; against a running server (--url, ours or Meilisearch) it lands in the server\'s dump directory ' +
    '(give --dump-dir too when it is on this machine, to get its path, size and --keep). Exit code 1 when the task fails.';

  static override examples = [
    '<%= config.bin %> dump create --db-path ./data.ms --dump-dir /backups/dumps --keep 7',
    '<%= config.bin %> dump create --url http://127.0.0.1:7700 --api-key $MASTER_KEY --json',
  ];

  static override flags = {
    'db-path': Flags.string({ description: 'local database directory', default: './data.ms', exclusive: ['url'] }),
    url: Flags.string({ description: 'URL of a running server (ours or Meilisearch)' }),
    'api-key': Flags.string({ description: 'API key for --url', env: 'SEARCH_API_KEY' }),
    'dump-dir': Flags.string({ description: 'directory of the dump files [default: dumps/ for a local database]' }),
    keep: Flags.integer({ description: 'keep only the N newest dumps in --dump-dir', min: 1 }),
    timeout: Flags.integer({ description: 'seconds to wait for the task', default: 3600, min: 1 }),
    json: Flags.boolean({ description: 'print a JSON report on stdout', default: false }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(DumpCreate);
    const dumpDir = flags['dump-dir'] ?? (flags.url ? undefined : 'dumps');
    if (flags.keep !== undefined && !dumpDir) this.error('--keep needs --dump-dir when the dump is made by a server', { exit: 2 });
    const view = progress(flags.json);
    let target;
    try {
      target = await openTarget(flags, { dumpDir });
    } catch (error) {
      this.fail(error, flags.json);
    }
    try {
      const result = await createBackup('dump', target, { dir: dumpDir, keep: flags.keep, timeoutMs: flags.timeout * 1000, onPoll: view.onPoll });
      view.done();
      const report = { status: 'succeeded', taskUid: result.task.uid, dumpUid: result.task.details?.dumpUid ?? null, path: result.path, bytes: result.bytes, removed: result.removed };
      if (flags.json) this.log(JSON.stringify(report));
      else {
        this.log(result.path ? `Dump written: ${result.path} (${formatBytes(result.bytes)})` : `Dump ${report.dumpUid}.dump written in the server's dump directory (task ${result.task.uid}).`);
        for (const file of result.removed) this.log(`Removed old dump: ${basename(file)}`);
      }
    } catch (error) {
      view.done();
      this.fail(error, flags.json);
    } finally {
      await target.close();
    }
  }

  private fail(error: unknown, json: boolean): never {
    const task = error instanceof TaskFailed ? error.task : null;
    if (json) this.log(JSON.stringify({ status: 'failed', taskUid: task?.uid ?? null, error: task?.error ?? { message: (error as Error).message } }));
    this.error(`Dump failed: ${(error as Error).message}`, { exit: 1 });
  }
}
