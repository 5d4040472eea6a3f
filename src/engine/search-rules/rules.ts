/**
 * Dynamic search rules (the reference's `dynamicSearchRules` experimental feature, `PATCH
 * /dynamic-search-rules/:uid`): instance-wide rules that, when their conditions hold for a
 * search, pin chosen documents at fixed positions of its results and scale the ranking of others
 * (applied by apply.ts; the filter condition is read by filter-condition.ts).
 *
 * A rule, as the reference shapes it since 1.50:
 *
 *   { uid, description?, precedence?, active, lastUpdatedAt,
 *     conditions: { query?: { isEmpty?, words? }, time?: { start?, end? }, filter?: { values } },
 *     actions: { pin?: [{ indexUid?, id, position }], scale?: [{ indexUid?, ids?, filter?, weight }] } }
 *
 * Rules live in the task store's environment (one write transaction with the task that changes
 * them; snapshots carry them; dumps carry them in `dynamic-search-rules.jsonl`).
 */
import type { Database, RootDatabase } from 'lmdb';
import { SearchError } from '../errors.js';
import { parseFilter } from '../search/filter/parser.js';
import { filterConditionHolds, type FilterBranches } from './filter-condition.js';

export interface PinAction {
  indexUid?: string;
  id: string;
  position: number;
}

export interface ScaleAction {
  indexUid?: string;
  ids?: string[];
  filter?: unknown;
  weight: number;
}

/** A facet value a rule's filter condition names (see filter-condition.ts). */
export type FacetValue = string | number | boolean;

export interface RuleConditions {
  query?: { isEmpty?: boolean; words?: string };
  time?: { start?: string; end?: string };
  /** Active when one branch of the search's filter resolves each of these facets to its value. */
  filter?: { values: Record<string, FacetValue> };
}

export interface DynamicSearchRule {
  uid: string;
  description?: string;
  precedence?: number;
  active: boolean;
  conditions: RuleConditions;
  actions: { pin?: PinAction[]; scale?: ScaleAction[] };
  lastUpdatedAt: string;
}

/** A PATCH body, checked: an absent field keeps its value, `null` resets it. */
export type RuleUpdate = Partial<Record<'description' | 'precedence' | 'active' | 'conditions' | 'actions', unknown>>;

const UID = /^[a-zA-Z0-9_-]{1,400}$/;
/** The reference keeps its own bookkeeping under this uid. */
const RESERVED_UID = '__meilisearch_dsr_metadata';

export function ruleNotFound(uid: string): SearchError {
  return new SearchError('dynamic_search_rule_not_found', `Dynamic search rule \`${uid}\` not found.`);
}

export function validateRuleUid(uid: string): void {
  if (uid === RESERVED_UID) throw new SearchError('invalid_dynamic_search_rule_uid', `\`${uid}\` is reserved and cannot be used as a rule uid. Use a different uid.`);
  if (!UID.test(uid))
    throw new SearchError(
      'invalid_dynamic_search_rule_uid',
      `\`${uid}\` is not a valid dynamic search rule uid. A rule uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 400 bytes.`,
    );
}

// --- checking a PATCH body ------------------------------------------------------------------------

const FIELDS = ['description', 'precedence', 'active', 'conditions', 'actions'];

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v === 'string' ? 'a string' : typeof v === 'number' ? 'a number' : 'a boolean');
const bad = (field: string, code: string, message: string) => new SearchError(code, `Invalid value at \`${field}\`: ${message}`);
const expected = (field: string, code: string, what: string, value: unknown) =>
  bad(field, code, `expected ${what}, but found ${kind(value)}: \`${JSON.stringify(value)}\``);

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function onlyFields(value: Record<string, unknown>, fields: string[], at: string, code: string): void {
  for (const key of Object.keys(value))
    if (!fields.includes(key)) throw new SearchError(code, `Unknown field \`${key}\`${at ? ` inside \`${at}\`` : ''}: expected one of ${fields.map((f) => `\`${f}\``).join(', ')}`);
}

export function parseRuleUpdate(body: unknown): RuleUpdate {
  if (!isObject(body)) throw new SearchError('bad_request', `Invalid value type: expected an object, but found ${kind(body)}: \`${JSON.stringify(body)}\``);
  onlyFields(body, FIELDS, '', 'bad_request');
  const out: RuleUpdate = {};
  if ('description' in body) {
    const v = body.description;
    if (v !== null && typeof v !== 'string') throw expected('.description', 'invalid_dynamic_search_rule_description', 'a string', v);
    out.description = v;
  }
  if ('precedence' in body) {
    const v = body.precedence;
    if (v !== null && !(typeof v === 'number' && Number.isInteger(v) && v >= 0)) throw expected('.precedence', 'invalid_dynamic_search_rule_precedence', 'a positive integer', v);
    out.precedence = v;
  }
  if ('active' in body) {
    const v = body.active;
    if (v !== null && typeof v !== 'boolean') throw expected('.active', 'invalid_dynamic_search_rule_active', 'a boolean', v);
    out.active = v;
  }
  if ('conditions' in body) out.conditions = body.conditions === null ? null : parseConditions(body.conditions);
  if ('actions' in body) out.actions = body.actions === null ? null : parseActions(body.actions);
  return out;
}

function parseConditions(value: unknown): RuleConditions {
  const code = 'invalid_dynamic_search_rule_conditions';
  if (!isObject(value)) throw expected('.conditions', code, 'an object', value);
  onlyFields(value, ['query', 'time', 'filter'], 'conditions', code);
  const out: RuleConditions = {};
  if (value.query !== undefined && value.query !== null) {
    const q = value.query;
    if (!isObject(q)) throw expected('.conditions.query', code, 'an object', q);
    onlyFields(q, ['isEmpty', 'words'], 'conditions.query', code);
    const query: RuleConditions['query'] = {};
    if (q.isEmpty !== undefined && q.isEmpty !== null) {
      if (typeof q.isEmpty !== 'boolean') throw expected('.conditions.query.isEmpty', code, 'a boolean', q.isEmpty);
      query.isEmpty = q.isEmpty;
    }
    if (q.words !== undefined && q.words !== null) {
      if (typeof q.words !== 'string') throw expected('.conditions.query.words', code, 'a string', q.words);
      query.words = q.words;
    }
    if (query.isEmpty === true && query.words !== undefined)
      throw bad('.conditions.query', code, '`isEmpty: true` cannot be combined with `words`: an empty query has no words');
    out.query = query;
  }
  if (value.time !== undefined && value.time !== null) {
    const t = value.time;
    if (!isObject(t)) throw expected('.conditions.time', code, 'an object', t);
    onlyFields(t, ['start', 'end'], 'conditions.time', code);
    const time: RuleConditions['time'] = {};
    for (const edge of ['start', 'end'] as const) {
      const v = t[edge];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(v) || Number.isNaN(Date.parse(v)))
        throw bad(`.conditions.time.${edge}`, code, `\`${JSON.stringify(v)}\` is not an RFC 3339 date`);
      time[edge] = v;
    }
    if (time.start && time.end && Date.parse(time.start) > Date.parse(time.end)) throw bad('.conditions.time', code, '`start` is after `end`');
    out.time = time;
  }
  if (value.filter !== undefined && value.filter !== null) {
    const f = value.filter;
    if (!isObject(f)) throw expected('.conditions.filter', code, 'an object', f);
    onlyFields(f, ['values'], 'conditions.filter', code);
    if (!isObject(f.values)) throw expected('.conditions.filter.values', code, 'an object', f.values ?? null);
    const values: Record<string, FacetValue> = {};
    for (const [field, v] of Object.entries(f.values)) {
      if (field === '') throw bad('.conditions.filter.values', code, 'a facet name cannot be empty');
      if (!(typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))))
        throw expected(`.conditions.filter.values.${field}`, code, 'a string, a number or a boolean', v);
      values[field] = v;
    }
    if (Object.keys(values).length > 0) out.filter = { values };
  }
  return out;
}

function parseActions(value: unknown): DynamicSearchRule['actions'] {
  const code = 'invalid_dynamic_search_rule_actions';
  if (!isObject(value)) throw expected('.actions', code, 'an object', value);
  onlyFields(value, ['pin', 'scale'], 'actions', code);
  const out: DynamicSearchRule['actions'] = {};
  if (value.pin !== undefined && value.pin !== null) {
    if (!Array.isArray(value.pin)) throw expected('.actions.pin', code, 'an array', value.pin);
    out.pin = value.pin.map((p, i) => {
      const at = `.actions.pin[${i}]`;
      if (!isObject(p)) throw expected(at, code, 'an object', p);
      onlyFields(p, ['indexUid', 'id', 'position'], `actions.pin[${i}]`, code);
      if (typeof p.id !== 'string' && !(typeof p.id === 'number' && Number.isInteger(p.id))) throw expected(`${at}.id`, code, 'a string', p.id ?? null);
      if (!(typeof p.position === 'number' && Number.isInteger(p.position) && p.position >= 0)) throw expected(`${at}.position`, code, 'a positive integer', p.position ?? null);
      if (p.indexUid !== undefined && p.indexUid !== null && typeof p.indexUid !== 'string') throw expected(`${at}.indexUid`, code, 'a string', p.indexUid);
      return { ...(typeof p.indexUid === 'string' ? { indexUid: p.indexUid } : {}), id: String(p.id), position: p.position };
    });
  }
  if (value.scale !== undefined && value.scale !== null) {
    if (!Array.isArray(value.scale)) throw expected('.actions.scale', code, 'an array', value.scale);
    out.scale = value.scale.map((s, i) => {
      const at = `.actions.scale[${i}]`;
      if (!isObject(s)) throw expected(at, code, 'an object', s);
      onlyFields(s, ['indexUid', 'ids', 'filter', 'weight'], `actions.scale[${i}]`, code);
      if (typeof s.weight !== 'number' || !Number.isFinite(s.weight) || s.weight < 0) throw expected(`${at}.weight`, code, 'a positive number', s.weight ?? null);
      const ids = s.ids === undefined || s.ids === null ? undefined : s.ids;
      if (ids !== undefined && !(Array.isArray(ids) && ids.every((id) => typeof id === 'string'))) throw expected(`${at}.ids`, code, 'an array of strings', ids);
      // the filter is checked now, as the reference does; whether its attributes are filterable is
      // a matter of each searched index (an action whose filter an index cannot evaluate selects nothing there)
      let emptyFilter = s.filter === undefined || s.filter === null;
      if (!emptyFilter) {
        try {
          emptyFilter = parseFilter(s.filter, code) === null;
        } catch (error) {
          throw new SearchError(code, `invalid \`.actions.scale[${i}].filter\`: ${(error as Error).message}`);
        }
      }
      if (emptyFilter && (!ids || ids.length === 0)) throw new SearchError(code, `invalid \`.actions.scale[${i}]\`: one of \`filter\` or \`ids\` must be a non-empty valid value.`);
      return {
        ...(typeof s.indexUid === 'string' ? { indexUid: s.indexUid } : {}),
        ...(ids ? { ids: ids as string[] } : {}),
        ...(emptyFilter ? {} : { filter: s.filter }),
        weight: s.weight,
      };
    });
  }
  return out;
}

/** The rule after a PATCH: a new rule is active unless the update says otherwise. */
export function applyRuleUpdate(uid: string, current: DynamicSearchRule | undefined, update: RuleUpdate, now: string): DynamicSearchRule {
  const rule: DynamicSearchRule = current ? structuredClone(current) : { uid, active: true, conditions: {}, actions: {}, lastUpdatedAt: now };
  if ('description' in update) {
    if (update.description === null) delete rule.description;
    else rule.description = update.description as string;
  }
  if ('precedence' in update) {
    if (update.precedence === null) delete rule.precedence;
    else rule.precedence = update.precedence as number;
  }
  if ('active' in update) rule.active = update.active === null ? true : (update.active as boolean);
  if ('conditions' in update) rule.conditions = (update.conditions as RuleConditions | null) ?? {};
  if ('actions' in update) rule.actions = (update.actions as DynamicSearchRule['actions'] | null) ?? {};
  rule.lastUpdatedAt = now;
  return rule;
}

// --- storage --------------------------------------------------------------------------------------

export class SearchRuleStore {
  private readonly db: Database<DynamicSearchRule, string>;

  constructor(private readonly env: RootDatabase) {
    this.db = env.openDB({ name: 'dynamic-search-rules', encoding: 'msgpack' });
  }

  get(uid: string): DynamicSearchRule | undefined {
    return this.db.get(uid);
  }

  all(): DynamicSearchRule[] {
    return [...this.db.getRange()].map((e) => e.value);
  }

  /** Whether there is no rule, as last read (null: read again); see `isEmpty`. */
  private emptyKnown: boolean | null = null;

  /**
   * Asked by every search: remembered until this store writes or `forget` is called (another
   * thread committed), where a cursor step per search was 2.5% of a `star wars` search.
   */
  isEmpty(): boolean {
    return (this.emptyKnown ??= this.db.getKeysCount({ limit: 1 }) === 0);
  }

  /** Another thread committed: read `isEmpty` again. */
  forget(): void {
    this.emptyKnown = null;
  }

  /** Inside a write transaction of the task store's environment. */
  putSync(rule: DynamicSearchRule): void {
    this.emptyKnown = null;
    this.db.putSync(rule.uid, rule);
  }

  removeSync(uid: string): boolean {
    this.emptyKnown = null;
    return this.db.removeSync(uid);
  }

  clearSync(): number {
    this.emptyKnown = null;
    let n = 0;
    for (const key of this.db.getKeys()) if (this.db.removeSync(key)) n++;
    return n;
  }

  /** Replace every rule (dump import). */
  replace(rules: DynamicSearchRule[]): void {
    this.env.transactionSync(() => {
      this.clearSync();
      for (const rule of rules) this.putSync(rule);
    });
  }
}

// --- listing --------------------------------------------------------------------------------------

export interface RuleListQuery {
  offset: number;
  limit: number;
  query?: string;
  active?: boolean;
}

export function parseRuleListQuery(body: unknown): RuleListQuery {
  const value = body === undefined || body === null ? {} : body;
  if (!isObject(value)) throw new SearchError('bad_request', `Invalid value type: expected an object, but found ${kind(value)}: \`${JSON.stringify(value)}\``);
  onlyFields(value, ['offset', 'limit', 'filter'], '', 'bad_request');
  const nat = (name: 'offset' | 'limit', fallback: number) => {
    const v = value[name];
    if (v === undefined) return fallback;
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= 0)) throw expected(`.${name}`, `invalid_dynamic_search_rule_${name}`, 'a positive integer', v);
    return v;
  };
  const out: RuleListQuery = { offset: nat('offset', 0), limit: nat('limit', 20) };
  const filter = value.filter;
  if (filter !== undefined && filter !== null) {
    if (!isObject(filter)) throw expected('.filter', 'invalid_dynamic_search_rule_filter', 'an object', filter);
    onlyFields(filter, ['query', 'active'], 'filter', 'invalid_dynamic_search_rule_filter');
    if (filter.query !== undefined && filter.query !== null) {
      if (typeof filter.query !== 'string') throw expected('.filter.query', 'invalid_dynamic_search_rule_filter_query', 'a string', filter.query);
      out.query = filter.query;
    }
    if (filter.active !== undefined && filter.active !== null) {
      if (typeof filter.active !== 'boolean') throw expected('.filter.active', 'invalid_dynamic_search_rule_filter_active', 'a boolean', filter.active);
      out.active = filter.active;
    }
  }
  return out;
}

/**
 * Most recently updated first, as the reference lists them. `query` keeps the rules whose
 * description or query words contain every word of it (case-insensitively).
 */
export function listRules(rules: DynamicSearchRule[], q: RuleListQuery, words: (text: string) => string[]) {
  const wanted = q.query ? words(q.query) : [];
  const matching = rules
    .filter((r) => q.active === undefined || r.active === q.active)
    .filter((r) => {
      if (wanted.length === 0) return true;
      const have = new Set(words(`${r.description ?? ''} ${r.conditions.query?.words ?? ''}`));
      return wanted.every((w) => have.has(w));
    })
    .sort((a, b) => (a.lastUpdatedAt < b.lastUpdatedAt ? 1 : a.lastUpdatedAt > b.lastUpdatedAt ? -1 : a.uid.localeCompare(b.uid)));
  return { results: matching.slice(q.offset, q.offset + q.limit), offset: q.offset, limit: q.limit, total: matching.length };
}

// --- at search time -------------------------------------------------------------------------------

export interface Pin {
  /** The document's primary key value. */
  id: string;
  position: number;
}

/** A scale action of an active rule, for one index: the documents it selects and their weight. */
export interface Scale {
  ids?: string[];
  filter?: unknown;
  weight: number;
}

/** What the active rules do to one search. */
export interface RuleEffects {
  pins: Pin[];
  scales: Scale[];
}

/** What a search brings to the rules' conditions. */
export interface SearchFacts {
  indexUid: string;
  queryWords: readonly string[];
  /** The search's filter, parsed (null: none); see filter-condition.ts. */
  filter: FilterBranches;
  now: number;
}

/** Most rules' actions one search applies, as the reference bounds them (its "fuel"). */
const MAX_ACTIVE_RULES = 100;

/**
 * The effects of the rules active for a search: rules by ascending precedence (rules without one
 * last), each document pinned once, by the first rule that pins it; every scale action of every
 * active rule (their weights multiply where they overlap).
 */
export function activeEffects(rules: DynamicSearchRule[], facts: SearchFacts, words: (text: string) => string[]): RuleEffects {
  const present = new Set(facts.queryWords);
  const active = rules.filter((rule) => {
    if (!rule.active) return false;
    const { query, time, filter } = rule.conditions;
    if (time?.start && Date.parse(time.start) > facts.now) return false;
    if (time?.end && Date.parse(time.end) < facts.now) return false;
    if (query?.isEmpty === true && present.size > 0) return false;
    if (query?.isEmpty === false && present.size === 0) return false;
    if (query?.words !== undefined && !words(query.words).every((w) => present.has(w))) return false;
    if (filter && !filterConditionHolds(filter.values, facts.filter)) return false;
    return true;
  });
  active.sort((a, b) => (a.precedence ?? Number.MAX_SAFE_INTEGER) - (b.precedence ?? Number.MAX_SAFE_INTEGER) || a.uid.localeCompare(b.uid));
  const seen = new Set<string>();
  const pins: Pin[] = [];
  const scales: Scale[] = [];
  for (const rule of active.slice(0, MAX_ACTIVE_RULES)) {
    for (const pin of rule.actions.pin ?? []) {
      if (pin.indexUid !== undefined && pin.indexUid !== facts.indexUid) continue;
      if (seen.has(pin.id)) continue;
      seen.add(pin.id);
      pins.push({ id: pin.id, position: pin.position });
    }
    for (const scale of rule.actions.scale ?? []) {
      if (scale.indexUid !== undefined && scale.indexUid !== facts.indexUid) continue;
      scales.push({ ...(scale.ids ? { ids: scale.ids } : {}), ...(scale.filter !== undefined ? { filter: scale.filter } : {}), weight: scale.weight });
    }
  }
  return { pins, scales };
}

/**
 * The ranked list with the pinned documents at their positions (by position; at equal
 * positions in precedence order). A pinned document leaves its organic place; one pinned past
 * the end comes last.
 */
export function placePins<T>(organic: T[], pinned: Array<{ hit: T; position: number }>): T[] {
  const pins = pinned.map((p, order) => ({ ...p, order })).sort((a, b) => a.position - b.position || a.order - b.order);
  const out: T[] = [];
  let next = 0;
  for (const hit of organic) {
    while (next < pins.length && pins[next]!.position <= out.length) out.push(pins[next++]!.hit);
    out.push(hit);
  }
  while (next < pins.length) out.push(pins[next++]!.hit);
  return out;
}
