/**
 * Operations that cannot hurt the data, through the built binary: one process per database,
 * commands that read a database never create one, `--keep` that deletes only what it may,
 * clean interruption, one JSON report shape.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { movies } from '../data.js';
import { BIN, killAll, serve } from './serve-process.js';
import { servingPid } from '../write-processes.js';

afterEach(killAll);

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'ops-safety-'));
});

function search(args: string[], env: Record<string, string> = {}) {
  return execa('node', [BIN, ...args], { cwd: root, reject: false, env: { PATH: process.env.PATH ?? '', ...env }, extendEnv: false });
}

/** oclif wraps error lines at 80 columns behind ` ›   `: read them as one line. */
function unwrap(stderr: string): string {
  return stderr.replace(/\s*\n\s*›\s*/g, ' ');
}

/** A database with `indexes` small indexes of films, closed again (its lock released). */
async function database(name: string, indexes = 2): Promise<string> {
  const dbPath = join(root, name);
  const engine = await Engine.open({ dbPath, logLevel: 'off' });
  try {
    for (let i = 0; i < indexes; i++) {
      const task = await engine.addDocuments(`films${i}`, movies().slice(i * 200, i * 200 + 200));
      expect((await engine.waitForTask(task.taskUid, { timeoutMs: 60_000 })).status).toBe('succeeded');
    }
  } finally {
    await engine.close();
  }
  return dbPath;
}

function files(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Wait until `check` holds (polling), or fail after `ms`. */
async function until(check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const REPORT_KEYS = ['status', 'taskUid', 'error'];

describe('one process per database', () => {
  test('a second serve on the same path fails at once naming the holder; a local command too; SIGKILL frees the lock', async () => {
    const db = await database('served.ms', 1);
    const first = await serve(['--db-path', db, '--log-level', 'off']);
    const pid = servingPid(first.process.pid!);

    const started = Date.now();
    const second = await execa('node', [BIN, 'serve', '--db-path', db, '--http-addr', '127.0.0.1:0'], { reject: false, env: { PATH: process.env.PATH ?? '' }, extendEnv: false });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(second.exitCode).toBe(2);
    expect(unwrap(second.stderr)).toContain(`is in use by process ${pid}`);
    expect(unwrap(second.stderr)).toContain('--url');

    const dump = await search(['dump', 'create', '--db-path', db, '--dump-dir', join(root, 'served-dumps'), '--json']);
    expect(dump.exitCode).toBe(2);
    const report = JSON.parse(dump.stdout);
    expect(Object.keys(report)).toEqual(expect.arrayContaining(REPORT_KEYS));
    expect(report).toMatchObject({ status: 'failed', taskUid: null, error: { code: 'database_in_use' } });
    expect(report.error.message).toContain(`process ${pid}`);
    expect(files(join(root, 'served-dumps')).filter((f) => f.endsWith('.dump'))).toEqual([]);

    // the same dump through the server works, and the kernel drops the lock when the holder dies
    const remote = await search(['dump', 'create', '--url', first.url, '--json']);
    expect(remote.exitCode).toBe(0);
    expect(JSON.parse(remote.stdout)).toMatchObject({ status: 'succeeded', taskUid: expect.any(Number), error: null });
    // nothing to roll back: exit 0 and the same report remotely as locally
    const rollback = await search(['rollback', '--url', first.url, '--json']);
    expect(rollback.exitCode).toBe(0);
    expect(JSON.parse(rollback.stdout)).toMatchObject({ status: 'succeeded', taskUid: null, error: null, outcome: 'nothing-to-roll-back' });
    first.process.kill('SIGKILL');
    await first.process;
    const again = await serve(['--db-path', db, '--log-level', 'off']);
    expect(again.url).toMatch(/^http:/);
  });
});

describe('commands that read a database never create one', () => {
  test('a mistyped --db-path fails with exit 2, creates nothing, and --keep deletes nothing', async () => {
    const db = await database('real.ms');
    const dumps = join(root, 'typo-dumps');
    const good = await search(['dump', 'create', '--db-path', db, '--dump-dir', dumps, '--keep', '1', '--json']);
    expect(good.exitCode).toBe(0);
    const kept = files(dumps);
    expect(kept.filter((f) => f.endsWith('.dump'))).toHaveLength(1);

    const typo = join(root, 'lcoal.ms');
    for (const args of [
      ['dump', 'create', '--db-path', typo, '--dump-dir', dumps, '--keep', '1', '--json'],
      ['snapshot', 'create', '--db-path', typo, '--snapshot-dir', join(root, 'typo-snaps'), '--keep', '1', '--json'],
      ['upgrade', '--db-path', typo, '--snapshot-dir', join(root, 'typo-snaps'), '--json'],
      ['rollback', '--db-path', typo, '--json'],
    ]) {
      const result = await search(args);
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', taskUid: null, error: { code: 'database_not_found' } });
    }
    expect(existsSync(typo)).toBe(false);
    expect(files(dumps)).toEqual(kept);
    expect(files(join(root, 'typo-snaps')).filter((f) => f.endsWith('.snapshot'))).toEqual([]);

    // an empty directory is no database either
    mkdirSync(join(root, 'empty.ms'));
    const empty = await search(['dump', 'create', '--db-path', join(root, 'empty.ms'), '--dump-dir', dumps, '--keep', '1']);
    expect(empty.exitCode).toBe(2);
    expect(unwrap(empty.stderr)).toMatch(/There is no database at .*empty\.ms.*no VERSION file/);
    expect(files(join(root, 'empty.ms'))).toEqual([]);
    expect(files(dumps)).toEqual(kept);
  });

  test('--keep removes only older backups of the same database made by this command', async () => {
    const a = await database('a.ms', 1);
    const b = await database('b.ms', 1);
    const dir = join(root, 'shared-dumps');
    const run = async (db: string) => {
      const result = await search(['dump', 'create', '--db-path', db, '--dump-dir', dir, '--keep', '1', '--json']);
      expect(result.exitCode, result.stderr).toBe(0);
      return JSON.parse(result.stdout);
    };
    const a1 = await run(a);
    const b1 = await run(b);
    // a dump this command did not write (POST /dumps, Meilisearch, a copy): never touched
    const foreign = join(dir, '20200101-000000000.dump');
    copyFileSync(a1.path, foreign);
    await new Promise((r) => setTimeout(r, 10)); // dump names are millisecond timestamps
    const a2 = await run(a);
    expect(a2.removed).toEqual([a1.path]);
    expect(existsSync(b1.path)).toBe(true);
    expect(existsSync(foreign)).toBe(true);
    expect(existsSync(a2.path)).toBe(true);

    // a database without any index makes a valid but empty backup: it never triggers a deletion
    const empty = await database('no-index.ms', 0);
    const first = await run(empty);
    const second = await run(empty);
    expect(second).toMatchObject({ removed: [], keepSkipped: expect.stringMatching(/holds no index: nothing removed/) });
    expect(existsSync(first.path)).toBe(true);
  });
});

describe('serve checks its options before creating the database folder', () => {
  test('a bad address, a port in use or a refused master key fail with exit 2 and create nothing', async () => {
    const running = await serve(['--db-path', join(root, 'port-holder.ms'), '--log-level', 'off']);
    const busy = new URL(running.url).host;
    const cases: Array<[string[], RegExp]> = [
      [['--http-addr', 'localhost'], /Invalid HTTP address/],
      [['--http-addr', busy], /Cannot listen on .*the port is in use/],
      [['--http-addr', '127.0.0.1:0', '--env', 'production'], /master key/i],
      [['--http-addr', '127.0.0.1:0', '--env', 'production', '--master-key', 'short'], /master key/i],
      [['--http-addr', '127.0.0.1:0', '--task-webhook-url', 'ftp://example.com'], /task-webhook-url|http and https/],
    ];
    for (const [args, message] of cases) {
      const db = join(root, 'never-created.ms');
      const result = await execa('node', [BIN, 'serve', '--db-path', db, ...args], { reject: false, env: { PATH: process.env.PATH ?? '' }, extendEnv: false });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(unwrap(result.stderr)).toMatch(message);
      expect(existsSync(db), args.join(' ')).toBe(false);
    }
  });
});

describe('interruption is clean', () => {
  test('SIGINT during a local dump cancels its task, removes its work files and exits 130; a killed run leaves nothing that lasts', async () => {
    const db = await database('slow.ms', 3);
    const dir = join(root, 'slow-dumps');
    const slow = { SEARCH_TEST_DUMP_DELAY_MS: '1500' };
    const working = () => files(dir).some((f) => f.startsWith('.dump-work-'));

    const interrupted = search(['dump', 'create', '--db-path', db, '--dump-dir', dir, '--json'], slow) as ResultPromise;
    await until(working);
    interrupted.kill('SIGINT');
    const result = await interrupted;
    expect(result.exitCode).toBe(130);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ status: 'failed', taskUid: expect.any(Number), error: { code: 'interrupted' } });
    expect(unwrap(result.stderr)).toMatch(/task \d+ was canceled and its work files removed/);
    expect(files(dir)).toEqual([]);

    // SIGKILL: nothing can clean up at once; the next run removes the leftovers and does not run the old task again
    const killed = search(['dump', 'create', '--db-path', db, '--dump-dir', dir], slow) as ResultPromise;
    await until(working);
    killed.kill('SIGKILL');
    await killed;
    expect(working()).toBe(true);

    const next = await search(['dump', 'create', '--db-path', db, '--dump-dir', dir, '--json']);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(files(dir).filter((f) => !f.startsWith('.search-backups'))).toEqual([JSON.parse(next.stdout).path.split('/').pop()]);
    // still one dump after the database is opened again: the killed run's task was canceled, not run
    const engine = await Engine.open({ dbPath: db, logLevel: 'off' });
    try {
      const dumps = engine.getTasks({ types: ['dumpCreation'], limit: 100 }).results;
      expect(dumps.map((t) => t.status).sort()).toEqual(['canceled', 'canceled', 'succeeded']);
    } finally {
      await engine.close();
    }
    expect(files(dir).filter((f) => f.endsWith('.dump'))).toHaveLength(1);
  });
});

describe('interruption of a snapshot', () => {
  test('SIGTERM during a local snapshot cancels it, removes its work folder and exits 143', async () => {
    // each environment is copied whole: a database of 4 indexes takes a moment
    const db = await database('snap-slow.ms', 4);
    const dir = join(root, 'slow-snaps');
    const running = search(['snapshot', 'create', '--db-path', db, '--snapshot-dir', dir, '--json']) as ResultPromise;
    await until(() => files(dir).some((f) => f.startsWith('.snapshot-work-')));
    running.kill('SIGTERM');
    const result = await running;
    expect(result.exitCode).toBe(143);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', taskUid: expect.any(Number), error: { code: 'interrupted' } });
    expect(files(dir)).toEqual([]);
  });
});

describe('a local wait that times out', () => {
  test('names its task in the report, cancels it and removes its work files (exit 1)', async () => {
    const db = await database('timeout.ms', 2);
    const dir = join(root, 'timeout-dumps');
    const result = await search(['dump', 'create', '--db-path', db, '--dump-dir', dir, '--timeout', '1', '--json'], { SEARCH_TEST_DUMP_DELAY_MS: '2500' });
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'failed', taskUid: expect.any(Number), error: { code: 'task_timeout', message: expect.stringMatching(/was canceled/) } });
    expect(files(dir)).toEqual([]);
  });
});

describe('progress without a terminal', () => {
  test('a local dump prints one line per state of its task on stderr, and only the result on stdout', async () => {
    const db = await database('progress.ms', 1);
    const out = await search(['dump', 'create', '--db-path', db, '--dump-dir', join(root, 'progress-dumps')]);
    expect(out.exitCode).toBe(0);
    expect(out.stderr).toMatch(/^dumpCreation task \d+: (enqueued|processing) \(\d+\.\d s\)$/m);
    expect(out.stderr).toMatch(/^dumpCreation task \d+: succeeded \(\d+\.\d s\)$/m);
    expect(out.stderr).not.toContain('\r');
    expect(out.stdout).toMatch(/^Dump written: .*progress-dumps\/\d{8}-\d{9}\.dump \(.*\)$/);
  });
});

describe('reports and help', () => {
  test('every --json report has status, taskUid and error {code, message}; flag errors too (exit 2)', async () => {
    const db = await database('json.ms', 1);
    const outputs = [
      await search(['dump', 'create', '--db-path', db, '--dump-dir', join(root, 'json-dumps'), '--json']),
      await search(['snapshot', 'create', '--db-path', db, '--snapshot-dir', join(root, 'json-snaps'), '--json']),
      await search(['rollback', '--db-path', db, '--json']),
      await search(['upgrade', '--db-path', db, '--json']),
      await search(['upgrade', '--db-path', db, '--dry-run', '--json']),
    ];
    for (const out of outputs) {
      expect(out.exitCode, out.stderr).toBe(0);
      const report = JSON.parse(out.stdout);
      expect(Object.keys(report)).toEqual(expect.arrayContaining(REPORT_KEYS));
      expect(report.status).toBe('succeeded');
      expect(report.error).toBeNull();
    }
    expect(JSON.parse(outputs[0]!.stdout).taskUid).toEqual(expect.any(Number));
    expect(JSON.parse(outputs[2]!.stdout)).toMatchObject({ outcome: 'nothing-to-roll-back', taskUid: null });

    for (const args of [
      ['dump', 'create', '--keep', '0', '--json'],
      ['snapshot', 'create', '--no-such-flag', '--json'],
      ['dump', 'import', '--json'],
    ]) {
      const bad = await search(args);
      expect(bad.exitCode, args.join(' ')).toBe(2);
      expect(JSON.parse(bad.stdout)).toMatchObject({ status: 'failed', taskUid: null, error: { code: 'invalid_flags', message: expect.any(String) } });
    }
  });

  test('import errors name the flags of the command that failed', async () => {
    const db = await database('import.ms', 1);
    const missing = await search(['snapshot', 'import', join(root, 'nope.snapshot'), '--db-path', join(root, 'fresh.ms')]);
    expect(missing.exitCode).toBe(1);
    expect(unwrap(missing.stderr)).toContain('--ignore-missing');
    expect(unwrap(missing.stderr)).not.toContain('--ignore-missing-snapshot');
    const dump = await search(['dump', 'create', '--db-path', db, '--dump-dir', join(root, 'import-dumps'), '--json']);
    const exists = await search(['dump', 'import', JSON.parse(dump.stdout).path, '--db-path', db]);
    expect(exists.exitCode).toBe(1);
    expect(unwrap(exists.stderr)).toContain('--ignore-if-db-exists');
    expect(unwrap(exists.stderr)).not.toContain('--ignore-dump-if-db-exists');
  });
});
