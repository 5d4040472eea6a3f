/** The write-side child processes (src/engine/tasks/write-host.ts) a process has started, from /proc. */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of the children of `pid` (default: this process) that run a write side. */
export function writeProcessPids(pid: number | 'self' = 'self'): number[] {
  const found: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of children.split(' ').filter(Boolean).map(Number)) {
      try {
        if (readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('--search-write-process')) found.push(child);
      } catch {
        // ended meanwhile
      }
    }
  }
  return found;
}
