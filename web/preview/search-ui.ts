/**
 * The search interface of one index, built on InstantSearch.js with instant-meilisearch as its
 * search client, so that the page talks to the server exactly as a user's own search UI would.
 * The facet lists come from the index's filterable attributes; the semanticRatio slider appears
 * when the index has an embedder that can embed the query text.
 */
import instantsearch from 'instantsearch.js';
import type { InstantSearch } from 'instantsearch.js';
import { configure, hits, pagination, panel, refinementList, searchBox, stats } from 'instantsearch.js/es/widgets/index.js';
import { instantMeiliSearch } from '@meilisearch/instant-meilisearch';
import type { Api, IndexSettings } from './api.js';
import { openDocument } from './document-view.js';
import { renderHit } from './hit-view.js';

/** Words kept around the matches in cropped fields. */
const CROP_LENGTH = 24;
const FACET_LISTS_MAX = 8;

function element<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

/** Facetable attribute names: plain names, and the patterns without wildcards of the object form. */
export function facetAttributes(settings: IndexSettings): string[] {
  const names = settings.filterableAttributes.flatMap((entry) => (typeof entry === 'string' ? [entry] : entry.attributePatterns));
  return [...new Set(names.filter((name) => !name.includes('*')))].slice(0, FACET_LISTS_MAX);
}

/** Embedders that turn the query text into a vector (userProvided ones need the caller's vector). */
export function queryEmbedders(settings: IndexSettings): string[] {
  return Object.entries(settings.embedders ?? {})
    .filter(([, embedder]) => embedder.source !== 'userProvided')
    .map(([name]) => name);
}

export interface SearchUi {
  dispose(): void;
}

export function mountSearchUi(
  api: Api,
  apiKey: string | null,
  index: { uid: string; primaryKey: string | null },
  settings: IndexSettings,
  onError: (message: string | null) => void,
): SearchUi {
  const options = { showRankingScore: false, embedder: null as string | null, semanticRatio: 0 };
  const meiliParams = () => ({
    attributesToCrop: ['*'],
    cropLength: CROP_LENGTH,
    showRankingScore: options.showRankingScore,
    // ratio 0 is keyword search: leave hybrid out so that no query is embedded on every keystroke
    ...(options.embedder && options.semanticRatio > 0 ? { hybrid: { embedder: options.embedder, semanticRatio: options.semanticRatio } } : {}),
  });
  const { searchClient, setMeiliSearchParams } = instantMeiliSearch(api.host, apiKey ?? '', {
    primaryKey: index.primaryKey ?? undefined,
    keepZeroFacets: false,
    meiliSearchParams: meiliParams(),
  });

  const search: InstantSearch = instantsearch({ indexName: index.uid, searchClient, future: { preserveSharedStateOnUnmount: true } });
  search.on('error', (event: { error?: Error }) => onError(event.error?.message ?? 'The search failed.'));
  search.on('render', () => {
    if (search.status === 'idle') onError(null);
  });

  const facetsBox = element('facets');
  facetsBox.replaceChildren();
  const facetWidgets = facetAttributes(settings).map((attribute) => {
    const container = document.createElement('div');
    container.className = 'facet';
    container.dataset.attribute = attribute;
    facetsBox.append(container);
    return panel({ templates: { header: () => attribute } })(refinementList)({ container, attribute, limit: 10, showMore: true, showMoreLimit: 50 });
  });

  search.addWidgets([
    configure({ hitsPerPage: 20 }),
    searchBox({ container: '#searchbox', placeholder: `Search ${index.uid}…`, autofocus: true, showLoadingIndicator: true }),
    stats({ container: '#stats' }),
    hits({
      container: '#hits',
      templates: {
        item: (hit, params) => renderHit(hit, params, { primaryKey: index.primaryKey, onOpen: (id) => void openDocument(api, index.uid, id) }),
        empty: ({ query }, { html }) => html`<p class="empty">No document matches <q>${query}</q>.</p>`,
      },
    }),
    pagination({ container: '#pagination' }),
    ...facetWidgets,
  ]);
  search.start();

  const refresh = () => {
    setMeiliSearchParams(meiliParams());
    searchClient.clearCache();
    search.refresh();
  };
  const cleanups = [bindScores(options, refresh), bindSemantic(settings, options, refresh)];

  return {
    dispose() {
      for (const cleanup of cleanups) cleanup();
      search.dispose();
      facetsBox.replaceChildren();
    },
  };
}

function bindScores(options: { showRankingScore: boolean }, refresh: () => void): () => void {
  const box = element<HTMLInputElement>('show-scores');
  box.checked = options.showRankingScore;
  const listener = () => {
    options.showRankingScore = box.checked;
    refresh();
  };
  box.addEventListener('change', listener);
  return () => box.removeEventListener('change', listener);
}

function bindSemantic(settings: IndexSettings, options: { embedder: string | null; semanticRatio: number }, refresh: () => void): () => void {
  const section = element('semantic');
  const note = element('semantic-note');
  const picker = element<HTMLSelectElement>('embedder-picker');
  const slider = element<HTMLInputElement>('semantic-ratio');
  const shown = element<HTMLOutputElement>('semantic-ratio-value');
  const embedders = queryEmbedders(settings);
  const all = Object.keys(settings.embedders ?? {});
  section.hidden = embedders.length === 0;
  note.hidden = !(embedders.length === 0 && all.length > 0);
  note.textContent = 'This index has only userProvided embedders: semantic search needs a query vector, which this page does not send.';
  picker.replaceChildren(...embedders.map((name) => new Option(name, name)));
  options.embedder = embedders[0] ?? null;
  slider.value = '0';
  shown.value = '0';
  options.semanticRatio = 0;

  const onSlide = () => {
    shown.value = slider.value;
    options.semanticRatio = Number(slider.value);
    refresh();
  };
  const onPick = () => {
    options.embedder = picker.value;
    refresh();
  };
  const onInput = () => (shown.value = slider.value);
  slider.addEventListener('change', onSlide);
  slider.addEventListener('input', onInput);
  picker.addEventListener('change', onPick);
  return () => {
    slider.removeEventListener('change', onSlide);
    slider.removeEventListener('input', onInput);
    picker.removeEventListener('change', onPick);
  };
}
