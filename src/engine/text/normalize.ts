/**
 * Word normalization: what makes "Élan", "ELAN" and "élan" the same indexed word.
 *
 * Case fold, compatibility decomposition (NFKD: full-width forms, ligatures) and removal of the
 * diacritics of Latin and Greek, of the Cyrillic diaeresis (ё -> е) and of Arabic vowel and hamza marks. Marks that
 * carry meaning in other scripts (Japanese dakuten, Indic vowel signs, Thai tone marks) are kept and
 * the result is recomposed (NFC), so Hangul syllables and kana come back whole.
 */

const ALPHABETIC_BASE = /[\p{Script=Latin}\p{Script=Greek}]/u;
/** Cyrillic keeps its breve (й is its own letter) but folds ё to е. */
const CYRILLIC_BASE = /\p{Script=Cyrillic}/u;
const COMBINING = /\p{M}/u;
const ARABIC_DIACRITIC = /[\u064B-\u065F\u0670\u06D6-\u06ED]/u;
const SIMPLE_ASCII = /^[a-z0-9]*$/;
const PLAIN_ASCII = /^[A-Za-z0-9]*$/;
/** Letters NFKD does not decompose but users type without their special form. */
const FOLD: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ł: 'l', ı: 'i', þ: 'th', ð: 'd' };

const cache = new Map<string, string>();
const CACHE_LIMIT = 50_000;

export function normalizeWord(word: string): string {
  if (SIMPLE_ASCII.test(word)) return word;
  // Capitalized ASCII words: lower case is the whole normalization, no cache churn.
  if (PLAIN_ASCII.test(word)) return word.toLowerCase();
  const cached = cache.get(word);
  if (cached !== undefined) return cached;
  const result = normalizeUncached(word);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(word, result);
  return result;
}

function normalizeUncached(word: string): string {
  const lower = word.toLowerCase();
  if (SIMPLE_ASCII.test(lower)) return lower;
  const decomposed = lower.normalize('NFKD');
  let out = '';
  let base = '';
  for (const ch of decomposed) {
    if (COMBINING.test(ch)) {
      if (ALPHABETIC_BASE.test(base) || ARABIC_DIACRITIC.test(ch)) continue;
      if (ch === '\u0308' && CYRILLIC_BASE.test(base)) continue;
      out += ch;
      continue;
    }
    base = ch;
    out += FOLD[ch] ?? ch;
  }
  return out.normalize('NFC');
}

/** Normalize a free text (several words), e.g. a stop word, synonym or dictionary entry. */
export function normalizeText(text: string): string {
  return normalizeWord(text).trim();
}
