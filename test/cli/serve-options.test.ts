/** Option resolution of `search serve`: flag > SEARCH_* > MEILI_* > config file > default. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseByteSize } from '../../src/cli/byte-size.js';
import { SERVE_OPTIONS, resolveOptions } from '../../src/cli/serve-options.js';

const dir = mkdtempSync(join(tmpdir(), 'search-opts-'));

describe('serve options', () => {
  test('defaults', () => {
    const { options, configFile } = resolveOptions(SERVE_OPTIONS, {}, {}, dir);
    expect(configFile).toBeUndefined();
    // Other features add their own options; these are the ones of the core server.
    expect(options).toMatchObject({
      'db-path': './data.ms',
      'http-addr': '127.0.0.1:7700',
      env: 'development',
      'http-payload-size-limit': 100_000_000,
      'log-level': 'INFO',
    });
  });

  test('precedence: flag, then SEARCH_*, then MEILI_*, then the config file', () => {
    const file = join(dir, 'precedence.toml');
    writeFileSync(file, 'db_path = "/from/file"\nhttp_addr = "0.0.0.0:1"\nlog_level = "warn"\nhttp_payload_size_limit = "1 GiB"\n');
    const env = { SEARCH_HTTP_ADDR: '127.0.0.1:2', MEILI_HTTP_ADDR: '127.0.0.1:3', MEILI_LOG_LEVEL: 'debug' };
    const { options, configFile } = resolveOptions(SERVE_OPTIONS, { 'config-file-path': file, 'db-path': '/from/flag' }, env, dir);
    expect(configFile).toBe(file);
    expect(options['db-path']).toBe('/from/flag');
    expect(options['http-addr']).toBe('127.0.0.1:2');
    expect(options['log-level']).toBe('DEBUG');
    expect(options['http-payload-size-limit']).toBe(1024 ** 3);
  });

  test('./config.toml is read when present; the config path can come from the environment', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'search-cwd-'));
    writeFileSync(join(cwd, 'config.toml'), 'env = "production"\n');
    expect(resolveOptions(SERVE_OPTIONS, {}, {}, cwd).options.env).toBe('production');
    const other = join(dir, 'other.toml');
    writeFileSync(other, 'db_path = "/elsewhere"\n');
    expect(resolveOptions(SERVE_OPTIONS, {}, { MEILI_CONFIG_FILE_PATH: other }, cwd).options['db-path']).toBe('/elsewhere');
  });

  test('clear errors for bad values, unknown keys, missing or invalid files', () => {
    expect(() => resolveOptions(SERVE_OPTIONS, { env: 'staging' }, {}, dir)).toThrow(/`env`.*development, production/);
    expect(() => resolveOptions(SERVE_OPTIONS, {}, { SEARCH_HTTP_PAYLOAD_SIZE_LIMIT: 'lots' }, dir)).toThrow(
      /SEARCH_HTTP_PAYLOAD_SIZE_LIMIT/,
    );
    const typo = join(dir, 'typo.toml');
    writeFileSync(typo, 'db_pth = "x"\n');
    expect(() => resolveOptions(SERVE_OPTIONS, { 'config-file-path': typo }, {}, dir)).toThrow(/Unknown key `db_pth`/);
    expect(() => resolveOptions(SERVE_OPTIONS, { 'config-file-path': join(dir, 'absent.toml') }, {}, dir)).toThrow(/does not exist/);
    const broken = join(dir, 'broken.toml');
    writeFileSync(broken, 'db_path = \n');
    expect(() => resolveOptions(SERVE_OPTIONS, { 'config-file-path': broken }, {}, dir)).toThrow(/not valid TOML/);
  });

  test('byte sizes', () => {
    expect(parseByteSize('100 MB')).toBe(100_000_000);
    expect(parseByteSize('100Mb')).toBe(100_000_000);
    expect(parseByteSize('2 GiB')).toBe(2 * 1024 ** 3);
    expect(parseByteSize('1048576')).toBe(1048576);
    expect(parseByteSize(4096)).toBe(4096);
    expect(parseByteSize('12 parsecs')).toBeUndefined();
    expect(parseByteSize('-1')).toBeUndefined();
  });
});
