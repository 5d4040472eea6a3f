import { describe, expect, it } from 'vitest';
import { renderDocument, truncateUtf8 } from '../../src/engine/embedders/template.js';

const movie = { id: 1, title: 'Jaws', genres: ['Thriller'], overview: 'A shark.', rating: null, _vectors: { e: [1, 2] } };

describe('documentTemplate', () => {
  it('renders every searchable non-null field by default, never `_vectors`', () => {
    expect(renderDocument(movie)).toBe('id: 1\ntitle: Jaws\ngenres: ["Thriller"]\noverview: A shark.\n');
    expect(renderDocument(movie, { searchableAttributes: ['title'] })).toBe('title: Jaws\n');
  });

  it('renders `{{doc.field}}` templates', () => {
    expect(renderDocument(movie, { template: 'A movie titled {{doc.title}}: {{doc.overview | downcase}}' })).toBe('A movie titled Jaws: a shark.');
  });

  it('truncates to documentTemplateMaxBytes without splitting characters', () => {
    const long = { text: 'é'.repeat(300) };
    const rendered = renderDocument(long, { template: '{{doc.text}}', maxBytes: 401 });
    expect(Buffer.byteLength(rendered)).toBe(400);
    expect(rendered).toBe('é'.repeat(200));
    expect(truncateUtf8('abc', 2)).toBe('ab');
  });
});
