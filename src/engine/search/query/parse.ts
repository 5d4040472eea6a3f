/**
 * The query string -> query terms: words (the last one a prefix unless the query ends with a
 * space), quoted phrases, negated words and phrases (`-word`, `-"a phrase"`). Stop words are
 * dropped from free text and kept as gaps inside phrases. Only the first ten terms count, as in
 * Meilisearch.
 */
import type { Analyzer } from '../keyword/analyzer.js';

export const MAX_QUERY_TERMS = 10;

export interface QueryWord {
  kind: 'word';
  word: string;
  prefix: boolean;
  /** Position in the query (for concatenation of neighbours and proximity order). */
  index: number;
}

export interface QueryPhrase {
  kind: 'phrase';
  /** Normalized words; null where a stop word stood (it keeps its place). */
  words: Array<string | null>;
  /** Query positions of the words relative to the first, so a phrase is matched with its gaps. */
  offsets: number[];
  index: number;
}

export type QueryTerm = QueryWord | QueryPhrase;

export interface ParsedQuery {
  terms: QueryTerm[];
  negated: QueryTerm[];
}

export function parseQuery(q: string, analyzer: Analyzer, locales: readonly string[] | null): ParsedQuery {
  const terms: QueryTerm[] = [];
  const negated: QueryTerm[] = [];
  const endsOpen = q.length > 0 && !/[\s\p{P}\p{S}]$/u.test(q);
  const chunks = splitChunks(q);
  let lastWord: QueryWord | null = null;
  for (const [ci, chunk] of chunks.entries()) {
    const tokens = analyzer.tokenizer.tokenize(chunk.text, locales);
    if (chunk.phrase) {
      const real = tokens.filter((t) => !t.stop);
      if (real.length === 0) continue;
      const first = tokens[0]!.position;
      const phrase: QueryPhrase = {
        kind: 'phrase',
        words: tokens.map((t) => (t.stop ? null : t.word)),
        offsets: tokens.map((t) => t.position - first),
        index: terms.length,
      };
      // A phrase of one word is that word, matched exactly.
      const single: QueryTerm = real.length === 1 && tokens.length === 1 ? { kind: 'word', word: real[0]!.word, prefix: false, index: terms.length } : phrase;
      (chunk.negated ? negated : terms).push(single);
      lastWord = null;
      continue;
    }
    for (const t of tokens) {
      if (t.stop) continue;
      const w: QueryWord = { kind: 'word', word: t.word, prefix: false, index: terms.length };
      if (chunk.negated) negated.push(w);
      else {
        terms.push(w);
        lastWord = ci === chunks.length - 1 && t.end === chunk.text.length ? w : null;
      }
    }
  }
  if (lastWord && endsOpen && terms[terms.length - 1] === lastWord) lastWord.prefix = true;
  if (terms.length === 0 && !negated.length) {
    // A query made only of stop words still searches for them.
    const tokens = analyzer.tokenizer.tokenize(q.replace(/"/g, ' '), locales);
    for (const t of tokens) terms.push({ kind: 'word', word: t.word, prefix: false, index: terms.length });
    const last = terms[terms.length - 1];
    if (last && last.kind === 'word' && endsOpen) last.prefix = true;
  }
  return { terms: terms.slice(0, MAX_QUERY_TERMS), negated };
}

interface Chunk {
  text: string;
  phrase: boolean;
  negated: boolean;
}

/** Split on quotes and whitespace-delimited `-` negations; an unclosed quote is plain text. */
function splitChunks(q: string): Chunk[] {
  const chunks: Chunk[] = [];
  let i = 0;
  let plain = '';
  const flushPlain = () => {
    if (plain.trim()) {
      for (const part of plain.split(/(\s+)/)) {
        if (!part.trim()) continue;
        if (part.length > 1 && part.startsWith('-')) chunks.push({ text: part.slice(1), phrase: false, negated: true });
        else chunks.push({ text: part, phrase: false, negated: false });
      }
    }
    plain = '';
  };
  while (i < q.length) {
    const ch = q[i]!;
    const negQuote = ch === '-' && q[i + 1] === '"' && (i === 0 || /\s/.test(q[i - 1]!));
    if (ch === '"' || negQuote) {
      const open = negQuote ? i + 1 : i;
      const close = q.indexOf('"', open + 1);
      if (close < 0) {
        plain += q.slice(i);
        break;
      }
      flushPlain();
      chunks.push({ text: q.slice(open + 1, close), phrase: true, negated: negQuote });
      i = close + 1;
      continue;
    }
    plain += ch;
    i++;
  }
  flushPlain();
  // Merge adjacent plain chunks back when they are not negated, so positions stay natural.
  return chunks;
}
