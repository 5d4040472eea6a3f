/** The words of a query or of a rule's `conditions.query.words`, normalized as indexed words are. */
import { analyzerFor } from '../search/keyword/analyzer.js';
import { defaultSettings, type Settings } from '../settings/types.js';

export function ruleWords(text: string, settings: Settings = defaultSettings()): string[] {
  const words = analyzerFor(settings)
    .tokenizer.tokenize(text, null)
    .filter((t) => !t.stop)
    .map((t) => t.word);
  return [...new Set(words)];
}
