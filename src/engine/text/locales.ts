/**
 * Locale codes as users give them (`locales`, `localizedAttributes`: ISO 639-3 such as `jpn`, or
 * ISO 639-1 such as `ja`) mapped to the BCP 47 tags `Intl.Segmenter` understands.
 */

const ISO3_TO_BCP47: Record<string, string> = {
  afr: 'af', amh: 'am', ara: 'ar', aze: 'az', bel: 'be', ben: 'bn', bul: 'bg', cat: 'ca', ces: 'cs',
  cmn: 'zh', dan: 'da', deu: 'de', ell: 'el', eng: 'en', epo: 'eo', est: 'et', fin: 'fi', fra: 'fr',
  guj: 'gu', heb: 'he', hin: 'hi', hrv: 'hr', hun: 'hu', hye: 'hy', ind: 'id', ita: 'it', jav: 'jv',
  jpn: 'ja', kan: 'kn', kat: 'ka', khm: 'km', kor: 'ko', lat: 'la', lav: 'lv', lit: 'lt', mal: 'ml',
  mar: 'mr', mkd: 'mk', mya: 'my', nep: 'ne', nld: 'nl', nob: 'nb', ori: 'or', pan: 'pa', pes: 'fa',
  pol: 'pl', por: 'pt', ron: 'ro', rus: 'ru', sin: 'si', slk: 'sk', slv: 'sl', sna: 'sn', spa: 'es',
  srp: 'sr', swe: 'sv', tam: 'ta', tel: 'te', tgl: 'tl', tha: 'th', tuk: 'tk', tur: 'tr', ukr: 'uk',
  urd: 'ur', uzb: 'uz', vie: 'vi', yid: 'yi', zho: 'zh', zul: 'zu', lao: 'lo',
};

const BCP47_TO_ISO3: Record<string, string> = Object.fromEntries(
  Object.entries(ISO3_TO_BCP47).map(([iso3, tag]) => [tag, iso3]),
);

/** Every code accepted in `locales` (both spellings). */
export const SUPPORTED_LOCALES: ReadonlySet<string> = new Set([
  ...Object.keys(ISO3_TO_BCP47),
  ...Object.values(ISO3_TO_BCP47),
]);

export function isSupportedLocale(code: string): boolean {
  return SUPPORTED_LOCALES.has(code);
}

export function toBcp47(code: string): string {
  return ISO3_TO_BCP47[code] ?? code;
}

export function toIso3(code: string): string {
  return BCP47_TO_ISO3[code] ?? code;
}
