import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { Meilisearch } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, json, serve, waitTask } from '../cli/serve-process.js';

const FIXTURE = join(process.cwd(), 'fixtures/db-v0.9.0.snapshot');
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ops-cli-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function search(args: string[], env: Record<string, string> = {}) {
  return execa('node', [BIN, ...args], { cwd: root, reject: false, env: { PATH: process.env.PATH ?? '', ...env }, extendEnv: false });
}

describe('search serve with the ops options, and the ops commands against it', () => {
  test('--import-snapshot + --upgrade-db: the upgrade task is listed and runs first; POST /dumps; dump and snapshot over --url', async () => {
    const db = join(root, 'served.ms');
    const served = await serve(['--db-path', db, '--import-snapshot', FIXTURE, '--upgrade-db', '--dump-dir', join(root, 'server-dumps'), '--snapshot-dir', join(root, 'server-snaps')]);
    try {
      const { body: list } = await json(`${served.url}/tasks?types=upgradeDatabase`);
      expect(list.results).toHaveLength(1);
      expect(list.results[0]).toMatchObject({ type: 'upgradeDatabase', details: { upgradeFrom: 'v0.9.0', upgradeTo: 'v1.4.0' } });
      expect((await waitTask(served.url, list.results[0].uid)).status).toBe('succeeded');

      const posted = await json(`${served.url}/dumps?customMetadata=nightly`, { method: 'POST' });
      expect(posted.status).toBe(202);
      expect(posted.body).toMatchObject({ type: 'dumpCreation', status: 'enqueued', indexUid: null, customMetadata: 'nightly' });
      expect(await waitTask(served.url, posted.body.taskUid)).toMatchObject({ status: 'succeeded', customMetadata: 'nightly' });

      // the official client's calls work unchanged
      const client = new Meilisearch({ host: served.url });
      const viaClient = await client.createDump().waitTask();
      expect(viaClient).toMatchObject({ type: 'dumpCreation', status: 'succeeded', details: { dumpUid: expect.stringMatching(/^\d{8}-\d{9}$/) } });
      expect((await client.createSnapshot().waitTask()).status).toBe('succeeded');
      expect(existsSync(join(root, 'server-snaps', 'served.ms.snapshot'))).toBe(true);

      const dump = await search(['dump', 'create', '--url', served.url, '--dump-dir', join(root, 'server-dumps'), '--keep', '1', '--json']);
      expect(dump.exitCode).toBe(0);
      const report = JSON.parse(dump.stdout);
      expect(report).toMatchObject({ status: 'succeeded', path: expect.stringMatching(/server-dumps\/\d{8}-\d{9}\.dump$/) });
      // the dumps of POST /dumps and of the client were not made by this command: --keep leaves them
      expect(report.removed).toEqual([]);
      const second = await search(['dump', 'create', '--url', served.url, '--dump-dir', join(root, 'server-dumps'), '--keep', '1', '--json']);
      expect(second.exitCode).toBe(0);
      expect(JSON.parse(second.stdout).removed).toEqual([report.path]);
      expect(readdirSync(join(root, 'server-dumps')).filter((f) => f.endsWith('.dump'))).toHaveLength(3);

      // --keep on a server's snapshots, the server's folder not being named data.ms and no --db-name given
      for (let i = 0; i < 2; i++) {
        const kept = await search(['snapshot', '--url', served.url, '--snapshot-dir', join(root, 'server-snaps'), '--keep', '1', '--json']);
        expect(kept.exitCode, kept.stderr).toBe(0);
        expect(JSON.parse(kept.stdout)).toMatchObject({ status: 'succeeded', path: expect.stringMatching(/server-snaps\/served\.ms\.\d{8}-\d{9}\.snapshot$/), removed: i === 0 ? [] : [expect.any(String)] });
      }

      const snap = await search(['snapshot', '--url', served.url, '--snapshot-dir', join(root, 'server-snaps'), '--db-name', 'served.ms']);
      expect(snap.exitCode).toBe(0);
      expect(snap.stdout).toMatch(/Snapshot written: .*server-snaps\/served\.ms\.snapshot/);

      // the dump imports into a fresh directory with the CLI
      const imported = await search(['dump', 'import', JSON.parse(second.stdout).path, '--db-path', join(root, 'from-dump.ms'), '--json']);
      expect(imported.exitCode).toBe(0);
      expect(JSON.parse(imported.stdout)).toMatchObject({ outcome: 'imported', indexes: 3 });
    } finally {
      served.process.kill('SIGTERM');
      await served.process;
    }
  });

  test('search upgrade: a failing upgrade is rolled back (exit 1), then a clean run upgrades; --dry-run; --via-dump', async () => {
    const db = join(root, 'local.ms');
    expect((await search(['snapshot', 'import', FIXTURE, '--db-path', db])).exitCode).toBe(0);
    const refused = await search(['dump', 'create', '--db-path', db]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.replace(/\s*\n\s*›\s*/g, ' ')).toMatch(/storage format 0\.9\.0 but this binary uses storage format 1\.4\.0/);

    const plan = await search(['upgrade', '--db-path', db, '--dry-run']);
    expect(plan.exitCode).toBe(0);
    expect(plan.stdout).toMatch(/storage format 0\.9\.0; this binary: storage format 1\.4\.0/);
    expect(plan.stdout).toMatch(/take a snapshot/);
    expect(readFileSync(join(db, 'VERSION'), 'utf8').trim()).toBe('0.9.0');

    const notices: any[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        notices.push(JSON.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const notifyUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/upgrade`;

    // loopback is not a public address: without --experimental-allowed-ip-networks the notice is refused, as a webhook would be
    const failed = await search(['upgrade', '--db-path', db, '--json', '--notify-url', notifyUrl], { SEARCH_TEST_UPGRADE_FAIL_AFTER: '2' });
    expect(failed.exitCode).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      status: 'failed',
      error: { code: 'upgrade_rolled_back' },
      outcome: 'rolled-back',
      from: '0.9.0',
      verified: { version: '0.9.0', journal: false },
      instanceStatus: 'rolled back',
      statusHistory: ['running', 'updating', 'rolled back'],
      notified: { delivered: false },
    });
    expect(notices).toEqual([]);
    // without --json and without a terminal: one line per change of the instance status on stderr
    const told = await search(['upgrade', '--db-path', db], { SEARCH_TEST_UPGRADE_FAIL_AFTER: '2' });
    expect(told.exitCode).toBe(1);
    expect(told.stderr).toMatch(/^status: running\n[\s\S]*\nstatus: running -> updating\n[\s\S]*\nstatus: updating -> rolled back$/m);
    expect(told.stdout).toMatch(/was rolled back: the database is in storage format 0\.9\.0 again/);
    expect(readFileSync(join(db, 'VERSION'), 'utf8').trim()).toBe('0.9.0');

    const ok = await search(['upgrade', '--db-path', db, '--json', '--notify-url', notifyUrl, '--experimental-allowed-ip-networks', '127.0.0.1']);
    expect(ok.exitCode).toBe(0);
    const report = JSON.parse(ok.stdout);
    expect(report).toMatchObject({ status: 'succeeded', error: null, outcome: 'upgraded', from: '0.9.0', to: '1.4.0', statusHistory: ['running', 'updating', 'running'], notified: { delivered: true } });
    expect(notices).toEqual([expect.objectContaining({ event: 'upgrade', status: 'running', history: ['running', 'updating', 'running'], from: '0.9.0', to: '1.4.0', error: null })]);
    receiver.close();
    expect(existsSync(report.snapshot)).toBe(true);
    expect(readFileSync(join(db, 'VERSION'), 'utf8').trim()).toBe('1.4.0');
    expect((await search(['rollback', '--db-path', db])).stdout).toMatch(/Nothing to roll back/);

    const viaDump = join(root, 'via-dump.ms');
    expect((await search(['snapshot', 'import', FIXTURE, '--db-path', viaDump])).exitCode).toBe(0);
    const byDump = await search(['upgrade', '--db-path', viaDump, '--via-dump', '--json']);
    expect(byDump.exitCode).toBe(0);
    expect(JSON.parse(byDump.stdout)).toMatchObject({ outcome: 'upgraded', previous: `${viaDump}.pre-upgrade-0.9.0` });
    expect(readFileSync(join(viaDump, 'VERSION'), 'utf8').trim()).toBe('1.4.0');
    expect(readFileSync(join(`${viaDump}.pre-upgrade-0.9.0`, 'VERSION'), 'utf8').trim()).toBe('0.9.0');
  });
});
