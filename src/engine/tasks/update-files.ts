/**
 * Update files (`tasks/update_files/`) belong to the enqueued or processing task that names them;
 * a finished task's file is removed with its outcome. A file no such task names is an orphan: the
 * payload of an upload whose task was never registered (the process stopped, or the task queue
 * could not be written on a full disk). Orphans are removed when the write side starts, before
 * any upload can be in flight, so that they never hold space across restarts.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskStore } from './store.js';

/** Remove the update files no pending task refers to; returns how many were removed. */
export function removeOrphanUpdateFiles(dir: string, store: TaskStore): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  const referenced = new Set<string>();
  for (const status of ['enqueued', 'processing'] as const) {
    for (const uid of store.uidsWithStatus(status)) {
      const payload = store.get(uid)?.payload;
      if (payload?.kind === 'documents') referenced.add(payload.updateFile);
    }
  }
  let removed = 0;
  for (const name of names) {
    if (referenced.has(name)) continue;
    rmSync(join(dir, name), { force: true, recursive: true });
    removed++;
  }
  return removed;
}
