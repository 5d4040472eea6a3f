/**
 * The resume point of one collection's migration. It is written (atomically: temp file + rename)
 * only after the target confirmed the documents up to `nextOffset` are indexed, so resuming from
 * it re-sends at most the last unconfirmed batch; documents are replaced by id, so a re-sent
 * document is not duplicated, and nothing before `nextOffset` is missing.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MigrationError } from './errors.js';
import type { MappingReportJson } from './qdrant/report.js';

export const CHECKPOINT_VERSION = 1;

export interface Checkpoint {
  version: number;
  qdrantUrl: string;
  collection: string;
  /** The index being written (the temporary one with --swap). */
  writeIndex: string;
  finalIndex: string;
  /** Hash of the mapping plan: resuming under a different plan would mix two mappings. */
  planHash: string;
  settingsApplied: boolean;
  /** Qdrant `next_page_offset` to continue from, as a string; null = from the start (or done). */
  nextOffset: string | null;
  done: boolean;
  counts: { points: number; pages: number; batches: number };
  report: MappingReportJson;
  norms: Record<string, { total: number; notUnit: number }>;
  startedAt: string;
  updatedAt: string;
}

export function checkpointPath(dir: string, collection: string, index: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '_');
  return join(dir, `qdrant-${safe(collection)}--${safe(index)}.json`);
}

export function loadCheckpoint(path: string): Checkpoint | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  let cp: Checkpoint;
  try {
    cp = JSON.parse(text) as Checkpoint;
  } catch (e) {
    throw new MigrationError('config', `checkpoint ${path} is not valid JSON (${(e as Error).message}); delete it to start over`);
  }
  if (cp.version !== CHECKPOINT_VERSION) throw new MigrationError('config', `checkpoint ${path} has version ${cp.version}, expected ${CHECKPOINT_VERSION}`);
  return cp;
}

export function saveCheckpoint(path: string, cp: Checkpoint): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ ...cp, updatedAt: new Date().toISOString() }, null, 2));
  renameSync(tmp, path);
}

export function removeCheckpoint(path: string): void {
  rmSync(path, { force: true });
}
