import { expect, test } from 'vitest';
import { childExecArgv } from './worker-script.js';

test("a child process keeps node's options but not the parent's entry (eval code, print, check, test or watch mode)", () => {
  expect(childExecArgv(['--input-type=module', '-e', 'await run()', '--max-old-space-size=256'])).toEqual(['--max-old-space-size=256']);
  expect(childExecArgv(['--eval=1', '-p', '2', '--enable-source-maps', '--conditions', 'development'])).toEqual(['--enable-source-maps', '--conditions', 'development']);
  expect(childExecArgv(['--watch', '--watch-path', 'src', '--test', '--test-reporter=spec', '--import', 'tsx'])).toEqual(['--import', 'tsx']);
  expect(childExecArgv([])).toEqual([]);
});
