/**
 * A rule's filter condition (`conditions.filter: { values: { color: "red", ... } }`), as the
 * reference evaluates it: the search's filter, read as alternatives (its disjunctive form), must
 * have one branch whose constraints on each named facet all hold for the rule's value. `color =
 * red AND size > 3` activates `{color: "red"}`; `(category = shirt AND color = red) OR (category
 * = jeans AND color = blue)` activates `{category: "jeans", color: "blue"}` but not `{category:
 * "shirt", color: "blue"}`; no filter activates no rule with a filter condition.
 *
 * As in the reference, `IS NULL`, `IS EMPTY`, `CONTAINS`, `STARTS WITH` and geo constraints are
 * never satisfied by a rule value, `EXISTS` always is; a filter with too many alternatives to
 * expand activates none of these rules rather than some of them.
 */
import { asNumber } from '../search/filter/evaluate.js';
import type { Condition, FilterAst } from '../search/filter/parser.js';
import { normalizeFacet } from '../search/facets/extract.js';
import type { FacetValue } from './rules.js';

/** One constraint on a facet, possibly negated. */
export interface Constraint {
  positive: boolean;
  test: (value: FacetValue) => boolean;
}

/** A branch: each constrained facet with its constraints (all must hold). */
export type Branch = Map<string, Constraint[]>;

/** The search filter's alternatives; null when the search has no filter (or one too large to expand). */
export type FilterBranches = Branch[] | null;

/** The expansion is bounded: past this many branches the filter is treated as too large. */
const MAX_BRANCHES = 256;

class TooLarge extends Error {}

export function filterBranches(ast: FilterAst | null): FilterBranches {
  if (!ast) return null;
  try {
    return expand(ast, true);
  } catch (error) {
    if (error instanceof TooLarge) return null;
    throw error;
  }
}

/** Disjunctive form of `ast` (negated when `positive` is false), as branches of constraints. */
function expand(ast: FilterAst, positive: boolean): Branch[] {
  switch (ast.type) {
    case 'not':
      return expand(ast.child, !positive);
    case 'and':
    case 'or': {
      const conjunction = (ast.type === 'and') === positive;
      const parts = ast.children.map((child) => expand(child, positive));
      return conjunction ? parts.reduce(product, [new Map()]) : bounded(parts.flat());
    }
    case 'condition':
      return [leaf(ast.field.value, { positive, test: conditionTest(ast.condition) })];
    case 'in': {
      const values = ast.values.map((v) => v.value);
      return [leaf(ast.field.value, { positive, test: (value) => values.some((v) => equals(value, v)) })];
    }
    default:
      // geo constraints name no facet a rule can hold: they leave the branch's facets as they are
      return [new Map()];
  }
}

function leaf(field: string, constraint: Constraint): Branch {
  return new Map([[field, [constraint]]]);
}

function product(left: Branch[], right: Branch[]): Branch[] {
  const out: Branch[] = [];
  for (const a of left)
    for (const b of right) {
      const merged: Branch = new Map(a);
      for (const [field, constraints] of b) merged.set(field, [...(merged.get(field) ?? []), ...constraints]);
      out.push(merged);
    }
  return bounded(out);
}

function bounded(branches: Branch[]): Branch[] {
  if (branches.length > MAX_BRANCHES) throw new TooLarge();
  return branches;
}

function numberOf(value: FacetValue): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return asNumber(value);
  return null;
}

function textOf(value: FacetValue): string {
  return normalizeFacet(String(value));
}

/** `=` as the filter evaluates it: the number facet when the value reads as a number, else the normalized string. */
function equals(value: FacetValue, written: string): boolean {
  const n = asNumber(written);
  const v = numberOf(value);
  if (n !== null && v !== null && n === v) return true;
  return textOf(value) === normalizeFacet(written);
}

function compare(value: FacetValue, written: string): number | null {
  const n = asNumber(written);
  const v = numberOf(value);
  if (n !== null && v !== null) return v - n;
  if (typeof value === 'string' && n === null) {
    const a = textOf(value);
    const b = normalizeFacet(written);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  return null;
}

function conditionTest(condition: Condition): (value: FacetValue) => boolean {
  switch (condition.op) {
    case '=':
      return (value) => equals(value, condition.value.value);
    case '!=':
      return (value) => !equals(value, condition.value.value);
    case '>':
    case '>=':
    case '<':
    case '<=': {
      const op = condition.op;
      return (value) => {
        const c = compare(value, condition.value.value);
        if (c === null) return false;
        return op === '>' ? c > 0 : op === '>=' ? c >= 0 : op === '<' ? c < 0 : c <= 0;
      };
    }
    case 'TO':
      return (value) => {
        const low = compare(value, condition.from.value);
        const high = compare(value, condition.to.value);
        return low !== null && high !== null && low >= 0 && high <= 0;
      };
    case 'EXISTS':
      return () => true;
    default:
      // IS NULL, IS EMPTY, CONTAINS, STARTS WITH: never satisfied by a rule value
      return () => false;
  }
}

/** Whether the rule's `values` hold in one branch of the search's filter. */
export function filterConditionHolds(values: Record<string, FacetValue>, branches: FilterBranches): boolean {
  const fields = Object.entries(values);
  if (fields.length === 0) return true;
  if (!branches) return false;
  return branches.some((branch) =>
    fields.every(([field, value]) => {
      const constraints = branch.get(field);
      return constraints !== undefined && constraints.every((c) => c.test(value) === c.positive);
    }),
  );
}
