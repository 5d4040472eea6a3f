/** Log filters as the reference writes them (tracing's `Targets`), read for our targets. */
import { describe, expect, it } from 'vitest';
import { LogTargets, TargetsParseError } from '../../src/engine/logs/targets.js';

describe('LogTargets', () => {
  it('a bare level applies to every target', () => {
    const t = LogTargets.parse('warn');
    expect(t.accepts('search::tasks', 'warn')).toBe(true);
    expect(t.accepts('search::http', 'info')).toBe(false);
  });

  it('the longest matching target decides, and unmatched targets get nothing', () => {
    const t = LogTargets.parse('search=info,search::http=off,search::tasks=trace');
    expect(t.accepts('search::tasks', 'trace')).toBe(true);
    expect(t.accepts('search::http', 'error')).toBe(false);
    expect(t.accepts('search::engine', 'info')).toBe(true);
    expect(t.accepts('search::engine', 'debug')).toBe(false);
    expect(LogTargets.parse('search::tasks=info').accepts('search::http', 'error')).toBe(false);
  });

  it("a bare target takes all its levels; levels read case-insensitively or as 0-5", () => {
    expect(LogTargets.parse('search::ops').accepts('search::ops', 'trace')).toBe(true);
    expect(LogTargets.parse('search::ops=DEBUG').accepts('search::ops', 'debug')).toBe(true);
    expect(LogTargets.parse('search::ops=2').accepts('search::ops', 'info')).toBe(false);
    expect(LogTargets.parse('OFF').maxRank).toBe(0);
  });

  it("reads the reference's crate names as ours", () => {
    const t = LogTargets.parse('index_scheduler=info,milli=trace,actix_web=off,meilisearch=warn');
    expect(t.accepts('search::tasks', 'trace')).toBe(true);
    expect(t.accepts('search::http', 'error')).toBe(false);
    expect(t.accepts('search::engine', 'warn')).toBe(true);
    expect(t.accepts('search::engine', 'info')).toBe(false);
  });

  it("refuses what the reference's parser refuses, in its words", () => {
    expect(() => LogTargets.parse('a=b=c')).toThrow(new TargetsParseError("invalid filter directive: too many '=' in filter directive, expected 0 or 1"));
    expect(() => LogTargets.parse('search=loud')).toThrow(/^error parsing level filter: expected one of "off", "error", "warn", "info", "debug", "trace", or a number 0-5$/);
  });

  it('anyOf accepts what one of its filters accepts', () => {
    const t = LogTargets.anyOf([LogTargets.parse('search::http=info'), LogTargets.parse('search::tasks=debug')]);
    expect(t.accepts('search::http', 'info')).toBe(true);
    expect(t.accepts('search::tasks', 'debug')).toBe(true);
    expect(t.accepts('search::ops', 'error')).toBe(false);
  });
});
