/**
 * How one hit is drawn: a title line (highlighted), then the document's other fields, cropped
 * around the matched words with the matches marked, and the ranking score when it was asked for.
 * The fields come from the hit itself, so the page needs no per-index configuration.
 */
import type { Hit } from 'instantsearch.js';
import type { TemplateParams } from 'instantsearch.js/es/types/templates.js';

const TITLE_FIELDS = ['title', 'name', 'label', 'headline'];
/** Fields shown under the title at most; the document view shows everything. */
const MAX_FIELDS = 8;

/** Keys that instant-meilisearch and InstantSearch add to hits, not fields of the document. */
function isDocumentField(key: string): boolean {
  return !key.startsWith('_') && key !== 'objectID';
}

export function titleField(hit: Hit, primaryKey: string | null): string | null {
  return TITLE_FIELDS.find((f) => typeof hit[f] === 'string') ?? primaryKey;
}

export function renderHit(
  hit: Hit,
  { html, components }: TemplateParams,
  context: { primaryKey: string | null; onOpen: (id: string) => void },
) {
  const title = titleField(hit, context.primaryKey);
  const id = context.primaryKey ? hit[context.primaryKey] : undefined;
  const fields = Object.keys(hit)
    .filter((key) => isDocumentField(key) && key !== title && key !== context.primaryKey)
    .slice(0, MAX_FIELDS);
  const score = typeof hit._rankingScore === 'number' ? hit._rankingScore : null;

  const fieldValue = (field: string) => {
    const value = hit[field];
    if (typeof value === 'string') return components.Snippet({ hit, attribute: field });
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
      return value.map((_, i) => html`<span class="item">${components.Highlight({ hit, attribute: [field, String(i)] })}</span>`);
    }
    const text = JSON.stringify(value);
    return text.length > 160 ? `${text.slice(0, 160)}…` : text;
  };

  return html`<article class="hit">
    <header>
      <h2 class="hit-title">${title ? components.Highlight({ hit, attribute: title }) : ''}</h2>
      ${score !== null ? html`<span class="score" title="_rankingScore">${score.toFixed(4)}</span>` : ''}
      ${id !== undefined ? html`<button type="button" class="open-document" onClick=${() => context.onOpen(String(id))}>Document</button>` : ''}
    </header>
    <dl>
      ${fields.map((field) => html`<div class="field"><dt>${field}</dt><dd>${fieldValue(field)}</dd></div>`)}
    </dl>
  </article>`;
}
