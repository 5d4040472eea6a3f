/**
 * The structured logger: one per thread, with named sinks, each with its own targets filter.
 *
 * - `stderr` (serving thread only): what the server writes on stderr, in the human format; its
 *   filter is set from `--log-level` at start and by `POST /logs/stderr` at run time.
 * - `stream`: the one `POST /logs/stream` client, when there is one.
 * - `forward` (write thread): posts events to the serving thread, which hands them to its sinks;
 *   its filter is the union of the serving thread's filters, kept up to date by the write thread.
 *
 * `enabled` is checked before anything is formatted or built: with no sink accepting a level, an
 * event costs one comparison with the highest accepted rank.
 */
import { isMainThread } from 'node:worker_threads';
import { humanLine, jsonLine } from './formats.js';
import { nowMs, type ClosedSpan, type LogEvent } from './event.js';
import { LEVEL_RANK, LogTargets, type Level } from './targets.js';

export interface LogSink {
  targets: LogTargets;
  write(event: LogEvent): void;
}

export type SinkName = 'stderr' | 'stream' | 'forward';

const sinks = new Map<SinkName, LogSink>();
/** The highest rank any sink accepts: the fast refusal. */
let ceiling = 0;
const filterListeners = new Set<() => void>();
const threadName = isMainThread ? 'main' : 'write';
let nextSpanId = 1;

function recompute(): void {
  ceiling = 0;
  for (const sink of sinks.values()) ceiling = Math.max(ceiling, sink.targets.maxRank);
}

export function setSink(name: SinkName, sink: LogSink | null): void {
  if (sink) sinks.set(name, sink);
  else sinks.delete(name);
  recompute();
  if (name !== 'forward') for (const listener of filterListeners) listener();
}

export function getSink(name: SinkName): LogSink | undefined {
  return sinks.get(name);
}

/** The filters of this thread's own sinks (not `forward`): what another thread must send here. */
export function localFilterSpecs(): string[] {
  return [...sinks.entries()].filter(([name]) => name !== 'forward').map(([, sink]) => sink.targets.spec);
}

/** Called whenever a sink other than `forward` changes; returns the unsubscription. */
export function onFiltersChange(listener: () => void): () => void {
  filterListeners.add(listener);
  return () => filterListeners.delete(listener);
}

export function logEnabled(target: string, level: Level): boolean {
  const rank = LEVEL_RANK[level];
  if (rank > ceiling) return false;
  for (const sink of sinks.values()) if (sink.targets.accepts(target, level)) return true;
  return false;
}

/** Hand an event (built here or posted by another thread) to every sink that accepts it. */
export function dispatch(event: LogEvent): void {
  if (LEVEL_RANK[event.level] > ceiling) return;
  for (const sink of sinks.values()) {
    if (!sink.targets.accepts(event.target, event.level)) continue;
    try {
      sink.write(event);
    } catch {
      // a sink that fails (a closed stderr) must not fail the work that logged
    }
  }
}

export function log(target: string, level: Level, message: string, fields?: Record<string, unknown>, span?: ClosedSpan): void {
  if (!logEnabled(target, level)) return;
  dispatch({ time: nowMs(), level, target, message, ...(fields ? { fields } : {}), ...(span ? { span } : {}), thread: threadName });
}

/** A span id unique in this thread (threads' spans are told apart by their thread in the profile). */
export function newSpanId(): number {
  return nextSpanId++;
}

let stderrFormat: (event: LogEvent) => string = humanLine;

/** `--experimental-logs-mode`: stderr lines in the human or the json format. */
export function setStderrFormat(mode: 'human' | 'json'): void {
  stderrFormat = mode === 'json' ? jsonLine : humanLine;
}

/** The stderr sink with `targets`. */
export function stderrSink(targets: LogTargets): LogSink {
  return { targets, write: (event) => process.stderr.write(stderrFormat(event)) };
}

/** Change what goes to stderr (serving thread). */
export function setStderrTargets(targets: LogTargets): void {
  setSink('stderr', stderrSink(targets));
}

/**
 * The filter `--log-level` gives stderr at start. HTTP request lines (info, like the reference's
 * request spans) stay off below `debug`, as they were before there was a logs route: a busy
 * server's stderr is not a request log unless asked for (`POST /logs/stderr`). 5xx answers
 * (`search::http` at error) are written at every level.
 */
export function startupStderrSpec(level: Level | 'off'): string {
  // a 5xx is a bug or a fault of the machine: even `--log-level off` reports it
  if (level === 'off') return 'search::http=error';
  return LEVEL_RANK[level] >= LEVEL_RANK.debug ? level : `${level},search::http=warn`;
}

// The serving thread writes info and above on stderr until told otherwise.
if (isMainThread) setStderrTargets(LogTargets.parse(startupStderrSpec('info')));
