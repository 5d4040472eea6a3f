/**
 * The temporary files of a dump or snapshot being written: a work folder and a `.partial`
 * archive beside the final file. Their names carry the writer's pid, so that the next run can
 * tell the leftovers of a killed run (pid no longer alive) from the files of a run going on in
 * another process that shares the directory, and remove only the former.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const WORK = /^\.(?:dump|snapshot)-work-(\d+)-/;
const PARTIAL = /\.(\d+)\.partial$/;

/** Prefix of a work folder (for mkdtemp) of this process. */
export function workPrefix(dir: string, kind: 'dump' | 'snapshot'): string {
  return join(dir, `.${kind}-work-${process.pid}-`);
}

/** The archive being written, renamed to `file` once complete. */
export function partialPath(file: string): string {
  return `${file}.${process.pid}.partial`;
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Remove the work folders and partial archives in `dir` left by processes that are gone. */
export function removeStaleWork(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number((WORK.exec(name) ?? PARTIAL.exec(name))?.[1]);
    if (!pid || alive(pid)) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
