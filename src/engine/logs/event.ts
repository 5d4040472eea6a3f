/**
 * One log event, as every sink and thread sees it: plain data, so that a worker thread can post
 * it to the serving thread as it is.
 */
import type { Level } from './targets.js';

/** A span that closed with this event (an HTTP request, a batch): what `time.busy` is made of. */
export interface ClosedSpan {
  name: string;
  /** Unique within the process run. */
  id: number;
  /** When it began, epoch milliseconds. */
  start: number;
  durationMs: number;
}

export interface LogEvent {
  /** Epoch milliseconds, with a fraction. */
  time: number;
  level: Level;
  target: string;
  message: string;
  fields?: Record<string, unknown>;
  span?: ClosedSpan;
  /** The thread that emitted it: `main` (serving) or `write`. */
  thread: string;
}

/** `2026-11-25T15:21:38.123456Z`: microseconds, as the reference prints them. */
export function isoMicros(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1000);
  return `${new Date(whole).toISOString().slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}

/** Current time, epoch milliseconds with sub-millisecond precision. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
