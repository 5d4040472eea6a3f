/**
 * The three formats of the reference's logs: `human` and `json` (tracing's fmt layer, with span
 * closes as events) and `profile` (the entries of its `tracing-trace` crate, one JSON object after
 * the other, which its `trace-to-firefox` tool turns into a Firefox Profiler file).
 */
import type { LogEvent } from './event.js';
import { isoMicros } from './event.js';

export type LogMode = 'human' | 'json' | 'profile';
export const LOG_MODES: readonly LogMode[] = ['human', 'json', 'profile'];

/** Turns events into the bytes a sink writes; stateful for `profile` (threads and callsites are announced once). */
export type LogFormatter = (event: LogEvent) => string;

function fieldText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function busy(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : ms >= 1 ? `${ms.toFixed(2)}ms` : `${(ms * 1000).toFixed(0)}µs`;
}

/** `2026-…Z  INFO HTTP request{method=GET …}: search::http: close time.busy=1.20ms` */
export function humanLine(event: LogEvent): string {
  const head = `${isoMicros(event.time)} ${event.level.toUpperCase().padStart(5)} `;
  const fields = Object.entries(event.fields ?? {}).map(([k, v]) => `${k}=${fieldText(v)}`);
  if (event.span) return `${head}${event.span.name}{${fields.join(' ')}}: ${event.target}: ${event.message} time.busy=${busy(event.span.durationMs)}\n`;
  return `${head}${event.target}: ${[event.message, ...fields].join(' ')}\n`;
}

/** tracing's JSON layout: `{"timestamp","level","fields":{"message",…},"target","span"}` */
export function jsonLine(event: LogEvent): string {
  const base = { timestamp: isoMicros(event.time), level: event.level.toUpperCase() };
  if (event.span) {
    return `${JSON.stringify({
      ...base,
      fields: { message: event.message, 'time.busy': busy(event.span.durationMs) },
      target: event.target,
      span: { ...event.fields, name: event.span.name },
      spans: [],
    })}\n`;
  }
  return `${JSON.stringify({ ...base, fields: { message: event.message, ...event.fields }, target: event.target, threadName: event.thread })}\n`;
}

/** A `std::time::Duration` as serde writes it. */
function duration(ms: number): { secs: number; nanos: number } {
  const clamped = Math.max(0, ms);
  const secs = Math.floor(clamped / 1000);
  return { secs, nanos: Math.round((clamped - secs * 1000) * 1e6) };
}

/**
 * The `profile` mode: tracing-trace entries (`NewThread`, `NewCallsite`, `NewSpan`, `SpanEnter`,
 * `SpanExit`, `SpanClose`, `Event`), times counted from the stream's start. Our spans are known
 * when they close, so a span's four entries are written together, with its recorded start and
 * end times. `memory` (with `profileMemory`) is the process's resident set size when the entry
 * is written, so only on exits and events: an enter written late would carry a wrong reading.
 */
export function profileFormatter(startMs: number, profileMemory: boolean): LogFormatter {
  const threads = new Map<string, number>();
  const callsites = new Map<string, number>();
  let nextSpan = 1;
  const memory = () => (profileMemory ? { resident: process.memoryUsage.rss() } : null);
  const at = (ms: number) => duration(ms - startMs);
  return (event) => {
    const out: unknown[] = [];
    let threadId = threads.get(event.thread);
    if (threadId === undefined) {
      threadId = threads.size;
      threads.set(event.thread, threadId);
      out.push({ NewThread: { thread_id: threadId, name: event.thread } });
    }
    const name = event.span ? event.span.name : `event ${event.target}`;
    const key = `${event.target}\u0000${name}`;
    let callId = callsites.get(key);
    if (callId === undefined) {
      callId = callsites.size;
      callsites.set(key, callId);
      out.push({ NewCallsite: { call_id: callId, name, module_path: event.target, file: null, line: null, target: event.target } });
    }
    if (event.span) {
      const id = nextSpan++;
      const end = event.span.start + event.span.durationMs;
      out.push(
        { NewSpan: { id, call_id: callId, parent_id: null, thread_id: threadId } },
        { SpanEnter: { id, time: at(event.span.start), memory: null } },
        { SpanExit: { id, time: at(end), memory: memory() } },
        { SpanClose: { id, time: at(end) } },
      );
    } else {
      out.push({ Event: { call_id: callId, thread_id: threadId, parent_id: null, time: at(event.time), memory: memory() } });
    }
    return out.map((entry) => JSON.stringify(entry)).join('');
  };
}

export function formatter(mode: LogMode, startMs: number, profileMemory = false): LogFormatter {
  return mode === 'human' ? humanLine : mode === 'json' ? jsonLine : profileFormatter(startMs, profileMemory);
}
