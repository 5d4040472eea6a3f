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
  /** Per term: word id -> typos, and the word-id sequences of its multi-word alternatives. */
  private readonly idTypos: Array<Map<number, number>>;
  private readonly sequences: number[][][];
  private readonly vocabulary: string[];

  constructor(
    private readonly reader: KeywordReader,
    readonly terms: readonly ResolvedTerm[],
    private readonly allowed: Set<number> | null,
  ) {
    const vocab = reader.vocabulary();
    this.vocabulary = vocab.words;
    this.idTypos = terms.map((t) => {
      const m = new Map<number, number>();
      if (t.term.kind === 'word') for (const [w, typos] of t.words) {
        const id = vocab.ids.get(w);
        if (id !== undefined) m.set(id, typos);
      }
      return m;
    });
    this.sequences = terms.map((t) => t.sequences.map((seq) => seq.map((w) => vocab.ids.get(w) ?? -1)));
  }

  /** The word ids of `words`, -1 for unknown ones. */
  idsOf(words: readonly string[]): number[] {
    return words.map((w) => this.reader.idOf(w) ?? -1);
  }

  private readonly entries = new Map<number, DocEntry>();

  /** The stored words of a document, without matching them (cheaper when only the entry is needed). */
  entry(docid: number): DocEntry {
    const known = this.cache.get(docid)?.entry ?? this.entries.get(docid);
    if (known) return known;
    const entry = this.reader.doc(docid) ?? [];
    this.entries.set(docid, entry);
    return entry;
  }

  get(docid: number): DocMatches {
    let m = this.cache.get(docid);
    if (!m) {
      m = this.compute(this.entry(docid));
      this.cache.set(docid, m);
    }
    return m;
  }

  private compute(entry: DocEntry): DocMatches {
    const occurrences: Occurrence[][] = this.terms.map(() => []);
    for (const [fid, words, positions] of entry) {
      if (this.allowed && !this.allowed.has(fid)) continue;
      for (let i = 0; i < words.length; i++) {
        const id = words[i]!;
        for (let t = 0; t < this.terms.length; t++) {
          const r = this.terms[t]!;
          if (r.term.kind === 'word') {
            let typos = this.idTypos[t]!.get(id) ?? -1;
            if (typos < 0 && r.prefix !== null && (this.vocabulary[id] ?? '').startsWith(r.prefix)) typos = 0;
            if (typos >= 0) occurrences[t]!.push({ fid, position: positions[i]!, typos, exact: typos === 0 && this.vocabulary[id] === r.term.word });
          }
          for (const seq of this.sequences[t]!) {
            if (seq[0] !== id) continue;
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
