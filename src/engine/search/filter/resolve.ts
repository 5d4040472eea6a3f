/**
 * The engine's filter hook (`FilterResolver`): a filter in its wire form to the matching docids,
 * for searches (`invalid_search_filter`) and the documents routes (`invalid_document_filter`).
 */
import { featureNotEnabled } from '../../experimental-features.js';
import type { Index } from '../../index/index.js';
import type { Bitmap } from '../../index/store.js';
import { evaluateFilter } from './evaluate.js';
import { filterError, parseFilter, type FilterAst, type Token } from './parser.js';

export function resolveFilter(index: Index, filter: unknown, errorCode = 'invalid_search_filter'): Bitmap {
  const ast = parseFilter(filter, errorCode);
  if (!ast) return index.store.docids();
  if (index.features && !index.features.enabled('containsFilter')) refuseContains(ast);
  return evaluateFilter(index.store, ast, index.settings, { errorCode });
}

/** `CONTAINS` and `STARTS WITH` are experimental (the `containsFilter` flag): refuse them while it is off. */
function refuseContains(ast: FilterAst): void {
  const found = firstContains(ast);
  if (!found) return;
  const message = featureNotEnabled('containsFilter', 'Using `CONTAINS` in a filter').message;
  throw filterError('feature_not_enabled', message, found.field.source, found.field.start, found.value.end);
}

function firstContains(node: FilterAst): { field: Token; value: Token } | null {
  switch (node.type) {
    case 'and':
    case 'or':
      for (const child of node.children) {
        const found = firstContains(child);
        if (found) return found;
      }
      return null;
    case 'not':
      return firstContains(node.child);
    case 'condition':
      return node.condition.op === 'CONTAINS' || node.condition.op === 'STARTS WITH' ? { field: node.field, value: node.condition.value } : null;
    default:
      return null;
  }
}
