/**
 * The process that serves for a `search serve` command (not a section itself: its name has no
 * `.bench.`). `search serve` may run itself again as a child with its process settings
 * (src/cli/process-settings.ts); a bench reading CPU, threads or memory from /proc reads that child.
 */
import { readFileSync } from 'node:fs';

/** The command `pid` itself, or the child it ran itself again as (Linux; `pid` elsewhere). */
export function servingPid(pid) {
  try {
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean)) {
      if (readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('\0serve\0')) return Number(child);
    }
  } catch {
    // not Linux, or ended
  }
  return pid;
}
