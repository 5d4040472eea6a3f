/**
 * The whole `POST /indexes/:uid/facet-search` request on an index: validate the body, restrict
 * the documents with `q` (keyword search) and `filter`, then search the facet values among them.
 */
import { SearchError } from '../../errors.js';
import type { Index } from '../../index/index.js';
import { parseSearchParams } from '../params.js';
import { keywordSearch } from '../search.js';
import { facetSearch, validateFacetSearch, type FacetSearchResult } from './facet-search.js';

export const FACET_SEARCH_FIELDS = [
  'facetQuery',
  'facetName',
  'q',
  'filter',
  'matchingStrategy',
  'attributesToSearchOn',
  'rankingScoreThreshold',
  'locales',
  'exhaustiveFacetCount',
  'hybrid',
  'vector',
] as const;

/** Fields handed to the keyword search to compute the candidate documents. */
const SEARCH_PART = ['q', 'filter', 'matchingStrategy', 'attributesToSearchOn', 'rankingScoreThreshold', 'locales'];

export function facetSearchRequest(index: Index, body: unknown): FacetSearchResult {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new SearchError('bad_request', `Invalid value type: expected an object, but found ${JSON.stringify(body)}`);
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!(FACET_SEARCH_FIELDS as readonly string[]).includes(key)) {
      throw new SearchError('bad_request', `Unknown field \`${key}\`: expected one of ${FACET_SEARCH_FIELDS.map((f) => `\`${f}\``).join(', ')}`);
    }
  }
  if (b.exhaustiveFacetCount !== undefined && b.exhaustiveFacetCount !== null && typeof b.exhaustiveFacetCount !== 'boolean') {
    throw new SearchError(
      'invalid_facet_search_exhaustive_facet_count',
      `Invalid value type at \`.exhaustiveFacetCount\`: expected a boolean, but found ${JSON.stringify(b.exhaustiveFacetCount)}`,
    );
  }
  const settings = index.settings;
  // Validate the facet part first: a wrong facet name is the most useful error to report.
  validateFacetSearch(settings, b);
  const searchPart = Object.fromEntries(SEARCH_PART.filter((k) => b[k] !== undefined).map((k) => [k, b[k]]));
  const params = parseSearchParams(searchPart);
  const candidates = keywordSearch(index, params, 0).candidates;
  return facetSearch(index.store, settings, { facetName: b.facetName, facetQuery: b.facetQuery }, candidates);
}
