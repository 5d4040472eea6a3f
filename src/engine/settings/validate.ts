/**
 * PATCH /indexes/:uid/settings body -> a validated patch. `null` (for a whole setting or a field
 * of typoTolerance/faceting/pagination) means "reset to default" and is kept as null for
 * `applySettingsPatch`. Errors carry the reference codes: `invalid_settings_<setting>`, and
 * `bad_request` for an unknown top-level field.
 */
import { SearchError } from '../errors.js';
import { isSupportedLocale } from '../text/locales.js';
import { validateEmbedders } from '../embedders/settings.js';
import type { Settings } from './types.js';
import { describeValue } from '../wire/describe.js';

export type SettingsPatch = { [K in keyof Settings]?: Settings[K] | null };

const CODES: Record<keyof Settings, string> = {
  displayedAttributes: 'invalid_settings_displayed_attributes',
  searchableAttributes: 'invalid_settings_searchable_attributes',
  filterableAttributes: 'invalid_settings_filterable_attributes',
  sortableAttributes: 'invalid_settings_sortable_attributes',
  rankingRules: 'invalid_settings_ranking_rules',
  stopWords: 'invalid_settings_stop_words',
  nonSeparatorTokens: 'invalid_settings_non_separator_tokens',
  separatorTokens: 'invalid_settings_separator_tokens',
  dictionary: 'invalid_settings_dictionary',
  synonyms: 'invalid_settings_synonyms',
  distinctAttribute: 'invalid_settings_distinct_attribute',
  proximityPrecision: 'invalid_settings_proximity_precision',
  typoTolerance: 'invalid_settings_typo_tolerance',
  faceting: 'invalid_settings_faceting',
  pagination: 'invalid_settings_pagination',
  embedders: 'invalid_settings_embedders',
  searchCutoffMs: 'invalid_settings_search_cutoff_ms',
  localizedAttributes: 'invalid_settings_localized_attributes',
  facetSearch: 'invalid_settings_facet_search',
  prefixSearch: 'invalid_settings_prefix_search',
  foreignKeys: 'invalid_settings_foreign_keys',
};

export const SETTINGS_FIELDS = Object.keys(CODES) as Array<keyof Settings>;

class Checker {
  constructor(readonly code: string) {}
  fail(message: string): never {
    throw new SearchError(this.code, message);
  }
  type(path: string, expected: string, value: unknown): never {
    return this.fail(`Invalid value type at \`${path}\`: expected ${expected}, but found ${describeValue(value)}`);
  }
  object(path: string, value: unknown): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) this.type(path, 'an object', value);
    return value as Record<string, unknown>;
  }
  keys(path: string, obj: Record<string, unknown>, allowed: string[]): void {
    for (const k of Object.keys(obj)) {
      if (!allowed.includes(k)) this.fail(`Unknown field \`${k}\` inside \`${path}\`: expected one of ${allowed.map((a) => `\`${a}\``).join(', ')}`);
    }
  }
  strings(path: string, value: unknown): string[] {
    if (!Array.isArray(value)) this.type(path, 'an array', value);
    (value as unknown[]).forEach((v, i) => {
      if (typeof v !== 'string') this.type(`${path}[${i}]`, 'a string', v);
    });
    return value as string[];
  }
  bool(path: string, value: unknown): boolean {
    if (typeof value !== 'boolean') this.type(path, 'a boolean', value);
    return value as boolean;
  }
  nat(path: string, value: unknown): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) this.type(path, 'a positive integer', value);
    return value as number;
  }
  oneOf<T extends string>(path: string, value: unknown, options: readonly T[]): T {
    if (typeof value !== 'string' || !options.includes(value as T)) {
      this.fail(`Unknown value \`${typeof value === 'string' ? value : JSON.stringify(value)}\` at \`${path}\`: expected one of ${options.map((o) => `\`${o}\``).join(', ')}`);
    }
    return value as T;
  }
}

/** Each rule is a level of the bucket sort that every search walks down (see search/params.ts). */
export const MAX_RANKING_RULES = 64;

const BUILTIN_RULES = ['words', 'typo', 'proximity', 'attribute', 'attributeRank', 'wordPosition', 'sort', 'exactness'];

function rankingRules(c: Checker, value: unknown): string[] {
  const rules = c.strings('.rankingRules', value);
  if (rules.length > MAX_RANKING_RULES) c.fail(`Invalid value at \`.rankingRules\`: expected at most ${MAX_RANKING_RULES} ranking rules, but found ${rules.length}.`);
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    const custom = /^(.+):(asc|desc)$/.exec(rule);
    if (!BUILTIN_RULES.includes(rule) && !custom) {
      c.fail(`Invalid value at \`.rankingRules[${i}]\`: \`${rule}\` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, attributeRank, wordPosition, exactness and custom ranking rules.`);
    }
    const key = custom ? custom[1]! : rule;
    if (seen.has(key) && custom) c.fail(`Invalid value at \`.rankingRules[${i}]\`: \`${key}\` is used more than once in the ranking rules.`);
    seen.add(key);
  });
  return rules;
}

function typoTolerance(c: Checker, value: unknown): Partial<Settings['typoTolerance']> {
  const o = c.object('.typoTolerance', value);
  c.keys('.typoTolerance', o, ['enabled', 'minWordSizeForTypos', 'disableOnWords', 'disableOnAttributes', 'disableOnNumbers']);
  const out: Record<string, unknown> = {};
  if (o.enabled !== undefined) out.enabled = o.enabled === null ? null : c.bool('.typoTolerance.enabled', o.enabled);
  if (o.disableOnNumbers !== undefined) out.disableOnNumbers = o.disableOnNumbers === null ? null : c.bool('.typoTolerance.disableOnNumbers', o.disableOnNumbers);
  if (o.disableOnWords !== undefined) out.disableOnWords = o.disableOnWords === null ? null : c.strings('.typoTolerance.disableOnWords', o.disableOnWords);
  if (o.disableOnAttributes !== undefined) out.disableOnAttributes = o.disableOnAttributes === null ? null : c.strings('.typoTolerance.disableOnAttributes', o.disableOnAttributes);
  if (o.minWordSizeForTypos !== undefined && o.minWordSizeForTypos !== null) {
    const m = c.object('.typoTolerance.minWordSizeForTypos', o.minWordSizeForTypos);
    c.keys('.typoTolerance.minWordSizeForTypos', m, ['oneTypo', 'twoTypos']);
    const oneTypo = m.oneTypo === undefined || m.oneTypo === null ? 5 : c.nat('.typoTolerance.minWordSizeForTypos.oneTypo', m.oneTypo);
    const twoTypos = m.twoTypos === undefined || m.twoTypos === null ? 9 : c.nat('.typoTolerance.minWordSizeForTypos.twoTypos', m.twoTypos);
    if (oneTypo > 255 || twoTypos > 255 || twoTypos < oneTypo) {
      c.fail(`\`minWordSizeForTypos\` setting is invalid. \`oneTypo\` and \`twoTypos\` fields should be between \`0\` and \`255\`, and \`twoTypos\` should be greater or equals to \`oneTypo\` but found \`oneTypo: ${oneTypo}\` and twoTypos: ${twoTypos}\`.`);
    }
    out.minWordSizeForTypos = { oneTypo, twoTypos };
  } else if (o.minWordSizeForTypos === null) out.minWordSizeForTypos = null;
  return out as Partial<Settings['typoTolerance']>;
}

function filterable(c: Checker, value: unknown): Settings['filterableAttributes'] {
  if (!Array.isArray(value)) c.type('.filterableAttributes', 'an array', value);
  return (value as unknown[]).map((item, i) => {
    if (typeof item === 'string') return item;
    const path = `.filterableAttributes[${i}]`;
    const o = c.object(path, item);
    c.keys(path, o, ['attributePatterns', 'features']);
    const attributePatterns = c.strings(`${path}.attributePatterns`, o.attributePatterns ?? []);
    const features = { facetSearch: false, filter: { equality: true, comparison: false } };
    if (o.features !== undefined && o.features !== null) {
      const f = c.object(`${path}.features`, o.features);
      c.keys(`${path}.features`, f, ['facetSearch', 'filter']);
      if (f.facetSearch !== undefined) features.facetSearch = c.bool(`${path}.features.facetSearch`, f.facetSearch);
      if (f.filter !== undefined) {
        const fl = c.object(`${path}.features.filter`, f.filter);
        c.keys(`${path}.features.filter`, fl, ['equality', 'comparison']);
        if (fl.equality !== undefined) features.filter.equality = c.bool(`${path}.features.filter.equality`, fl.equality);
        if (fl.comparison !== undefined) features.filter.comparison = c.bool(`${path}.features.filter.comparison`, fl.comparison);
      }
    }
    return { attributePatterns, features };
  });
}

function localized(c: Checker, value: unknown): Settings['localizedAttributes'] {
  if (!Array.isArray(value)) c.type('.localizedAttributes', 'an array', value);
  return (value as unknown[]).map((item, i) => {
    const path = `.localizedAttributes[${i}]`;
    const o = c.object(path, item);
    c.keys(path, o, ['attributePatterns', 'locales']);
    const attributePatterns = c.strings(`${path}.attributePatterns`, o.attributePatterns ?? []);
    const locales = c.strings(`${path}.locales`, o.locales ?? []);
    locales.forEach((l, j) => {
      if (!isSupportedLocale(l)) c.fail(`Unknown value \`${l}\` at \`${path}.locales[${j}]\`: expected one of the supported ISO 639-1 or ISO 639-3 language codes`);
    });
    return { attributePatterns, locales };
  });
}

function synonyms(c: Checker, value: unknown): Record<string, string[]> {
  const o = c.object('.synonyms', value);
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(o)) out[k] = c.strings(`.synonyms.${k}`, v);
  return out;
}

function faceting(c: Checker, value: unknown): Partial<Settings['faceting']> {
  const o = c.object('.faceting', value);
  c.keys('.faceting', o, ['maxValuesPerFacet', 'sortFacetValuesBy']);
  const out: Record<string, unknown> = {};
  if (o.maxValuesPerFacet !== undefined) out.maxValuesPerFacet = o.maxValuesPerFacet === null ? null : c.nat('.faceting.maxValuesPerFacet', o.maxValuesPerFacet);
  if (o.sortFacetValuesBy !== undefined) {
    if (o.sortFacetValuesBy === null) out.sortFacetValuesBy = null;
    else {
      const s = c.object('.faceting.sortFacetValuesBy', o.sortFacetValuesBy);
      const by: Record<string, 'alpha' | 'count'> = { '*': 'alpha' };
      for (const [k, v] of Object.entries(s)) by[k] = c.oneOf(`.faceting.sortFacetValuesBy.${k}`, v, ['alpha', 'count'] as const);
      out.sortFacetValuesBy = by;
    }
  }
  return out as Partial<Settings['faceting']>;
}

function pagination(c: Checker, value: unknown): Partial<Settings['pagination']> {
  const o = c.object('.pagination', value);
  c.keys('.pagination', o, ['maxTotalHits']);
  const out: Record<string, unknown> = {};
  if (o.maxTotalHits !== undefined) out.maxTotalHits = o.maxTotalHits === null ? null : c.nat('.pagination.maxTotalHits', o.maxTotalHits);
  return out as Partial<Settings['pagination']>;
}

function foreignKeys(c: Checker, value: unknown): Settings['foreignKeys'] {
  if (!Array.isArray(value)) c.type('.foreignKeys', 'an array', value);
  return (value as unknown[]).map((item, i) => {
    const path = `.foreignKeys[${i}]`;
    const o = c.object(path, item);
    c.keys(path, o, ['foreignIndexUid', 'fieldName']);
    for (const field of ['foreignIndexUid', 'fieldName'] as const) {
      if (o[field] === undefined) c.fail(`Missing field \`${field}\` inside \`${path}\``);
      if (typeof o[field] !== 'string') c.type(`${path}.${field}`, 'a string', o[field]);
    }
    return { foreignIndexUid: o.foreignIndexUid as string, fieldName: o.fieldName as string };
  });
}

type Validator = (c: Checker, value: unknown) => unknown;

const VALIDATORS: Record<keyof Settings, Validator> = {
  displayedAttributes: (c, v) => c.strings('.displayedAttributes', v),
  searchableAttributes: (c, v) => c.strings('.searchableAttributes', v),
  filterableAttributes: filterable,
  sortableAttributes: (c, v) => c.strings('.sortableAttributes', v),
  rankingRules,
  stopWords: (c, v) => c.strings('.stopWords', v),
  nonSeparatorTokens: (c, v) => c.strings('.nonSeparatorTokens', v),
  separatorTokens: (c, v) => c.strings('.separatorTokens', v),
  dictionary: (c, v) => c.strings('.dictionary', v),
  synonyms,
  distinctAttribute: (c, v) => (typeof v === 'string' ? v : c.type('.distinctAttribute', 'a string', v)),
  proximityPrecision: (c, v) => c.oneOf('.proximityPrecision', v, ['byWord', 'byAttribute'] as const),
  typoTolerance,
  faceting,
  pagination,
  embedders: (_c, v) => validateEmbedders(v),
  searchCutoffMs: (c, v) => c.nat('.searchCutoffMs', v),
  localizedAttributes: localized,
  facetSearch: (c, v) => c.bool('.facetSearch', v),
  prefixSearch: (c, v) => c.oneOf('.prefixSearch', v, ['indexingTime', 'disabled'] as const),
  foreignKeys,
};

/** Validate a whole settings body (PATCH /settings). */
export function validateSettingsPatch(body: unknown): SettingsPatch {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new SearchError('bad_request', `Invalid value type: expected an object, but found ${describeValue(body)}`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (!(key in VALIDATORS)) {
      throw new SearchError('bad_request', `Unknown field \`${key}\`: expected one of ${SETTINGS_FIELDS.map((f) => `\`${f}\``).join(', ')}`);
    }
    out[key] = validateSetting(key as keyof Settings, value);
  }
  return out as SettingsPatch;
}

/** Validate the body of one settings sub-route (PUT/PATCH /settings/<name>). */
export function validateSetting<K extends keyof Settings>(key: K, value: unknown): Settings[K] | null {
  if (value === null) return null;
  return VALIDATORS[key](new Checker(CODES[key]), value) as Settings[K] | null;
}

export { applySettingsPatch } from './apply.js';
