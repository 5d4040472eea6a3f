/**
 * The package a user installs: a name of ours, a `search` bin, dependencies that run on the Node
 * of `engines`, the README's cron line working as written under cron's bare environment, and the
 * version story of `--version`, `-h` and "did you mean".
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, test } from 'vitest';
import { DB_FORMAT_VERSION } from '../../src/engine/store/format.js';
import { BIN, json, killAll, serve } from './serve-process.js';

afterEach(killAll);

const ROOT = join(BIN, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const semver = createRequire(import.meta.url)('semver') as { satisfies: (version: string, range: string) => boolean; minVersion: (range: string) => { version: string } };

describe('the npm package', () => {
  test('is named for us, installs the `search` bin, and needs no newer Node than its engines', () => {
    expect(pkg.name).not.toBe('search');
    expect(pkg.bin).toEqual({ search: './bin/run.js' });
    const oldest = semver.minVersion(pkg.engines.node).version;
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    expect(lock.packages[''].name).toBe(pkg.name);
    const tooNew = Object.entries(lock.packages as Record<string, { engines?: { node?: string } }>)
      .filter(([, info]) => typeof info.engines?.node === 'string' && !semver.satisfies(oldest, info.engines.node))
      .map(([name, info]) => `${name} (${info.engines!.node})`);
    expect(tooNew).toEqual([]);
  });

  test('the README cron line runs as written under env -i and logs one JSON report', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const block = /```cron\n([\s\S]*?)```/.exec(readme)![1]!;
    const pathLine = block.split('\n').find((l) => l.startsWith('PATH='))!;
    const cronLine = block.split('\n').find((l) => /^[\d*]/.test(l))!;
    const command = cronLine.split(/\s+/).slice(5).join(' ');

    // the machine's folders, under a temporary root; `search` and `node` side by side as `npm install -g` leaves them
    const fake = mkdtempSync(join(tmpdir(), 'cron-'));
    const map = (path: string) => join(fake, path);
    mkdirSync(map('/usr/local/bin'), { recursive: true });
    symlinkSync(BIN, map('/usr/local/bin/search'));
    symlinkSync(process.execPath, map('/usr/local/bin/node'));
    const masterKey = 'a-master-key-of-at-least-16-bytes';
    mkdirSync(map('/etc/search'), { recursive: true });
    writeFileSync(map('/etc/search/api-key'), masterKey);
    mkdirSync(map('/var/log'), { recursive: true });

    const server = await serve(['--db-path', join(fake, 'data.ms'), '--master-key', masterKey, '--dump-dir', map('/var/lib/search/dumps'), '--log-level', 'off']);
    const auth = { authorization: `Bearer ${masterKey}` };
    const added = await json(`${server.url}/indexes/films/documents`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify([{ id: 1, title: 'kept' }]) });
    expect(added.status).toBe(202);

    const mapped = (text: string) =>
      text
        .replace(/\/usr\/local\/bin/g, map('/usr/local/bin'))
        .replace(/\/etc\/search/g, map('/etc/search'))
        .replace(/\/var\/lib\/search/g, map('/var/lib/search'))
        .replace(/\/var\/log/g, map('/var/log'))
        .replace('http://127.0.0.1:7700', server.url);
    const run = await execa('env', ['-i', mapped(pathLine), '/bin/sh', '-c', mapped(command)], { reject: false });
    expect(run.exitCode, run.stderr).toBe(0);
    const log = readFileSync(map('/var/log/search-backup.log'), 'utf8').trim().split('\n');
    expect(log).toHaveLength(1);
    const report = JSON.parse(log[0]!);
    expect(report).toMatchObject({ status: 'succeeded', taskUid: expect.any(Number), error: null });
    expect(readdirSync(map('/var/lib/search/dumps')).filter((f) => f.endsWith('.dump'))).toEqual([report.path.split('/').pop()]);
  });
});

describe('help and versions', () => {
  test('--version and -v name the package version and the storage format; /version serves the same package version as searchVersion', async () => {
    for (const flag of ['--version', '-v']) {
      const out = await execa('node', [BIN, flag]);
      expect(out.stdout).toBe(`search ${pkg.version} (package ${pkg.name}; storage format ${DB_FORMAT_VERSION}; node ${process.version} ${process.platform}-${process.arch})`);
    }
    const server = await serve(['--db-path', join(mkdtempSync(join(tmpdir(), 'version-')), 'db'), '--log-level', 'off']);
    // pkgVersion is the Meilisearch API version we follow (version-gated clients read it); ours is searchVersion
    const version = (await json(`${server.url}/version`)).body;
    expect(version.searchVersion).toBe(pkg.version);
    expect(version.pkgVersion).toMatch(/^1\.\d+\.\d+$/);
    expect(server.output()).toContain(`search ${pkg.version} (storage format ${DB_FORMAT_VERSION})`);
  });

  test('-h is --help; a mistyped command gets "did you mean" and exit 2 (a JSON report with --json)', async () => {
    const short = await execa('node', [BIN, 'dump', 'create', '-h']);
    const long = await execa('node', [BIN, 'dump', 'create', '--help']);
    expect(short.stdout).toBe(long.stdout);
    expect(short.stdout).toContain('--keep');

    const typo = await execa('node', [BIN, 'snapshto', 'create'], { reject: false });
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr.replace(/\s*\n\s*›\s*/g, ' ')).toContain('Did you mean `search snapshot create`?');
    const typoJson = await execa('node', [BIN, 'dump', 'creat', '--json'], { reject: false });
    expect(typoJson.exitCode).toBe(2);
    expect(JSON.parse(typoJson.stdout)).toMatchObject({ status: 'failed', taskUid: null, error: { code: 'invalid_command', message: expect.stringContaining('search dump create') } });
    const nonsense = await execa('node', [BIN, 'xyzzy'], { reject: false });
    expect(nonsense.exitCode).toBe(2);
    expect(nonsense.stderr).not.toContain('Did you mean');
  });
});
