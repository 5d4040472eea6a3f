/**
 * Which document fields are faceted, and with which features.
 *
 * `filterableAttributes` entries are either a plain attribute name (legacy form: every feature on)
 * or a rule `{attributePatterns, features}`. Patterns may use `*` at either end (`doggos.*`,
 * `*_at`, `*`), and naming an object field (`doggos`) covers its nested fields (`doggos.age`).
 * The first rule that matches a field decides its features, as in the reference.
 */
import type { FilterableAttributeRule, Settings } from '../../settings/types.js';

export interface FacetFeatures {
  facetSearch: boolean;
  equality: boolean;
  comparison: boolean;
}

/** `pattern` covers `field`: equal, a parent object of it, or a `*` glob matching it. */
export function matchesPattern(pattern: string, field: string): boolean {
  if (pattern === '*' || pattern === field) return true;
  if (field.startsWith(pattern + '.')) return true;
  if (!pattern.includes('*')) return false;
  const starts = pattern.startsWith('*');
  const ends = pattern.endsWith('*');
  const core = pattern.slice(starts ? 1 : 0, ends ? -1 : undefined);
  if (core.includes('*')) return false; // only leading/trailing wildcards are meaningful
  if (starts && ends) return field.includes(core);
  if (starts) return field.endsWith(core) || field.includes(core + '.');
  return field.startsWith(core);
}

function ruleOf(entry: string | FilterableAttributeRule): { patterns: string[]; features: FacetFeatures } {
  if (typeof entry === 'string') {
    return { patterns: [entry], features: { facetSearch: true, equality: true, comparison: true } };
  }
  const f = entry.features ?? ({} as Partial<FilterableAttributeRule['features']>);
  return {
    patterns: entry.attributePatterns ?? [],
    features: {
      facetSearch: f.facetSearch ?? false,
      equality: f.filter?.equality ?? true,
      comparison: f.filter?.comparison ?? false,
    },
  };
}

/** Features of the first filterable rule matching `field`, with the rule's index; null when none. */
export function filterFeatures(settings: Settings, field: string): (FacetFeatures & { rule: number }) | null {
  const rules = settings.filterableAttributes ?? [];
  for (let i = 0; i < rules.length; i++) {
    const rule = ruleOf(rules[i]!);
    if (rule.patterns.some((p) => matchesPattern(p, field))) return { ...rule.features, rule: i };
  }
  return null;
}

/** True when the field can be used in a filter (equality or comparison enabled). */
export function isFilterable(settings: Settings, field: string): boolean {
  const f = filterFeatures(settings, field);
  return !!f && (f.equality || f.comparison);
}

export function isFacetSearchable(settings: Settings, field: string): boolean {
  return !!filterFeatures(settings, field)?.facetSearch;
}

/** Patterns of the rules for which `keep` holds, for error messages; sorted like the reference. */
export function filterablePatterns(settings: Settings, keep: (f: FacetFeatures) => boolean = (f) => f.equality || f.comparison): string[] {
  const out = new Set<string>();
  for (const entry of settings.filterableAttributes ?? []) {
    const rule = ruleOf(entry);
    if (keep(rule.features)) rule.patterns.forEach((p) => out.add(p));
  }
  return [...out].sort();
}

export function isSortable(settings: Settings, field: string): boolean {
  return (settings.sortableAttributes ?? []).some((p) => p === field || field.startsWith(p + '.') || matchesPattern(p, field));
}

/** Fields of custom `field:asc|desc` ranking rules: they rank by facet values, as sort does. */
export function rankingRuleFields(settings: Settings): string[] {
  const out: string[] = [];
  for (const rule of settings.rankingRules ?? []) {
    const m = /^(.+):(asc|desc)$/.exec(rule);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** The part of the settings that decides what the facet extension stores. */
export function facetConfigKey(settings: Settings): string {
  return JSON.stringify([
    settings.filterableAttributes ?? [],
    settings.sortableAttributes ?? [],
    settings.distinctAttribute ?? null,
    rankingRuleFields(settings),
  ]);
}

/** A predicate telling whether a document field path is stored in the facet databases. */
export function facetedFieldPredicate(settings: Settings): (field: string) => boolean {
  const patterns: string[] = [];
  for (const entry of settings.filterableAttributes ?? []) patterns.push(...ruleOf(entry).patterns);
  patterns.push(...(settings.sortableAttributes ?? []));
  patterns.push(...rankingRuleFields(settings));
  if (settings.distinctAttribute) patterns.push(settings.distinctAttribute);
  const cache = new Map<string, boolean>();
  return (field) => {
    if (field === '_geo' || field.startsWith('_geo.')) return false; // owned by the geo extension
    let hit = cache.get(field);
    if (hit === undefined) {
      hit = patterns.some((p) => matchesPattern(p, field));
      cache.set(field, hit);
    }
    return hit;
  };
}

/** True when `_geo` points must be indexed: `_geo` is filterable or sortable. */
export function geoEnabled(settings: Settings): boolean {
  const patterns: string[] = [];
  for (const entry of settings.filterableAttributes ?? []) patterns.push(...ruleOf(entry).patterns);
  patterns.push(...(settings.sortableAttributes ?? []));
  return patterns.some((p) => p === '_geo' || p === '*');
}
