/** The write-side child processes (src/engine/tasks/write-host.ts) a process has started, from /proc. */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of the children of `pid`'s threads ('self': this process). */
export function childPids(pid: number | 'self'): number[] {
  const found: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found; // ended meanwhile
  }
  for (const task of tasks) {
    try {
      found.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/** A process's command line, arguments separated by NUL ('' once it has exited). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return ''; // ended meanwhile
  }
}

/**
 * Pids of the descendants of `pid` (default: this process) that run a write side. Descendants, not
 * only children: `search serve` may run itself again as a child (src/cli/process-settings.ts),
 * whose write process is then the command's grandchild.
 */
export function writeProcessPids(pid: number | 'self' = 'self'): number[] {
  const found: number[] = [];
  const pending = childPids(pid);
  while (pending.length > 0) {
    const child = pending.shift()!;
    if (commandLine(child).includes('--search-write-process')) found.push(child);
    else pending.push(...childPids(child));
  }
  return found;
}

/** The process that serves for a `search serve` command `pid`: the command itself, or the child it ran itself again as. */
export function servingPid(pid: number): number {
  return childPids(pid).find((child) => commandLine(child).includes('\0serve\0')) ?? pid;
}
