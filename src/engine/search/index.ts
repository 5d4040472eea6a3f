/** Public entry points of the search module. */
export { search, keywordSearch, presentHit, type SearchResponse, type Hit, type KeywordResult } from './search.js';
export { parseSearchParams, searchQueryToBody, type SearchParams } from './params.js';
export { keywordExtension } from './keyword/extension.js';
export { multiSearch, type MultiSearchResponse, type FederatedResponse, type ResolveIndex, type SearchOne } from './multi-search.js';
