/**
 * `search serve` runs itself again with the process settings it wants (src/cli/process-settings.ts):
 * glibc's allocator settings inside a memory limit, V8 young generations at full size with ample
 * memory. The test machine has no limit: SEARCH_MALLOC_TUNING=on asks for the allocator settings
 * anyway, and SEARCH_HEAP_TUNING says whether to ask for the heap options whatever the memory.
 * What must hold: the serving process has the settings, arguments, output, exit codes and signals
 * are those of a direct run, and the child does not outlive the parent.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, test } from 'vitest';
import { MALLOC_TUNABLES, SERVING_HEAP_OPTIONS, wantedHeapOptions } from '../../src/cli/process-settings.js';
import { BIN, json, killAll, serve, waitTask } from './serve-process.js';
import { childPids, commandLine } from '../write-processes.js';

const ON = { PATH: process.env.PATH ?? '', SEARCH_MALLOC_TUNING: 'on', SEARCH_HEAP_TUNING: 'off' };
const GiB = 1024 ** 3;
const linux = process.platform === 'linux';

afterEach(killAll);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function environ(pid: number): Record<string, string> {
  return Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

describe.skipIf(!linux)('serve under a memory limit runs again with the allocator settings', () => {
  test('the serving process has GLIBC_TUNABLES and the flags; SIGTERM to the command shuts it down cleanly with exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-malloc-'));
    const served = await serve(['--log-level', 'info', '--db-path', join(dir, 'db.ms'), '--master-key', 'a-master-key-of-16-bytes-or-more'], ON);
    const [child] = childPids(served.process.pid!);
    expect(child).toBeDefined();
    // glibc cuts the variable at its first ':' in place as it parses it: the start says enough
    expect(MALLOC_TUNABLES.startsWith(environ(child!).GLIBC_TUNABLES!)).toBe(true);
    expect(environ(child!).GLIBC_TUNABLES).toMatch(/^glibc\.malloc\./);
    expect(environ(served.process.pid!).GLIBC_TUNABLES).toBeUndefined();
    // the flags reached the child: its database path and its key
    expect(served.output()).toContain(`Database path:       ${join(dir, 'db.ms')}`);
    expect((await json(`${served.url}/indexes`)).status).toBe(401);
    const auth = { authorization: 'Bearer a-master-key-of-16-bytes-or-more', 'content-type': 'application/json' };
    const added = await json(`${served.url}/indexes/docs/documents`, { method: 'POST', headers: auth, body: JSON.stringify([{ id: 1 }]) });
    expect(added.status).toBe(202);
    const deadline = Date.now() + 60_000;
    let status = '';
    while (Date.now() < deadline && !['succeeded', 'failed'].includes(status)) {
      status = (await json(`${served.url}/tasks/${added.body.taskUid}`, { headers: auth })).body.status;
      await sleep(50);
    }
    expect(status).toBe('succeeded');

    served.process.kill('SIGTERM');
    const exit = await served.process;
    expect(exit.exitCode).toBe(0);
    expect(served.output()).toContain('Received SIGTERM: shutting down.');
    expect(existsSync(`/proc/${child}`)).toBe(false);
  }, 120_000);

  test('an invalid flag: the same message and exit code as a direct run', async () => {
    const direct = await execa('node', [BIN, 'serve', '--env', 'staging'], { reject: false, env: { SEARCH_MALLOC_TUNING: 'off', SEARCH_HEAP_TUNING: 'off' } });
    const again = await execa('node', [BIN, 'serve', '--env', 'staging'], { reject: false, env: ON, extendEnv: false });
    expect(direct.exitCode).not.toBe(0);
    expect(again.exitCode).toBe(direct.exitCode);
    expect(again.stderr).toBe(direct.stderr);
  }, 60_000);

  test('SIGKILL of the command ends the serving process too; the database opens again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-malloc-'));
    const args = ['--log-level', 'off', '--db-path', join(dir, 'db.ms')];
    const served = await serve(args, ON);
    const [child] = childPids(served.process.pid!);
    served.process.kill('SIGKILL');
    expect((await served.process).signal).toBe('SIGKILL');
    const until = Date.now() + 10_000;
    while (existsSync(`/proc/${child}`) && Date.now() < until) await sleep(50);
    expect(existsSync(`/proc/${child}`)).toBe(false);
    const second = await serve(args, ON);
    const added = await json(`${second.url}/indexes/docs/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[{"id":1}]' });
    expect((await waitTask(second.url, added.body.taskUid)).status).toBe('succeeded');
  }, 120_000);

  test('the child killed by a signal: the command dies of the same signal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-malloc-'));
    const served = await serve(['--log-level', 'off', '--db-path', join(dir, 'db.ms')], ON);
    const [child] = childPids(served.process.pid!);
    process.kill(child!, 'SIGKILL');
    expect((await served.process).signal).toBe('SIGKILL');
  }, 120_000);

  test('not re-run when GLIBC_TUNABLES is set or SEARCH_MALLOC_TUNING=off, with no heap options wanted', async () => {
    const heapOptionsGiven = { ...ON, SEARCH_MALLOC_TUNING: 'off', SEARCH_HEAP_TUNING: 'on', NODE_OPTIONS: '--max-semi-space-size=8' };
    for (const env of [{ ...ON, GLIBC_TUNABLES: 'glibc.malloc.arena_max=4' }, { ...ON, SEARCH_MALLOC_TUNING: 'off' }, heapOptionsGiven]) {
      const dir = mkdtempSync(join(tmpdir(), 'search-malloc-'));
      const served = await serve(['--log-level', 'off', '--db-path', join(dir, 'db.ms')], env);
      expect(childPids(served.process.pid!).filter((pid) => /node/.test(commandLine(pid)))).toEqual([]);
      // serving (a SIGTERM right at the banner can come before the handler is in place)
      expect((await json(`${served.url}/health`)).status).toBe(200);
      served.process.kill('SIGTERM');
      expect((await served.process).exitCode).toBe(0);
    }
  }, 120_000);
});

describe('with ample memory, serve runs again with young generations at full size', () => {
  test('the serving process starts with the heap options and no allocator settings; it indexes and answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'search-heap-'));
    const served = await serve(['--log-level', 'off', '--db-path', join(dir, 'db.ms')], { PATH: process.env.PATH ?? '', SEARCH_HEAP_TUNING: 'on', SEARCH_MALLOC_TUNING: 'off' });
    if (linux) {
      const [child] = childPids(served.process.pid!);
      expect(child).toBeDefined();
      const options = commandLine(child!).split('\0');
      for (const option of SERVING_HEAP_OPTIONS) expect(options).toContain(option);
      expect(environ(child!).GLIBC_TUNABLES).toBeUndefined();
    }
    // worker threads refuse V8 options in their own arguments: they start, index and search
    const added = await json(`${served.url}/indexes/docs/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[{"id":1,"title":"young generation"}]' });
    expect((await waitTask(served.url, added.body.taskUid)).status).toBe('succeeded');
    const found = await json(`${served.url}/indexes/docs/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":"young"}' });
    expect(found.body.hits).toEqual([{ id: 1, title: 'young generation' }]);
    served.process.kill('SIGTERM');
    expect((await served.process).exitCode).toBe(0);
  }, 120_000);

  test('wanted from 4 GiB of memory, unless the deployment sized the young generation or turned it off', () => {
    expect(wantedHeapOptions([], {}, 8 * GiB)).toEqual(SERVING_HEAP_OPTIONS);
    expect(wantedHeapOptions([], {}, 2 * GiB)).toEqual([]);
    expect(wantedHeapOptions([], { SEARCH_HEAP_TUNING: 'on' }, 2 * GiB)).toEqual(SERVING_HEAP_OPTIONS);
    expect(wantedHeapOptions([], { SEARCH_HEAP_TUNING: 'off' }, 8 * GiB)).toEqual([]);
    expect(wantedHeapOptions(['--max-semi-space-size=64'], {}, 8 * GiB)).toEqual([]);
    expect(wantedHeapOptions([], { NODE_OPTIONS: '--enable-source-maps --max_semi_space_size=32' }, 8 * GiB)).toEqual([]);
    // once run again, the child has them: it does not run again
    expect(wantedHeapOptions(SERVING_HEAP_OPTIONS, {}, 8 * GiB)).toEqual([]);
  });
});
