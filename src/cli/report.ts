/**
 * The one JSON report every command prints with `--json`, and the exit codes, so that a script
 * reads every command the same way:
 *
 *   {"status": "succeeded" | "failed", "taskUid": <number | null>, "error": {"code", "message"} | null, ...details}
 *
 * `taskUid` is the task the command enqueued or followed (null when there is none); command
 * specific keys come beside these three and never replace them.
 *
 * Exit codes: 0 done (including "nothing to do"); 1 the operation ran and failed (a task failed,
 * an upgrade was rolled back); 2 the command could not start (bad flags, no database at the path,
 * the database in use by another process).
 */
import { SearchError } from '../engine/errors.js';

export type ReportStatus = 'succeeded' | 'failed';

export interface ReportError {
  code: string;
  message: string;
}

export interface Report {
  status: ReportStatus;
  taskUid: number | null;
  error: ReportError | null;
  [detail: string]: unknown;
}

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A failure before anything ran: the command exits 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly code = 'invalid_command_usage',
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Errors that mean the command could not start, whatever raised them. */
const CANNOT_START = new Set(['database_in_use', 'database_not_found', 'invalid_command_usage', 'invalid_flags']);

export function errorOf(error: unknown): ReportError {
  if (error instanceof UsageError) return { code: error.code, message: error.message };
  if (error instanceof SearchError) return { code: error.code, message: error.message };
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return {
    code: typeof code === 'string' && /^[a-z_]+$/.test(code) ? code : 'internal',
    message: typeof message === 'string' ? message : String(error),
  };
}

export function exitCodeOf(error: unknown): number {
  return CANNOT_START.has(errorOf(error).code) ? EXIT.usage : EXIT.failed;
}

export function succeeded(taskUid: number | null, details: Record<string, unknown> = {}): Report {
  return { status: 'succeeded', taskUid, error: null, ...details };
}

export function failed(error: unknown, taskUid: number | null = null, details: Record<string, unknown> = {}): Report {
  return { status: 'failed', taskUid, error: errorOf(error), ...details };
}
