/**
 * Synonyms as stored in settings (`{"word": ["alternative", ...]}`; mutual synonyms are simply
 * stored in both directions), normalized once per settings value. Keys and alternatives may be
 * several words.
 */
import type { Settings } from '../../settings/types.js';
import { normalizeWord } from '../../text/normalize.js';
import type { Analyzer } from '../keyword/analyzer.js';

export type SynonymMap = Map<string, string[][]>;

const cache = new WeakMap<Settings, SynonymMap>();

export function synonymMap(analyzer: Analyzer): SynonymMap {
  const settings = analyzer.settings;
  let map = cache.get(settings);
  if (map) return map;
  map = new Map();
  const words = (text: string) => analyzer.tokenizer.tokenize(text).map((t) => normalizeWord(t.word));
  for (const [key, alternatives] of Object.entries(settings.synonyms)) {
    const k = words(key).join(' ');
    if (!k) continue;
    const list = map.get(k) ?? [];
    for (const alt of alternatives) {
      const a = words(alt);
      if (a.length > 0 && a.join(' ') !== k) list.push(a);
    }
    map.set(k, list);
  }
  cache.set(settings, map);
  return map;
}
