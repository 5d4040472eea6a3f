/**
 * Text -> positioned, normalized words.
 *
 * Scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) are segmented by
 * `Intl.Segmenter` (word granularity, per locale), which carries ICU's dictionaries. Other text takes
 * a faster scanner that yields the same words (runs of letters, marks and digits). Punctuation and
 * symbols inside a word split it ("don't" -> don, t; "3.14" -> 3, 14), as users expect from
 * Meilisearch, unless declared in `nonSeparatorTokens`; `separatorTokens` split further and
 * `dictionary` entries stay one word.
 *
 * Positions follow Meilisearch: the first word of a value is at 0, the next word one further, or
 * eight further when a hard separator (. ; ! ? newline) stands between them.
 */
import { normalizeWord } from './normalize.js';
import { toBcp47 } from './locales.js';

export interface Token {
  /** Normalized word, what is indexed and matched. */
  word: string;
  /** Offsets in the original text (UTF-16 code units), for highlighting and cropping. */
  start: number;
  end: number;
  position: number;
  stop: boolean;
}

export interface TokenizerConfig {
  locales?: readonly string[] | null;
  separatorTokens?: readonly string[];
  nonSeparatorTokens?: readonly string[];
  dictionary?: readonly string[];
  stopWords?: ReadonlySet<string>;
}

/** Gap added between words separated by a hard separator, and between values of an array. */
export const HARD_GAP = 8;
/** Words longer than this are not indexed (Meilisearch drops over-long words too). */
export const MAX_WORD_LENGTH = 200;

const HARD_CHARS = new Set(['.', ';', '!', '?', '\n', '\r', '。', '！', '？', '…', '¿', '¡', '；']);
const NEEDS_SEGMENTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u;

type PieceKind = 'word' | 'glue' | 'soft' | 'hard';
interface Piece {
  text: string;
  start: number;
  kind: PieceKind;
}

const segmenters = new Map<string, Intl.Segmenter>();
function segmenterFor(locales: readonly string[] | null | undefined): Intl.Segmenter {
  const key = locales && locales.length > 0 ? toBcp47(locales[0]!) : '';
  let seg = segmenters.get(key);
  if (!seg) {
    seg = new Intl.Segmenter(key || undefined, { granularity: 'word' });
    segmenters.set(key, seg);
  }
  return seg;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A tokenizer bound to one index's text settings; build once per settings, reuse for every value. */
export class Tokenizer {
  private readonly special: RegExp | null;
  private readonly dictionary: Set<string>;
  private readonly nonSeparators: string[];
  private readonly nonSeparatorChars: Set<string>;
  private readonly stopWords: ReadonlySet<string>;

  constructor(private readonly config: TokenizerConfig = {}) {
    this.dictionary = new Set((config.dictionary ?? []).map((w) => w.toLowerCase()));
    const specials = [...(config.dictionary ?? []), ...(config.separatorTokens ?? [])].filter((s) => s.length > 0);
    specials.sort((a, b) => b.length - a.length);
    this.special = specials.length > 0 ? new RegExp(specials.map(escapeRegExp).join('|'), 'giu') : null;
    this.nonSeparators = [...(config.nonSeparatorTokens ?? [])].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
    this.nonSeparatorChars = new Set(this.nonSeparators.flatMap((s) => [...s]));
    this.stopWords = config.stopWords ?? new Set();
  }

  /** Tokenize one value; positions start at `firstPosition`. */
  tokenize(text: string, locales?: readonly string[] | null, firstPosition = 0): Token[] {
    const pieces: Piece[] = [];
    this.collectPieces(text, locales ?? this.config.locales ?? null, pieces);
    return this.assemble(pieces, firstPosition);
  }

  /**
   * The indexing path: appends the words of `text` that are not stop words to `words`, their
   * positions (from `firstPosition`) to `positions`, skipping words past `maxPosition`; returns
   * the position of the last word, stop words included, or -1 when the text has no word. The
   * same words and positions as `tokenize`, without building a piece and a token per word:
   * text that needs none of the special rules (special tokens, segmenter scripts) is scanned
   * directly, the rest goes through `tokenize`.
   */
  indexWords(text: string, locales: readonly string[] | null | undefined, firstPosition: number, words: string[], positions: number[], maxPosition: number): number {
    if (this.special || this.nonSeparatorChars.size > 0 || NEEDS_SEGMENTER.test(text)) {
      const tokens = this.tokenize(text, locales, firstPosition);
      for (const t of tokens) {
        if (t.position > maxPosition) break;
        if (t.stop) continue;
        words.push(t.word);
        positions.push(t.position);
      }
      return tokens.length > 0 ? tokens[tokens.length - 1]!.position : -1;
    }
    const stopWords = this.stopWords;
    const checkStops = stopWords.size > 0;
    let position = firstPosition;
    let gap = -1; // -1: no word yet
    let last = -1;
    const n = text.length;
    let i = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c < 128 ? isAsciiWord(c) : isWordCode(text, i)) {
        const start = i;
        // Lower-case ASCII needs no normalization, upper-case ASCII only lower-casing.
        let upper = c >= 65 && c <= 90;
        let ascii = c < 128;
        i += c >= 0xd800 && c <= 0xdbff && text.codePointAt(i)! > 0xffff ? 2 : 1;
        while (i < n) {
          const d = text.charCodeAt(i);
          if (d < 128) {
            if (!isAsciiWord(d)) break;
            if (d <= 90 && d >= 65) upper = true;
            i++;
          } else {
            if (!isWordCode(text, i)) break;
            ascii = false;
            i += text.codePointAt(i)! > 0xffff ? 2 : 1;
          }
        }
        const raw = text.slice(start, i);
        const word = !ascii ? normalizeWord(raw) : upper ? raw.toLowerCase() : raw;
        if (word.length === 0 || word.length > MAX_WORD_LENGTH) continue;
        position += gap < 0 ? 0 : gap === 0 ? 1 : gap;
        gap = 0;
        last = position;
        if (position > maxPosition || (checkStops && stopWords.has(word))) continue;
        words.push(word);
        positions.push(position);
      } else {
        if (gap >= 0) gap = isHardCode(c) ? HARD_GAP : Math.max(gap, 1);
        i++;
      }
    }
    return last;
  }

  private collectPieces(text: string, locales: readonly string[] | null, out: Piece[]): void {
    if (!this.special) return this.scan(text, 0, locales, out);
    let last = 0;
    this.special.lastIndex = 0;
    for (let m = this.special.exec(text); m; m = this.special.exec(text)) {
      if (m.index > last) this.scan(text.slice(last, m.index), last, locales, out);
      const matched = m[0];
      if (this.dictionary.has(matched.toLowerCase())) out.push({ text: matched, start: m.index, kind: 'word' });
      else out.push({ text: matched, start: m.index, kind: [...matched].some((c) => HARD_CHARS.has(c)) ? 'hard' : 'soft' });
      last = m.index + matched.length;
    }
    if (last < text.length) this.scan(text.slice(last), last, locales, out);
  }

  private scan(text: string, offset: number, locales: readonly string[] | null, out: Piece[]): void {
    if (NEEDS_SEGMENTER.test(text)) {
      for (const seg of segmenterFor(locales).segment(text)) {
        if (seg.isWordLike) this.splitWord(seg.segment, offset + seg.index, out);
        else this.separators(seg.segment, offset + seg.index, out);
      }
      return;
    }
    // Runs of letters/marks/digits are words, everything else separates.
    let i = 0;
    const n = text.length;
    while (i < n) {
      const start = i;
      const inWord = isWordCode(text, i);
      while (i < n && isWordCode(text, i) === inWord) i += text.codePointAt(i)! > 0xffff ? 2 : 1;
      const part = text.slice(start, i);
      if (inWord) out.push({ text: part, start: offset + start, kind: 'word' });
      else this.separators(part, offset + start, out);
    }
  }

  /** A word-like segment from the segmenter may contain inner punctuation ("U.S.A", "don't"). */
  private splitWord(segment: string, start: number, out: Piece[]): void {
    let i = 0;
    while (i < segment.length) {
      const from = i;
      const inWord = WORD_CHAR.test(segment[i]!) || isSurrogateWord(segment, i);
      while (i < segment.length && (WORD_CHAR.test(segment[i]!) || isSurrogateWord(segment, i)) === inWord) i++;
      const part = segment.slice(from, i);
      if (inWord) out.push({ text: part, start: start + from, kind: 'word' });
      else this.separators(part, start + from, out);
    }
  }

  private separators(text: string, start: number, out: Piece[]): void {
    let i = 0;
    while (i < text.length) {
      if (this.nonSeparatorChars.size > 0) {
        const glue = this.nonSeparators.find((t) => text.startsWith(t, i));
        if (glue) {
          out.push({ text: glue, start: start + i, kind: 'glue' });
          i += glue.length;
          continue;
        }
      }
      const ch = text[i]!;
      out.push({ text: ch, start: start + i, kind: HARD_CHARS.has(ch) ? 'hard' : 'soft' });
      i++;
    }
  }

  private assemble(pieces: Piece[], firstPosition: number): Token[] {
    const tokens: Token[] = [];
    let position = firstPosition;
    let gap = -1; // -1: no word yet
    let current: { text: string; start: number; glued: boolean } | null = null;
    const flush = () => {
      if (!current) return;
      const word = normalizeWord(current.text);
      if (word.length > 0 && word.length <= MAX_WORD_LENGTH) {
        position += gap < 0 ? 0 : gap === 0 ? 1 : gap;
        tokens.push({ word, start: current.start, end: current.start + current.text.length, position, stop: this.stopWords.has(word) });
        gap = 0;
      }
      current = null;
    };
    for (const piece of pieces) {
      if (piece.kind === 'word' || piece.kind === 'glue') {
        // Glue tokens join their neighbours; two plain words side by side (CJK) stay apart.
        if (current && (piece.kind === 'glue' || current.glued) && current.start + current.text.length === piece.start) {
          current.text += piece.text;
          current.glued = piece.kind === 'glue';
        } else {
          flush();
          current = { text: piece.text, start: piece.start, glued: piece.kind === 'glue' };
        }
        continue;
      }
      flush();
      if (gap >= 0) gap = piece.kind === 'hard' ? HARD_GAP : Math.max(gap, 1);
    }
    flush();
    return tokens;
  }
}

function isAsciiWord(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
}

const HARD_CODES = new Set([...HARD_CHARS].map((ch) => ch.charCodeAt(0)));
function isHardCode(c: number): boolean {
  return HARD_CODES.has(c);
}

function isWordCode(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
  const cp = text.codePointAt(i)!;
  return WORD_CHAR.test(String.fromCodePoint(cp));
}

function isSurrogateWord(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) return false;
  const hi = c <= 0xdbff ? i : i - 1;
  const cp = s.codePointAt(hi);
  return cp !== undefined && cp > 0xffff && WORD_CHAR.test(String.fromCodePoint(cp));
}
