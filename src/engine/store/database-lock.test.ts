import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { processRuns } from './database-lock.js';

const stateOf = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
};

// a zombie holds no lock: a lock file naming one names a holder that has ended (an orphaned
// serving child where nothing reaps it), not one to stop first
test.skipIf(process.platform !== 'linux')('a process that runs counts as running; a zombie does not; a gone pid does not', async () => {
  // sh starts `true` in the background, then becomes `sleep`, which never reaps it
  const parent = spawn('sh', ['-c', 'true & exec sleep 30'], { stdio: 'ignore' });
  try {
    let zombie: number | undefined;
    for (let i = 0; i < 100 && zombie === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [child] = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
      if (child !== undefined && stateOf(child) === 'Z') zombie = child;
    }
    expect(zombie).toBeDefined();
    expect(processRuns(parent.pid!)).toBe(true);
    expect(processRuns(zombie!)).toBe(false);
  } finally {
    parent.kill('SIGKILL');
  }
  await new Promise((resolve) => parent.once('exit', resolve));
  expect(processRuns(parent.pid!)).toBe(false);
});
