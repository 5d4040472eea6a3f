import { execa } from 'execa';
import { expect, test } from 'vitest';

test('the whole project type-checks under strict TypeScript', async () => {
  const result = await execa('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit'], { reject: false });
  expect(result.stdout + result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
}, 180_000);
