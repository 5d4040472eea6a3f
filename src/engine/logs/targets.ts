/**
 * Log targets: which events a sink accepts, written the way the reference (tracing's `Targets`)
 * writes them: comma-separated directives, each `target=level`, a bare `level` (every target) or
 * a bare `target` (every level of it). An event's target matches a directive whose target is a
 * prefix of it (`search` matches `search::tasks`); the longest matching directive decides; an
 * event no directive matches is dropped.
 *
 * Our targets are named after our modules (`search::http`, `search::tasks`...). The reference's
 * crate names (`milli`, `index_scheduler`, `meilisearch`, `actix_web`...) are read as the module of
 * ours that does that job, so that filters written for the reference keep working.
 */
export type Level = 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Verbosity ranks: an event passes a directive when its rank is at most the directive's. */
export const LEVEL_RANK: Record<Level | 'off', number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };

/** The reference's crates, and the target of ours that does their job. */
const REFERENCE_TARGETS: Record<string, string> = {
  meilisearch: 'search',
  index_scheduler: 'search::tasks',
  milli: 'search::tasks',
  meilisearch_types: 'search::engine',
  dump: 'search::ops',
  actix_web: 'search::http',
  tracing_actix_web: 'search::http',
};

/** A filter string the reference's parser refuses; the message is its wording. */
export class TargetsParseError extends Error {}

interface Directive {
  target: string;
  rank: number;
}

const LEVEL_NAMES = ['off', 'error', 'warn', 'info', 'debug', 'trace'] as const;

function parseLevel(text: string): number | undefined {
  const lower = text.toLowerCase();
  const named = (LEVEL_NAMES as readonly string[]).indexOf(lower);
  if (named >= 0) return named;
  if (/^[0-5]$/.test(text)) return Number(text);
  return undefined;
}

function translate(target: string): string {
  const [head, ...rest] = target.split('::');
  const ours = REFERENCE_TARGETS[head!];
  return ours === undefined ? target : [ours, ...rest].join('::');
}

export class LogTargets {
  /** Highest rank any directive allows: events above it are dropped before anything else is looked at. */
  readonly maxRank: number;

  private constructor(
    /** The filter as written, to hand to other threads. */
    readonly spec: string,
    private readonly directives: readonly Directive[],
    private readonly rankOf?: (target: string) => number,
  ) {
    this.maxRank = directives.reduce((max, d) => Math.max(max, d.rank), 0);
  }

  static parse(spec: string): LogTargets {
    const directives: Directive[] = [];
    for (const raw of spec.split(',')) {
      const part = raw.trim();
      if (part === '') continue;
      if (part.includes('[') || part.includes('{')) throw new TargetsParseError('invalid filter directive: span and field filters are not supported');
      const pieces = part.split('=');
      if (pieces.length > 2) throw new TargetsParseError("invalid filter directive: too many '=' in filter directive, expected 0 or 1");
      if (pieces.length === 2) {
        const rank = parseLevel(pieces[1]!.trim());
        if (rank === undefined) throw levelError();
        directives.push({ target: translate(pieces[0]!.trim()), rank });
      } else {
        const rank = parseLevel(part);
        // a bare word is a level for every target, or else a target at every level
        directives.push(rank === undefined ? { target: translate(part), rank: LEVEL_RANK.trace } : { target: '', rank });
      }
    }
    // a later directive for the same target replaces an earlier one (as in tracing), which also
    // settles two reference crates read as the same target of ours; then most specific first
    const byTarget = new Map(directives.map((d) => [d.target, d]));
    return new LogTargets(spec, [...byTarget.values()].sort((a, b) => b.target.length - a.target.length));
  }

  /** What any of `list` accepts (a worker forwards for all of the serving thread's sinks). */
  static anyOf(list: readonly LogTargets[]): LogTargets {
    return new LogTargets(
      list.map((t) => t.spec).join(' | '),
      list.flatMap((t) => t.directives),
      (target) => Math.max(0, ...list.map((t) => t.rankFor(target))),
    );
  }

  /** Nothing at all. */
  static off(): LogTargets {
    return new LogTargets('off', []);
  }

  /** The highest rank accepted for events of `target` (0: none). */
  rankFor(target: string): number {
    if (this.rankOf) return this.rankOf(target);
    for (const d of this.directives) if (target.startsWith(d.target)) return d.rank;
    return 0;
  }

  accepts(target: string, level: Level): boolean {
    const rank = LEVEL_RANK[level];
    return rank <= this.maxRank && rank <= this.rankFor(target);
  }
}

function levelError(): TargetsParseError {
  return new TargetsParseError('error parsing level filter: expected one of "off", "error", "warn", "info", "debug", "trace", or a number 0-5');
}
