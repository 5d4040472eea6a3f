/**
 * Timestamps on the wire, in RFC 3339 UTC as the reference writes them. Two rules:
 *
 * - a timestamp we take the time of (a task enqueued, started, finished) has microseconds, as
 *   the reference's task and batch dates have sub-millisecond digits (`2024-07-09T16:58:32.836283Z`);
 *   a JS `Date` only knows milliseconds, so the microseconds come from the high-resolution clock;
 * - a timestamp a client gave (a key's `expiresAt`) reads back with the fractional digits it was
 *   given (`…12.000032Z` stays so), only moved to UTC; a `Date` would round it to the millisecond.
 *   As the reference's RFC 3339 writer does, trailing zeros of the fraction are dropped, and a
 *   zero fraction with them (`…00.000Z`, what a JS `Date` sends, reads back `…00Z`).
 */

/** Milliseconds between the high-resolution clock's origin and the epoch, re-anchored when the wall clock moves. */
let anchor = Date.now() - performance.now();

function nowMicros(): number {
  const wall = Date.now();
  let precise = anchor + performance.now();
  // The wall clock was set (NTP, manual change): follow it rather than the monotonic clock.
  if (Math.abs(precise - wall) > 2) {
    anchor = wall - performance.now();
    precise = anchor + performance.now();
  }
  return Math.floor(precise * 1000);
}

function seconds(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().slice(0, 19);
}

/** The current time with microseconds: `2026-11-25T06:49:30.015123Z`. */
export function preciseNow(): string {
  return formatMicros(nowMicros());
}

/**
 * A `Date` that knows its microseconds: code that does arithmetic on dates (durations, filters)
 * keeps working with milliseconds, while `toISOString()` writes all six digits.
 */
export class PreciseDate extends Date {
  constructor(readonly micros: number = nowMicros()) {
    super(Math.floor(micros / 1000));
  }
  override toISOString(): string {
    return formatMicros(this.micros);
  }
  override toJSON(): string {
    return this.toISOString();
  }
}

/** Microseconds since the epoch -> RFC 3339 UTC with six fractional digits. */
export function formatMicros(micros: number): string {
  const secs = Math.floor(micros / 1e6);
  const fraction = String(micros - secs * 1e6).padStart(6, '0');
  return `${seconds(secs)}.${fraction}Z`;
}

function sameDay(day: string): boolean {
  const date = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})?$/;

/**
 * A client's date-time (RFC 3339, or without offset meaning UTC, or a bare `YYYY-MM-DD`) in UTC
 * with its fractional digits as given (nine at most, the reference's nanoseconds). Undefined
 * when it is not a valid date.
 */
export function normalizeTimestamp(text: string): string | undefined {
  const bare = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const m = bare ? [text, text, '00:00:00', undefined, 'Z'] : RFC3339.exec(text);
  if (!m) return undefined;
  const [, day, time, fraction, offset] = m as [string, string, string, string | undefined, string | undefined];
  const ms = Date.parse(`${day}T${time}${offset === undefined || offset === 'z' ? 'Z' : offset}`);
  // Date.parse rolls 2030-02-30 over to March: such a day is not a date.
  if (Number.isNaN(ms) || !sameDay(day)) return undefined;
  const significant = (fraction ?? '').slice(0, 9).replace(/0+$/, '');
  const digits = significant === '' ? '' : `.${significant}`;
  return `${seconds(ms / 1000)}${digits}Z`;
}
