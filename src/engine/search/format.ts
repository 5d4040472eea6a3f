/**
 * Hit formatting: `_formatted` (highlight with pre/post tags, crop around the best matches with a
 * crop marker) and `_matchesPosition`, from the query's matched words.
 */
import type { Document } from '../types.js';
import type { Analyzer } from './keyword/analyzer.js';
import { coversPath, localesFor } from './keyword/fields.js';
import type { ResolvedTerm } from './query/resolve.js';
import type { Token } from '../text/tokenize.js';
import { normalizeWord } from '../text/normalize.js';

export interface FormatOptions {
  highlight: string[] | null;
  crop: Array<{ field: string; length: number }> | null;
  cropLength: number;
  cropMarker: string;
  preTag: string;
  postTag: string;
  showMatchesPosition: boolean;
}

export interface MatchPosition {
  start: number;
  length: number;
  indices?: number[];
}

/** Length (in the original text) of a token's match, or 0 when it does not match. */
export type WordMatcher = (token: Token, original: string) => number;

export function matcherFor(terms: readonly ResolvedTerm[]): WordMatcher {
  return (token, original) => {
    let prefixLen = 0;
    for (const t of terms) {
      if (t.words.has(token.word)) return original.length;
      if (t.prefix !== null && token.word.startsWith(t.prefix)) prefixLen = Math.max(prefixLen, originalPrefixLength(original, t.prefix));
    }
    return prefixLen;
  };
}

/** How many characters of `original` normalize to `prefix` (accents may change lengths). */
function originalPrefixLength(original: string, prefix: string): number {
  if (normalizeWord(original.slice(0, prefix.length)) === prefix) return prefix.length;
  for (let i = 1; i <= original.length; i++) if (normalizeWord(original.slice(0, i)).length >= prefix.length) return i;
  return original.length;
}

interface FieldMatches {
  tokens: Token[];
  lengths: number[];
}

function analyze(text: string, path: string, analyzer: Analyzer, match: WordMatcher, locales: readonly string[] | null): FieldMatches {
  const tokens = analyzer.tokenizer.tokenize(text, locales ?? localesFor(path, analyzer.settings.localizedAttributes));
  const lengths = tokens.map((t) => (t.stop ? 0 : match(t, text.slice(t.start, t.end))));
  return { tokens, lengths };
}

function highlight(text: string, fm: FieldMatches, from: number, to: number, o: FormatOptions, enabled: boolean): string {
  if (!enabled) return text.slice(from, to);
  let out = '';
  let cursor = from;
  fm.tokens.forEach((t, i) => {
    const len = fm.lengths[i]!;
    if (len === 0 || t.start < from || t.end > to) return;
    out += text.slice(cursor, t.start) + o.preTag + text.slice(t.start, t.start + len) + o.postTag;
    cursor = t.start + len;
  });
  return out + text.slice(cursor, to);
}

/**
 * The `length` words to keep, as the reference crops: first the matches to show (the most
 * distinct query words, then the closest together, then the earliest; a single word shows its
 * first occurrence), then words added around them one at a time, on the side that does not cross
 * a sentence end when the other does (so the crop keeps to the sentence the matches are in),
 * evenly otherwise. Without a match, the field's first words.
 */
function cropWindow(text: string, fm: FieldMatches, length: number): [number, number] {
  const n = fm.tokens.length;
  if (n <= length) return [0, n];
  const matched = bestMatches(fm, length);
  if (!matched) return [0, length];
  let [start, end] = matched;
  let left = 0;
  let right = 0;
  while (end - start < length) {
    const canLeft = start > 0;
    const canRight = end < n;
    let goLeft: boolean;
    if (!canLeft || !canRight) goLeft = canLeft;
    else {
      const costLeft = separatorCost(text, fm, start - 1, start);
      const costRight = separatorCost(text, fm, end - 1, end);
      goLeft = costLeft !== costRight ? costLeft < costRight : left <= right;
    }
    if (goLeft) {
      start--;
      left++;
    } else {
      end++;
      right++;
    }
  }
  return [start, end];
}

/** The span [first, last + 1) of the matches to show within `length` words, or null without a match. */
function bestMatches(fm: FieldMatches, length: number): [number, number] | null {
  const positions: number[] = [];
  fm.lengths.forEach((len, i) => {
    if (len > 0) positions.push(i);
  });
  if (positions.length === 0) return null;
  let best: { distinct: number; span: number; first: number; last: number } | null = null;
  for (let a = 0; a < positions.length; a++) {
    const words = new Set<string>();
    for (let b = a; b < positions.length && positions[b]! - positions[a]! < length; b++) {
      words.add(fm.tokens[positions[b]!]!.word);
      const span = positions[b]! - positions[a]!;
      if (!best || words.size > best.distinct || (words.size === best.distinct && span < best.span)) {
        best = { distinct: words.size, span, first: positions[a]!, last: positions[b]! };
      }
    }
  }
  return [best!.first, best!.last + 1];
}

/** 1 to cross the text between two words, 2 when it ends a sentence. */
function separatorCost(text: string, fm: FieldMatches, before: number, after: number): number {
  const between = text.slice(fm.tokens[before]!.end, fm.tokens[after]!.start);
  return /[.!?;。！？\n]/.test(between) ? 2 : 1;
}

function formatString(text: string, path: string, analyzer: Analyzer, match: WordMatcher, o: FormatOptions, locales: readonly string[] | null): string {
  const doHighlight = wants(o.highlight, path);
  const crop = o.crop?.find((c) => coversPath(c.field, path) || c.field === '*');
  if (!doHighlight && !crop) return text;
  const fm = analyze(text, path, analyzer, match, locales);
  if (!crop) return highlight(text, fm, 0, text.length, o, doHighlight);
  const length = crop.length;
  if (length === 0) return '';
  const [s, e] = cropWindow(text, fm, length);
  if (fm.tokens.length === 0) return text;
  if (s === 0 && e === fm.tokens.length) return highlight(text, fm, 0, text.length, o, doHighlight);
  const from = s === 0 ? 0 : fm.tokens[s]!.start;
  const to = e === fm.tokens.length ? text.length : fm.tokens[e - 1]!.end;
  return (s > 0 ? o.cropMarker : '') + highlight(text, fm, from, to, o, doHighlight) + (e < fm.tokens.length ? o.cropMarker : '');
}

function wants(list: string[] | null, path: string): boolean {
  return !!list && list.some((p) => p === '*' || coversPath(p, path));
}

/** `_formatted` of one document: strings highlighted/cropped where asked, numbers as text, other values as they are. */
export function formatDocument(doc: Document, analyzer: Analyzer, match: WordMatcher, o: FormatOptions, locales: readonly string[] | null): Document {
  const walk = (value: unknown, path: string): unknown => {
    if (value === null || value === undefined) return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, path));
    if (typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = walk(v, path ? `${path}.${k}` : k);
      return out;
    }
    if (typeof value === 'string') return formatString(value, path, analyzer, match, o, locales);
    // The reference writes every number of `_formatted` as its text (highlighted or cropped where
    // asked: `"id": "852"`); booleans and nulls keep their JSON type.
    if (typeof value === 'number') return formatString(String(value), path, analyzer, match, o, locales);
    return value;
  };
  const out: Document = {};
  for (const [k, v] of Object.entries(doc)) out[k] = k === '_vectors' || k === '_geo' ? v : walk(v, k);
  return out;
}

/** `_matchesPosition`: for each field with matches, their start and length in the original value. */
export function matchesPosition(doc: Document, analyzer: Analyzer, match: WordMatcher, searchable: (path: string) => boolean, locales: readonly string[] | null): Record<string, MatchPosition[]> {
  const out: Record<string, MatchPosition[]> = {};
  const visit = (value: unknown, path: string, indices: number[]) => {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) return value.forEach((v, i) => visit(v, path, [...indices, i]));
    if (typeof value === 'object') {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) visit(v, path ? `${path}.${k}` : k, indices);
      return;
    }
    if (!searchable(path)) return;
    const text = String(value);
    const fm = analyze(text, path, analyzer, match, locales);
    fm.tokens.forEach((t, i) => {
      const len = fm.lengths[i]!;
      if (len === 0) return;
      const entry: MatchPosition = { start: t.start, length: len };
      if (indices.length > 0) entry.indices = indices;
      (out[path] ??= []).push(entry);
    });
  };
  for (const [k, v] of Object.entries(doc)) if (k !== '_vectors' && k !== '_geo') visit(v, k, []);
  return out;
}
