/**
 * `showPerformanceDetails`: the time each stage of a search took, reported in the response's
 * `performanceDetails` object the way the reference does: one entry per stage, named by its
 * path in the pipeline with ` > ` between levels (`search > keyword ranking`), its duration as
 * text with two decimals and a unit (`295.29µs`, `3.56ms`). Stages that did not run are absent.
 *
 * A trace that is not enabled records nothing, so the instrumented code pays one branch when
 * nobody asked for details.
 */

export type PerformanceDetails = Record<string, string>;

/** `0.29529` ms -> `295.29µs`: the reference prints durations with two decimals in the largest unit below them. */
export function formatDuration(ms: number): string {
  const ns = ms * 1e6;
  if (ns < 1e3) return `${ns.toFixed(2)}ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(2)}µs`;
  if (ns < 1e9) return `${ms.toFixed(2)}ms`;
  return `${(ms / 1e3).toFixed(2)}s`;
}

export class PerformanceTrace {
  private spans = new Map<string, number>();

  /** `prefix` is this trace's place in an enclosing pipeline (`search`, `federating results > queries[1] > search`). */
  constructor(
    readonly enabled: boolean,
    private readonly prefix = 'search',
  ) {}

  /** Run one stage and record its time (added to the stage's earlier runs, if any). */
  stage<T>(name: string, run: () => T): T {
    if (!this.enabled) return run();
    const started = performance.now();
    try {
      return run();
    } finally {
      this.add(name, performance.now() - started);
    }
  }

  async stageAsync<T>(name: string, run: () => Promise<T>): Promise<T> {
    if (!this.enabled) return run();
    const started = performance.now();
    try {
      return await run();
    } finally {
      this.add(name, performance.now() - started);
    }
  }

  add(name: string, ms: number): void {
    if (!this.enabled) return;
    const key = name === '' ? this.prefix : `${this.prefix} > ${name}`;
    this.spans.set(key, (this.spans.get(key) ?? 0) + ms);
  }

  /** A trace for a sub-pipeline whose stages nest under `name`, recorded into this one. */
  child(name: string): PerformanceTrace {
    const child = new PerformanceTrace(this.enabled, `${this.prefix} > ${name}`);
    child.spans = this.spans;
    return child;
  }

  /** The stages in the order they were first recorded, the total (`''` stage) last when present. */
  details(): PerformanceDetails {
    const out: PerformanceDetails = {};
    for (const [key, ms] of this.spans) out[key] = formatDuration(ms);
    if (this.prefix in out) {
      const total = out[this.prefix]!;
      delete out[this.prefix];
      out[this.prefix] = total;
    }
    return out;
  }
}

/** Milliseconds since the epoch, to the microsecond, comparable between threads (each has its own `timeOrigin`). */
export function sharedClock(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Put the time a request waited for a search thread first in its `performanceDetails` (each
 * result's, for a multi-search), as the reference reports its `wait in queue` stage.
 */
export function addQueueWait(response: unknown, ms: number): void {
  const targets = [response, ...((response as { results?: unknown[] }).results ?? [])];
  for (const target of targets) {
    const holder = target as { performanceDetails?: PerformanceDetails };
    if (holder?.performanceDetails) holder.performanceDetails = { 'wait in queue': formatDuration(ms), ...holder.performanceDetails };
  }
}

/** A trace that records nothing, for callers that did not ask. */
export const NO_TRACE = new PerformanceTrace(false);
