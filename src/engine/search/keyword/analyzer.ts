/**
 * The text settings of an index turned into ready-to-use objects (tokenizer, stop words,
 * exact attributes), built once per settings value and shared by indexing and search.
 */
import type { Settings } from '../../settings/types.js';
import { Tokenizer } from '../../text/tokenize.js';
import { normalizeText } from '../../text/normalize.js';
import { coversPath } from './fields.js';

export class Analyzer {
  constructor(
    readonly settings: Settings,
    readonly tokenizer: Tokenizer,
    readonly stopWords: ReadonlySet<string>,
  ) {}

  /** Fields listed in `typoTolerance.disableOnAttributes` are indexed as exact words only. */
  isExactAttribute(path: string): boolean {
    return this.settings.typoTolerance.disableOnAttributes.some((p) => coversPath(p, path));
  }
}

const bySettings = new WeakMap<Settings, Analyzer>();
/** Settings are often re-read from the store as new objects: share tokenizers between equal text settings. */
const tokenizers = new Map<string, { tokenizer: Tokenizer; stopWords: ReadonlySet<string> }>();

export function analyzerFor(settings: Settings): Analyzer {
  const known = bySettings.get(settings);
  if (known) return known;
  const key = JSON.stringify([settings.stopWords, settings.separatorTokens, settings.nonSeparatorTokens, settings.dictionary]);
  let entry = tokenizers.get(key);
  if (!entry) {
    const stopWords = new Set(settings.stopWords.map(normalizeText).filter(Boolean));
    const tokenizer = new Tokenizer({
      separatorTokens: settings.separatorTokens,
      nonSeparatorTokens: settings.nonSeparatorTokens,
      dictionary: settings.dictionary,
      stopWords,
    });
    entry = { tokenizer, stopWords };
    if (tokenizers.size > 64) tokenizers.clear();
    tokenizers.set(key, entry);
  }
  const analyzer = new Analyzer(settings, entry.tokenizer, entry.stopWords);
  bySettings.set(settings, analyzer);
  return analyzer;
}
