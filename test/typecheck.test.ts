import { createRequire } from 'node:module';
import { execa } from 'execa';
import { expect, test } from 'vitest';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

test('the whole project type-checks under strict TypeScript', async () => {
  // Run the compiler directly (not through npx) so that npm's own warnings do not mix in.
  const result = await execa(process.execPath, [tsc, '-p', 'tsconfig.json', '--noEmit'], { reject: false });
  expect(result.stdout + result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
}, 300_000);

test('the preview page (web/preview, browser code bundled by esbuild) type-checks too', async () => {
  const result = await execa(process.execPath, [tsc, '-p', 'web/preview/tsconfig.json'], { reject: false });
  expect(result.stdout + result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
}, 300_000);
