/**
 * Where the query terms occur in one document, from its stored words and positions: the input of
 * the position-based rules (proximity, attributeRank, wordPosition, exactness), computed at most
 * once per document and query.
 */
import type { DocEntry } from '../keyword/layout.js';
import type { KeywordReader } from '../keyword/reader.js';
import type { ResolvedTerm } from '../query/resolve.js';

export interface Occurrence {
  fid: number;
  position: number;
  typos: number;
  /** The query word itself (no typo, not extended by the prefix). */
  exact: boolean;
}

export interface DocMatches {
  /** Per resolved term index. */
  occurrences: Occurrence[][];
  entry: DocEntry;
}

export class MatchAnalyzer {
  private readonly cache = new Map<number, DocMatches>();

  constructor(
    private readonly reader: KeywordReader,
    readonly terms: readonly ResolvedTerm[],
    private readonly allowed: Set<number> | null,
  ) {}

  get(docid: number): DocMatches {
    let m = this.cache.get(docid);
    if (!m) {
      m = this.compute(this.reader.doc(docid) ?? []);
      this.cache.set(docid, m);
    }
    return m;
  }

  private compute(entry: DocEntry): DocMatches {
    const occurrences: Occurrence[][] = this.terms.map(() => []);
    for (const [fid, words, positions] of entry) {
      if (this.allowed && !this.allowed.has(fid)) continue;
      for (let i = 0; i < words.length; i++) {
        const w = words[i]!;
        for (let t = 0; t < this.terms.length; t++) {
          const r = this.terms[t]!;
          if (r.term.kind === 'word') {
            const typos = r.words.get(w) ?? (r.prefix !== null && w.startsWith(r.prefix) ? 0 : -1);
            if (typos >= 0) occurrences[t]!.push({ fid, position: positions[i]!, typos, exact: w === r.term.word });
          }
          for (const seq of r.sequences) {
            if (seq[0] !== w) continue;
            let ok = true;
            for (let k = 1; k < seq.length && ok; k++) ok = words[i + k] === seq[k] && positions[i + k] === positions[i]! + k;
            if (ok) occurrences[t]!.push({ fid, position: positions[i]!, typos: 0, exact: r.term.kind === 'phrase' });
          }
        }
      }
    }
    return { occurrences, entry };
  }
}
