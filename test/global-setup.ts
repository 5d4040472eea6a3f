import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

const run = promisify(execFile);

/** What the build's compiler run printed; test/typecheck.test.ts asserts on it rather than type-checking a second time. */
export interface CompilerReport {
  output: string;
  exitCode: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set when this run compiled dist/ (not with SEARCH_SKIP_BUILD=1). */
    compilerReport: CompilerReport | null;
  }
}

/**
 * Compile `dist/` (what the CLI binary runs, and the preview page it serves) before any test file starts, so that `npm test` is
 * right straight after a clone or an edit. Type errors do not stop the emit here; they fail the
 * dedicated typecheck test instead, with the compiler's message (handed to it, so that the project
 * is type-checked once per run, not twice).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const removeScratch = scratchTmpdir();
  if (process.env.SEARCH_SKIP_BUILD === '1') {
    project.provide('compilerReport', null);
    return removeScratch;
  }
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  // the search preview page (dist/preview), which `search serve` serves at `/`: independent of tsc, built meanwhile
  const preview = run(process.execPath, ['web/build.mjs'], { cwd: root });
  // Run the compiler directly (not through npx) so that npm's own warnings do not mix in.
  const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, maxBuffer: 64 << 20 }).then(
    ({ stdout, stderr }) => ({ output: stdout + stderr, exitCode: 0 }),
    (e: { stdout?: string; stderr?: string; code?: number }) => ({ output: `${e.stdout ?? ''}${e.stderr ?? ''}`, exitCode: typeof e.code === 'number' ? e.code : 1 }),
  );
  project.provide('compilerReport', compiled);
  await run('npx', ['oclif', 'manifest'], { cwd: root });
  await preview;
  return removeScratch;
}

/**
 * Point every test file and every process they start at one temporary directory of this run
 * (`TMPDIR`, read by `os.tmpdir()`), removed when the run ends: the databases, server data and
 * crash-test copies of the CLI tests stayed behind, 17 directories and about 80 MB per run.
 * Returns the removal.
 */
function scratchTmpdir(): () => void {
  const scratch = mkdtempSync(join(tmpdir(), 'search-tests-'));
  process.env.TMPDIR = scratch;
  return () => {
    try {
      rmSync(scratch, { recursive: true, force: true });
    } catch (error) {
      // a file system a test left mounted there: say so, the run's result stands
      process.stderr.write(`could not remove the tests' temporary directory ${scratch}: ${(error as Error).message}\n`);
    }
  };
}
