/**
 * Phrase matching: documents containing the words of a phrase in sequence (same field,
 * consecutive positions, stop words keeping their place). Two adjacent words with pair postings
 * (a short one first or second) are those postings themselves (kw-pairs in keyword/layout.ts);
 * otherwise the candidates are the intersection of the words' postings, verified against each
 * document's stored entry.
 */
import roaring from 'roaring';
import type { Bitmap } from '../../index/store.js';
import { EntryCursor } from '../keyword/entry.js';
import type { QueryPhrase } from './parse.js';
import type { ResolveContext } from './resolve.js';

const { RoaringBitmap32 } = roaring;

/** A phrase word as its id in the vocabulary (-1: unknown) and its offset from the phrase's start. */
export type SequenceWord = readonly [id: number, offset: number];

export function phraseDocids(ctx: ResolveContext, phrase: QueryPhrase): Bitmap {
  const present = phrase.words.map((w, i) => [w, phrase.offsets[i]!] as const).filter((p): p is readonly [string, number] => p[0] !== null);
  if (present.length === 0) return new RoaringBitmap32();
  const adjacent = pairDocids(ctx, present);
  if (adjacent) return adjacent;
  let candidates: Bitmap | null = null;
  for (const [w] of present) {
    const d = ctx.reader.anyWord(w);
    candidates = candidates ? RoaringBitmap32.and(candidates, d) : d.clone();
    if (candidates.isEmpty) return candidates;
  }
  if (present.length === 1) return candidates!;
  const out = new RoaringBitmap32();
  const allowed = ctx.fids ? new Set(ctx.fids) : null;
  const ids: SequenceWord[] = present.map(([w, off]) => [ctx.reader.idOf(w) ?? -1, off]);
  for (const docid of candidates!) {
    const raw = ctx.reader.rawDoc(docid);
    if (raw && entryContainsSequence(raw, ids, allowed)) out.add(docid);
  }
  return out;
}

/**
 * Two words at consecutive positions with pair postings (a short first word, or a short second
 * one): the documents are those postings, with no document read (a split such as "of ice" for
 * "ofice", as someone types, verified 300 documents). Null when the pair postings cannot say:
 * two long words, a restriction to some fields (pairs are kept across fields), an index written
 * before those pair postings existed.
 */
function pairDocids(ctx: ResolveContext, present: ReadonlyArray<readonly [string, number]>): Bitmap | null {
  if (present.length !== 2 || ctx.fids !== null) return null;
  const [[first, at], [second, next]] = present as [readonly [string, number], readonly [string, number]];
  if (next !== at + 1 || !ctx.reader.hasPairPostingsOf(first, second)) return null;
  // a bitmap of its own: the reader's cached postings are shared, callers may change what they get
  return ctx.reader.pair(first, second).clone();
}

const cursor = new EntryCursor();

/**
 * Does a field of a stored entry (entry.ts) hold the word ids of `seq` at the given positions
 * relative to one another? Read in place: positions grow within a field, so the words after an
 * occurrence of the first are found by scanning forward from it.
 */
export function entryContainsSequence(raw: Uint8Array, seq: readonly SequenceWord[], allowed: Set<number> | null): boolean {
  const [first, firstOffset] = seq[0]!;
  const c = cursor;
  c.open(raw);
  while (c.nextField()) {
    if (allowed && !allowed.has(c.fid)) continue;
    const n = c.n;
    for (let i = c.indexOfId(first, 0); i < n; i = c.indexOfId(first, i + 1)) {
      const base = c.position(i) - firstOffset;
      let j = i;
      let ok = true;
      for (let k = 1; k < seq.length && ok; k++) {
        const [id, offset] = seq[k]!;
        const target = base + offset;
        while (j < n && c.position(j) < target) j++;
        ok = j < n && c.position(j) === target && c.id(j) === id;
      }
      if (ok) return true;
    }
  }
  return false;
}
