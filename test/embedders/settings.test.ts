import { describe, expect, it } from 'vitest';
import { SearchError } from '../../src/engine/errors.js';
import { mergeEmbedders, redactEmbedders, updateEmbedders, validateEmbedders } from '../../src/engine/embedders/settings.js';
import { DEFAULT_DOCUMENT_TEMPLATE } from '../../src/engine/embedders/template.js';

function failure(fn: () => unknown): SearchError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SearchError);
    return error as SearchError;
  }
  throw new Error('expected a failure');
}

describe('validateEmbedders', () => {
  it('accepts a userProvided embedder and rejects it without dimensions', () => {
    expect(updateEmbedders({}, { manual: { source: 'userProvided', dimensions: 3 } })).toEqual({
      manual: { source: 'userProvided', dimensions: 3 },
    });
    const error = failure(() => updateEmbedders({}, { manual: { source: 'userProvided' } }));
    expect(error.code).toBe('invalid_settings_embedders');
    expect(error.message).toBe('`.embedders.manual`: Missing field `dimensions` (note: this field is mandatory for source `userProvided`)');
  });

  it('names the source that lacks a field, with the alternatives', () => {
    const error = failure(() => validateEmbedders({ default: { source: 'userProvided', dimensions: 3, documentTemplate: 'x' } }));
    expect(error.message).toContain('`.embedders.default`: Field `documentTemplate` unavailable for source `userProvided`.');
    expect(error.message).toContain('`documentTemplate` is available for sources: `openAi`, `huggingFace`, `ollama`, `rest`');
    expect(error.message).toContain('available fields for source `userProvided`: `source`, `dimensions`, `distribution`, `binaryQuantized`');
  });

  it('rejects unknown fields, unknown sources, wrong types and zero dimensions', () => {
    expect(failure(() => validateEmbedders({ e: { source: 'userProvided', dims: 3 } })).message).toMatch(/^Unknown field `dims` inside `.embedders.e`/);
    expect(failure(() => validateEmbedders({ e: { source: 'magic' } })).message).toMatch(/^Unknown value `magic` at `.embedders.e.source`: expected one of `openAi`/);
    expect(failure(() => validateEmbedders({ e: { source: 'userProvided', dimensions: '3' } })).message).toBe(
      'Invalid value type at `.embedders.e.dimensions`: expected a positive integer, but found a string: `"3"`',
    );
    expect(failure(() => validateEmbedders({ e: { source: 'userProvided', dimensions: 0 } })).message).toBe('`.embedders.e.dimensions`: `dimensions` cannot be zero');
    expect(failure(() => validateEmbedders([])).code).toBe('invalid_settings_embedders');
  });

  it('checks REST templates for their placeholders', () => {
    const ok = { source: 'rest', url: 'http://localhost:1/x', request: { input: '{{text}}' }, response: { e: '{{embedding}}' } };
    expect(() => updateEmbedders({}, { r: ok })).not.toThrow();
    expect(failure(() => validateEmbedders({ r: { ...ok, request: { input: 'text' } } })).message).toMatch(/request.*\{\{text\}\}/);
    expect(failure(() => updateEmbedders({}, { r: { source: 'rest', url: 'http://localhost:1/x', request: ok.request } })).message).toBe(
      '`.embedders.r`: Missing field `response` (note: this field is mandatory for source `rest`)',
    );
  });

  it('validates OpenAI models and their dimensions', () => {
    expect(failure(() => validateEmbedders({ o: { source: 'openAi', model: 'gpt-9' } })).message).toMatch(/Invalid model `gpt-9` for OpenAI/);
    expect(failure(() => updateEmbedders({}, { o: { source: 'openAi', model: 'text-embedding-ada-002', dimensions: 512 } })).message).toMatch(
      /does not support overriding its native dimensions of 1536/,
    );
    expect(failure(() => updateEmbedders({}, { o: { source: 'openAi', dimensions: 4000 } })).message).toMatch(/higher than 1536/);
  });

  it('rejects an invalid document template', () => {
    expect(failure(() => validateEmbedders({ o: { source: 'ollama', model: 'm', documentTemplate: '{% for x %}' } })).message).toMatch(
      /^`.embedders.o.documentTemplate`: Invalid template: /,
    );
  });

  it('validates composite embedders and their parts', () => {
    const composite = {
      source: 'composite',
      indexingEmbedder: { source: 'huggingFace' },
      searchEmbedder: { source: 'rest', url: 'http://localhost:1/x', request: { t: '{{text}}' }, response: { e: '{{embedding}}' } },
    };
    const merged = updateEmbedders({}, { c: composite });
    expect((merged.c!.indexingEmbedder as Record<string, unknown>).documentTemplate).toBe(DEFAULT_DOCUMENT_TEMPLATE);
    expect(failure(() => validateEmbedders({ c: { ...composite, searchEmbedder: { source: 'userProvided' } } })).message).toMatch(
      /Source `userProvided` is not available in a nested embedder/,
    );
    expect(failure(() => validateEmbedders({ c: { ...composite, searchEmbedder: { ...composite.searchEmbedder, documentTemplate: 'x' } } })).message).toMatch(
      /Field `documentTemplate` unavailable for source `rest` when nested in `searchEmbedder`/,
    );
  });
});

describe('mergeEmbedders', () => {
  const before = mergeEmbedders({}, validateEmbedders({ o: { source: 'openAi', apiKey: 'sk-1234567890', dimensions: 512 } }));

  it('fills the defaults the reference shows', () => {
    expect(before.o).toMatchObject({ model: 'text-embedding-3-small', documentTemplate: DEFAULT_DOCUMENT_TEMPLATE, documentTemplateMaxBytes: 400 });
  });

  it('updates fields in place, resets fields set to null and removes embedders set to null', () => {
    const after = updateEmbedders(before, { o: { documentTemplate: '{{doc.title}}', dimensions: null } });
    expect(after.o).toMatchObject({ source: 'openAi', apiKey: 'sk-1234567890', documentTemplate: '{{doc.title}}' });
    expect(after.o!.dimensions).toBeUndefined();
    expect(updateEmbedders(after, { o: null })).toEqual({});
    expect(updateEmbedders(after, null)).toEqual({});
  });

  it('starts afresh when the source changes', () => {
    const after = updateEmbedders(before, { o: { source: 'userProvided', dimensions: 4 } });
    expect(after.o).toEqual({ source: 'userProvided', dimensions: 4 });
  });

  it('requires a source for a new embedder', () => {
    expect(failure(() => updateEmbedders({}, { x: { dimensions: 3 } })).message).toMatch(/Missing field `source`/);
  });

  it('never turns binary quantization off', () => {
    const quantized = updateEmbedders({}, { q: { source: 'userProvided', dimensions: 3, binaryQuantized: true } });
    expect(failure(() => updateEmbedders(quantized, { q: { binaryQuantized: false } })).message).toMatch(/Cannot disable the binary quantization/);
  });
});

describe('redactEmbedders', () => {
  it('hides API keys, nested ones included', () => {
    const settings = updateEmbedders({}, {
      o: { source: 'openAi', apiKey: 'sk-abcdefghijklmnop' },
      s: { source: 'ollama', model: 'm', apiKey: 'short' },
      c: {
        source: 'composite',
        indexingEmbedder: { source: 'openAi', apiKey: 'sk-nested-secret-key' },
        searchEmbedder: { source: 'openAi', apiKey: 'sk-nested-secret-key' },
      },
    });
    const redacted = redactEmbedders(settings);
    expect(redacted.o!.apiKey).toBe('skXXXX...');
    expect(redacted.s!.apiKey).toBe('XXX...');
    expect((redacted.c!.searchEmbedder as Record<string, unknown>).apiKey).toBe('sk-XXXXX...');
    expect(JSON.stringify(redacted)).not.toContain('abcdefghijklmnop');
    expect(settings.o!.apiKey).toBe('sk-abcdefghijklmnop');
  });
});

describe('REST templates', () => {
  it('requires request and response to agree on batching', () => {
    const rest = { source: 'rest', url: 'http://localhost:1/x' };
    expect(() => updateEmbedders({}, { r: { ...rest, request: { in: ['{{text}}', '{{..}}'] }, response: { out: ['{{embedding}}', '{{..}}'] } } })).not.toThrow();
    expect(failure(() => updateEmbedders({}, { r: { ...rest, request: { in: ['{{text}}', '{{..}}'] }, response: { out: '{{embedding}}' } } })).message).toMatch(
      /must both repeat/,
    );
  });
});
