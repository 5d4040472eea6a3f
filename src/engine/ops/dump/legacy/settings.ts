/**
 * Index settings of dumps v1 to v5, converted along the reference's compatibility chain to the
 * v6 wire shape.
 *
 * A legacy settings object is read as the reference reads it: a field left out is "not set", a
 * `null` field is "reset", anything else is "set". Unknown fields are refused (the reference
 * reads these historical formats with `deny_unknown_fields`). The result keeps that meaning:
 * absent, `null` (back to the default) or a value.
 */
import type { DumpFiles } from '../contents.js';

export type LegacySettings = Record<string, unknown>;

/** The fields each dump version's settings may hold. */
const FIELDS: Record<'V1' | 'V2' | 'V3' | 'V4' | 'V5', readonly string[]> = {
  V1: ['rankingRules', 'distinctAttribute', 'searchableAttributes', 'displayedAttributes', 'stopWords', 'synonyms', 'attributesForFaceting'],
  V2: ['displayedAttributes', 'searchableAttributes', 'filterableAttributes', 'sortableAttributes', 'rankingRules', 'stopWords', 'synonyms', 'distinctAttribute'],
  V3: ['displayedAttributes', 'searchableAttributes', 'filterableAttributes', 'sortableAttributes', 'rankingRules', 'stopWords', 'synonyms', 'distinctAttribute'],
  V4: ['displayedAttributes', 'searchableAttributes', 'filterableAttributes', 'sortableAttributes', 'rankingRules', 'stopWords', 'synonyms', 'distinctAttribute', 'typoTolerance'],
  V5: ['displayedAttributes', 'searchableAttributes', 'filterableAttributes', 'sortableAttributes', 'rankingRules', 'stopWords', 'synonyms', 'distinctAttribute', 'typoTolerance', 'faceting', 'pagination'],
};

const NESTED: Record<string, readonly string[]> = {
  typoTolerance: ['enabled', 'minWordSizeForTypos', 'disableOnWords', 'disableOnAttributes'],
  'typoTolerance.minWordSizeForTypos': ['oneTypo', 'twoTypos'],
  faceting: ['maxValuesPerFacet'],
  pagination: ['maxTotalHits'],
};

export type LegacyVersion = keyof typeof FIELDS;

/** Refuse a settings object the reference would not read; `where` names the file. */
export function checkLegacySettings(files: DumpFiles, where: string, version: LegacyVersion, settings: unknown): LegacySettings {
  const fail = (detail: string) => files.fail(`\`${where}\`: ${detail}`);
  const check = (path: string, value: unknown, allowed: readonly string[]) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail(`\`${path || 'settings'}\` is not an object`);
    for (const key of Object.keys(value))
      if (!allowed.includes(key)) throw fail(`unknown settings field \`${path ? `${path}.` : ''}${key}\` for a dump ${version.toLowerCase()} (expected one of ${allowed.map((f) => `\`${f}\``).join(', ')})`);
  };
  check('', settings, FIELDS[version]);
  const s = settings as LegacySettings;
  for (const [path, allowed] of Object.entries(NESTED)) {
    const [outer, inner] = path.split('.') as [string, string | undefined];
    const value = inner ? (s[outer] as LegacySettings | null | undefined)?.[inner] : s[outer];
    if (value !== undefined && value !== null && FIELDS[version].includes(outer)) check(path, value, allowed);
  }
  return s;
}

// --- v1 -> v2 -----------------------------------------------------------------------------------

/** A v1 ranking rule as a v2 criterion, or null for the rules v2 dropped (`wordsPosition`). */
export function v1RankingRule(rule: string, warn: (m: string) => void): string | null {
  if (['typo', 'words', 'proximity', 'attribute', 'exactness'].includes(rule)) return rule;
  if (rule === 'wordsPosition') {
    warn("removing the 'wordsPosition' ranking rule that is no longer supported, please check the resulting ranking rules of your indexes");
    return null;
  }
  const custom = /(asc|desc)\(([\w_-]+)\)/.exec(rule);
  if (custom) return `${custom[2]}:${custom[1]}`;
  warn(`could not import the following ranking rule: \`${rule}\``);
  return null;
}

export function v1ToV2Settings(v1: LegacySettings, warn: (m: string) => void): LegacySettings {
  const out: LegacySettings = {};
  const copy = (from: string, to = from) => {
    if (from in v1) out[to] = v1[from];
  };
  copy('displayedAttributes');
  copy('searchableAttributes');
  copy('attributesForFaceting', 'filterableAttributes');
  copy('attributesForFaceting', 'sortableAttributes');
  if (Array.isArray(v1.rankingRules)) out.rankingRules = (v1.rankingRules as string[]).map((r) => v1RankingRule(r, warn)).filter((r) => r !== null);
  else copy('rankingRules');
  copy('stopWords');
  copy('synonyms');
  copy('distinctAttribute');
  return out;
}

// --- v2 -> v3 -----------------------------------------------------------------------------------

/** v0.21 wrote `asc(field)`, v0.22 `field:asc`: both become `field:asc`; anything else is kept for v6 to judge. */
function v3RankingRule(rule: string): string {
  const named = /^(.+):(asc|desc)$/.exec(rule);
  if (named) return `${named[1]}:${named[2]}`;
  const call = /^(asc|desc)\((.*)\)$/.exec(rule);
  if (call) return `${call[2]}:${call[1]}`;
  return rule;
}

export function v2ToV3Settings(v2: LegacySettings): LegacySettings {
  const out = { ...v2 };
  if (Array.isArray(v2.rankingRules)) out.rankingRules = (v2.rankingRules as string[]).map(v3RankingRule);
  return out;
}

// --- check (every version) ----------------------------------------------------------------------

/** `*` among displayed or searchable attributes means "all": the default. */
export function checkedSettings(settings: LegacySettings): LegacySettings {
  const out = { ...settings };
  for (const key of ['displayedAttributes', 'searchableAttributes'])
    if (Array.isArray(out[key]) && (out[key] as string[]).includes('*')) out[key] = null;
  return out;
}

// --- v5 -> v6 -----------------------------------------------------------------------------------

const V6_RULES = ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'];

export function v5ToV6Settings(v5: LegacySettings, warn: (m: string) => void): LegacySettings {
  const out = { ...v5 };
  if (Array.isArray(v5.rankingRules))
    out.rankingRules = (v5.rankingRules as string[]).filter((rule) => {
      const valid = V6_RULES.includes(rule) || /^.+:(asc|desc)$/.test(rule);
      if (!valid) warn(`error while importing settings: the ranking rule \`${rule}\` does not exist anymore`);
      return valid;
    });
  return out;
}

/** The index settings of a v1 dump, as v6 settings. */
export function v1IndexSettings(v1: LegacySettings, warn: (m: string) => void): LegacySettings {
  return fromV2(checkedSettings(v1ToV2Settings(v1, warn)), warn);
}

/** The index settings of a v2 dump (or the v2 form of a v1 dump), as v6 settings. */
export function fromV2(v2: LegacySettings, warn: (m: string) => void): LegacySettings {
  return fromV3(checkedSettings(v2ToV3Settings(v2)), warn);
}

/** v3 -> v4 -> v5 only add settings (typo tolerance, faceting, pagination), left unset. */
export function fromV3(settings: LegacySettings, warn: (m: string) => void): LegacySettings {
  return checkedSettings(v5ToV6Settings(checkedSettings(settings), warn));
}
