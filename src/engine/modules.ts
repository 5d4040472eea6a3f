/**
 * The composition root of the engine: which extensions derive data from every index's documents,
 * how filters resolve, and how stored documents are presented. Order matters for `apply`: the
 * keyword postings, facets and geo points are plain functions of the documents; vectors come
 * last because their `prepare` step may call remote embedders.
 */
import type { IndexExtension } from './index/extension.js';
import type { DocumentPresenter, DocumentSorter, FilterResolver } from './index/index.js';
import { facetExtension } from './search/facets/extension.js';
import { resolveFilter } from './search/filter/resolve.js';
import { sortedDocumentsPage } from './search/sort/documents-order.js';
import { geoExtension } from './search/geo/extension.js';
import { keywordExtension } from './search/keyword/extension.js';
import { presentDocument, vectorsExtension } from './vector/extension.js';

export interface EngineModules {
  extensions: () => IndexExtension[];
  filter: FilterResolver;
  present: DocumentPresenter;
  sort: DocumentSorter;
}

export const defaultModules: EngineModules = {
  extensions: () => [keywordExtension, facetExtension, geoExtension, vectorsExtension],
  filter: resolveFilter,
  present: presentDocument,
  sort: sortedDocumentsPage,
};
