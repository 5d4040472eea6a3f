/** `search serve` through the built binary: help, options from flags/env/config, banner, shutdown. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, test } from 'vitest';
import { BIN, json, killAll, serve, waitTask } from './serve-process.js';

const PATH_ENV = { PATH: process.env.PATH ?? '' };

afterEach(killAll);

describe('search CLI', () => {
  test('--help lists the commands with their descriptions; serve --help shows flags, env names and examples', async () => {
    const root = await execa('node', [BIN, '--help']);
    expect(root.stdout).toMatch(/serve\s+Start the HTTP server/);
    const help = await execa('node', [BIN, 'serve', '--help']);
    for (const flag of ['--db-path', '--http-addr', '--env', '--http-payload-size-limit', '--max-indexing-memory', '--log-level', '--config-file-path'])
      expect(help.stdout).toContain(flag);
    expect(help.stdout).toContain('SEARCH_DB_PATH');
    expect(help.stdout).toContain('MEILI_DB_PATH');
    expect(help.stdout).toContain('EXAMPLES');
  });

  test('an invalid option value stops with a clear message and a non-zero exit', async () => {
    const result = await execa('node', [BIN, 'serve', '--env', 'staging'], { reject: false });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/Invalid value `staging` for `env`/);
    const file = await execa('node', [BIN, 'serve', '--config-file-path', '/nonexistent/config.toml'], { reject: false });
    expect(file.exitCode).not.toBe(0);
    expect(file.stderr).toMatch(/does not exist/);
  });

  test('options come from MEILI_*/SEARCH_* variables and the config file; SIGTERM shuts down cleanly and keeps the data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-cli-'));
    const config = join(dir, 'config.toml');
    writeFileSync(config, `db_path = "${join(dir, 'from-file.ms')}"\nhttp_payload_size_limit = "2 KiB"\n`);
    const env = { ...PATH_ENV, MEILI_DB_PATH: join(dir, 'from-env.ms'), SEARCH_CONFIG_FILE_PATH: config };
    const first = await serve(['--log-level', 'off'], env);
    expect(first.output()).toContain(`Database path:       ${join(dir, 'from-env.ms')}`);

    // The config file's 2 KiB payload limit is in force.
    const big = await json(`${first.url}/indexes/docs/documents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Array.from({ length: 200 }, (_, id) => ({ id, text: 'lorem ipsum' }))),
    });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');

    const added = await json(`${first.url}/indexes/docs/documents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ id: 1, text: 'kept' }]),
    });
    expect(added.status).toBe(202);
    await waitTask(first.url, added.body.taskUid);

    first.process.kill('SIGTERM');
    const exit = await first.process;
    expect(exit.exitCode).toBe(0);
    expect(first.output()).toContain('Received SIGTERM: shutting down.');

    const second = await serve(['--log-level', 'off'], env);
    expect((await json(`${second.url}/indexes/docs/documents/1`)).body).toEqual({ id: 1, text: 'kept' });
    second.process.kill('SIGINT');
    expect((await second.process).exitCode).toBe(0);
  }, 180_000);
});
