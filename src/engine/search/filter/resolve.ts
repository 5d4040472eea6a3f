/**
 * The engine's filter hook (`FilterResolver`): a filter in its wire form to the matching docids,
 * for searches (`invalid_search_filter`) and the documents routes (`invalid_document_filter`).
 */
import type { Index } from '../../index/index.js';
import type { Bitmap } from '../../index/store.js';
import { evaluateFilter } from './evaluate.js';
import { parseFilter } from './parser.js';

export function resolveFilter(index: Index, filter: unknown, errorCode = 'invalid_search_filter'): Bitmap {
  const ast = parseFilter(filter, errorCode);
  if (!ast) return index.store.docids();
  return evaluateFilter(index.store, ast, index.settings, { errorCode });
}
