/**
 * Phrase matching: documents containing the words of a phrase in sequence (same field,
 * consecutive positions, stop words keeping their place). Candidates are the intersection of the
 * words' postings, verified against each document's stored positions.
 */
import roaring from 'roaring';
import type { Bitmap } from '../../index/store.js';
import type { DocEntry } from '../keyword/entry.js';
import type { QueryPhrase } from './parse.js';
import type { ResolveContext } from './resolve.js';

const { RoaringBitmap32 } = roaring;

export function phraseDocids(ctx: ResolveContext, phrase: QueryPhrase): Bitmap {
  const present = phrase.words.map((w, i) => [w, phrase.offsets[i]!] as const).filter((p): p is readonly [string, number] => p[0] !== null);
  if (present.length === 0) return new RoaringBitmap32();
  let candidates: Bitmap | null = null;
  for (const [w] of present) {
    const d = ctx.reader.anyWord(w);
    candidates = candidates ? RoaringBitmap32.and(candidates, d) : d.clone();
    if (candidates.isEmpty) return candidates;
  }
  if (present.length === 1) return candidates!;
  const out = new RoaringBitmap32();
  const allowed = ctx.fids ? new Set(ctx.fids) : null;
  const ids = present.map(([w, off]) => [ctx.reader.idOf(w) ?? -1, off] as const);
  for (const docid of candidates!) {
    const entry = ctx.reader.doc(docid);
    if (entry && containsSequence(entry, ids, allowed)) out.add(docid);
  }
  return out;
}

/** Does a field hold the word ids of `seq` at the given relative positions? */
export function containsSequence(entry: DocEntry, seq: ReadonlyArray<readonly [number, number]>, allowed: Set<number> | null): boolean {
  const [first, firstOffset] = seq[0]!;
  for (const [fid, words, positions] of entry) {
    if (allowed && !allowed.has(fid)) continue;
    const at = new Map<number, number>();
    for (let i = 0; i < words.length; i++) at.set(positions[i]!, words[i]!);
    for (let i = 0; i < words.length; i++) {
      if (words[i] !== first) continue;
      const base = positions[i]! - firstOffset;
      if (seq.every(([w, off]) => at.get(base + off) === w)) return true;
    }
  }
  return false;
}
