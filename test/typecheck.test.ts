import { createRequire } from 'node:module';
import { execa } from 'execa';
import { expect, inject, test } from 'vitest';
import type { CompilerReport } from './global-setup.js';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

test('the whole project type-checks under strict TypeScript', async () => {
  // The global setup compiled the project with this same tsconfig (emitting adds declaration
  // checks, nothing less): its report is this check. Without a build (SEARCH_SKIP_BUILD=1), check here.
  // Run the compiler directly (not through npx) so that npm's own warnings do not mix in.
  let result: CompilerReport | null = inject('compilerReport');
  if (!result) {
    const own = await execa(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit'], { reject: false });
    result = { output: own.stdout + own.stderr, exitCode: own.exitCode ?? 1 };
  }
  expect(result.output).toBe('');
  expect(result.exitCode).toBe(0);
}, 300_000);

test('the preview page (web/preview, browser code bundled by esbuild) type-checks too', async () => {
  const result = await execa(process.execPath, [tsc, '-p', 'web/preview/tsconfig.json'], { reject: false });
  expect(result.stdout + result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
}, 300_000);
