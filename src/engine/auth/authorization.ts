/**
 * What one authenticated request may see: the indexes of its API key, narrowed further by the
 * search rules of a tenant token, and the filter those rules add to every search.
 *
 * Routes that list things (`GET /indexes`, `/tasks`, `/stats`, multi-search) consult it so that a
 * key scoped to `products*` never learns that `secrets` exists.
 */
import { anyPatternMatches, matchesAll, mostSpecificPattern } from './index-pattern.js';
import { rulePatterns, type Filter, type SearchRules } from './tenant-token.js';

export interface AuthorizationInit {
  /** Index patterns of the API key; null for the master key or an unprotected instance. */
  keyIndexes: string[] | null;
  /** Search rules of a tenant token; null for a plain key. */
  searchRules: SearchRules | null;
  /** Whether the key may create indexes (`indexes.create`), e.g. implicitly by adding documents. */
  canCreateIndexes: boolean;
  /** The uid of the key used (or that signed the tenant token); null for the master key. */
  keyUid: string | null;
}

export class Authorization {
  constructor(private readonly init: AuthorizationInit) {}

  /** Everything allowed: master key, or no master key configured. */
  static full(): Authorization {
    return new Authorization({ keyIndexes: null, searchRules: null, canCreateIndexes: true, keyUid: null });
  }

  get keyUid(): string | null {
    return this.init.keyUid;
  }

  get isTenantToken(): boolean {
    return this.init.searchRules !== null;
  }

  /** Whether the API key itself (ignoring tenant rules) covers `indexUid`. */
  keyCoversIndex(indexUid: string): boolean {
    const { keyIndexes } = this.init;
    return keyIndexes === null || anyPatternMatches(keyIndexes, indexUid);
  }

  /** Whether the tenant token's rules (if any) cover `indexUid`. */
  tokenCoversIndex(indexUid: string): boolean {
    const { searchRules } = this.init;
    return searchRules === null || anyPatternMatches(rulePatterns(searchRules), indexUid);
  }

  /** Whether this request may touch `indexUid` at all. */
  canAccessIndex(indexUid: string): boolean {
    return this.keyCoversIndex(indexUid) && this.tokenCoversIndex(indexUid);
  }

  /** Whether every index, present and future, is visible (decides on tasks without an index). */
  allIndexesAuthorized(): boolean {
    const { keyIndexes, searchRules } = this.init;
    const keyAll = keyIndexes === null || keyIndexes.some(matchesAll);
    const tokenAll = searchRules === null || rulePatterns(searchRules).some(matchesAll);
    return keyAll && tokenAll;
  }

  /** Whether adding documents may create `indexUid` when it does not exist yet. */
  canCreateIndex(indexUid: string): boolean {
    return this.init.canCreateIndexes && this.canAccessIndex(indexUid);
  }

  /** Keep only the items whose index this request may see. */
  filterIndexes<T>(items: readonly T[], uidOf: (item: T) => string): T[] {
    if (this.allIndexesAuthorized()) return [...items];
    return items.filter((item) => this.canAccessIndex(uidOf(item)));
  }

  /**
   * Whether a task is visible: a task on one index follows that index; an index swap needs every
   * swapped index; a task on no index (dump, task deletion...) needs access to all indexes.
   */
  canSeeTask(task: { indexUid: string | null; type?: string; details?: Record<string, unknown> | null }): boolean {
    if (task.indexUid !== null) return this.canAccessIndex(task.indexUid);
    if (task.type === 'indexSwap') {
      const swaps = (task.details?.swaps as Array<{ indexes?: string[] }> | undefined) ?? [];
      return swaps.every((s) => (s.indexes ?? []).every((uid) => this.canAccessIndex(uid)));
    }
    return this.allIndexesAuthorized();
  }

  /**
   * The filter a tenant token forces on searches in `indexUid`: the rule of the most specific
   * matching pattern (exact uid over prefix, longer prefix over shorter); null when none.
   */
  searchFilterFor(indexUid: string): Filter | null {
    const { searchRules } = this.init;
    if (searchRules === null || Array.isArray(searchRules)) return null;
    const pattern = mostSpecificPattern(Object.keys(searchRules), indexUid);
    if (pattern === undefined) return null;
    return searchRules[pattern]?.filter ?? null;
  }

  /**
   * The filter to search `indexUid` with: the query's own filter AND-ed with the tenant rule.
   * Both sides become lists of AND-ed conditions (a string is one condition; an inner array is an
   * OR group), so concatenating them keeps each side's meaning exactly.
   */
  applySearchRules(indexUid: string, queryFilter: Filter | null | undefined): Filter | null | undefined {
    const rule = this.searchFilterFor(indexUid);
    if (rule === null) return queryFilter;
    if (queryFilter === null || queryFilter === undefined || queryFilter === '' || (Array.isArray(queryFilter) && queryFilter.length === 0))
      return rule;
    return [...asConditions(queryFilter), ...asConditions(rule)];
  }
}

function asConditions(filter: Filter): Array<string | string[]> {
  // Anything else is an invalid filter the search will reject; it still travels with the rule
  // (never instead of it), so a malformed query can never drop the tenant's restriction.
  return Array.isArray(filter) ? filter : [filter];
}
