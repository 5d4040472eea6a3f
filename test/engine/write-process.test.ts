/**
 * The write side's process (src/engine/tasks/write-host.ts) starts with glibc's allocator settings
 * for a memory limit when the program did not start with them, so that an `Engine` API program
 * gets them for its builds as `search serve` does; a deployment's own GLIBC_TUNABLES, or
 * SEARCH_MALLOC_TUNING=off, wins.
 */
import { readFileSync } from 'node:fs';
import { afterEach, expect, test } from 'vitest';
import { MALLOC_TUNABLES } from '../../src/engine/allocator-settings.js';
import { tempEngine } from './helpers.js';
import { writeProcessPids } from '../write-processes.js';

/** The environment of this process's write-side child. */
function writeProcessEnvironment(): Map<string, string> {
  const [pid] = writeProcessPids();
  if (pid === undefined) throw new Error('no write process');
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

const saved = { tuning: process.env.SEARCH_MALLOC_TUNING, tunables: process.env.GLIBC_TUNABLES };
afterEach(() => {
  for (const [name, value] of [['SEARCH_MALLOC_TUNING', saved.tuning], ['GLIBC_TUNABLES', saved.tunables]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function environmentWith(env: Record<string, string | undefined>): Promise<Map<string, string>> {
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  const { engine, cleanup } = await tempEngine({ writeHost: 'process' });
  try {
    // the write process indexes as the thread does
    const task = await engine.waitForTask((await engine.addDocuments('a', [{ id: 1, title: 'one' }], { primaryKey: 'id' })).taskUid);
    expect(task.status).toBe('succeeded');
    return writeProcessEnvironment();
  } finally {
    await cleanup();
  }
}

test.runIf(process.platform === 'linux')('the write process gets the allocator settings a memory limit calls for, unless the deployment chose its own', async () => {
  // SEARCH_MALLOC_TUNING=on: as under a limit (this machine has none)
  // glibc rewrites the block /proc shows while it reads the tunables (2.36 leaves the first one)
  const first = MALLOC_TUNABLES.split(':')[0]!;
  expect((await environmentWith({ SEARCH_MALLOC_TUNING: 'on', GLIBC_TUNABLES: undefined })).get('GLIBC_TUNABLES')?.startsWith(first)).toBe(true);
  expect((await environmentWith({ SEARCH_MALLOC_TUNING: 'on', GLIBC_TUNABLES: 'glibc.malloc.arena_max=1' })).get('GLIBC_TUNABLES')).toBe('glibc.malloc.arena_max=1');
  expect((await environmentWith({ SEARCH_MALLOC_TUNING: 'off', GLIBC_TUNABLES: undefined })).has('GLIBC_TUNABLES')).toBe(false);
}, 120_000);
