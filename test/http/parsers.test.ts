/** The transport parsers on their own: task filters, dates, addresses, sizes. */
import { describe, expect, test } from 'vitest';
import { SearchError } from '../../src/engine/errors.js';
import { formatBinarySize } from '../../src/http/error-mapping.js';
import { parseSwaps } from '../../src/http/routes/indexes.js';
import { queryToBody } from '../../src/http/routes/search.js';
import { parseHttpAddr } from '../../src/http/server.js';
import { parseTaskDate, parseTaskFilterQuery, parseTaskListQuery } from '../../src/http/task-query.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof SearchError) return error.code;
    throw error;
  }
  throw new Error('did not throw');
}

describe('task filters', () => {
  test('comma lists, stars and defaults', () => {
    expect(parseTaskListQuery({ uids: '78,1,12', statuses: 'succeeded,enqueued', indexUids: '*', from: '12' })).toEqual({
      uids: [78, 1, 12],
      statuses: ['succeeded', 'enqueued'],
      from: 12,
      limit: 20,
    });
    expect(parseTaskListQuery({ types: 'indexCreation,*' })).toEqual({ limit: 20, statuses: expect.any(Array) });
  });

  test('a bare date in an after filter means after that whole day; before means before it starts', () => {
    expect(parseTaskDate('2021-12-03', true)?.toISOString()).toBe('2021-12-04T00:00:00.000Z');
    expect(parseTaskDate('2021-12-03', false)?.toISOString()).toBe('2021-12-03T00:00:00.000Z');
    expect(parseTaskDate('1997-11-12T09:55:06-06:20', true)?.toISOString()).toBe('1997-11-12T16:15:06.000Z');
    expect(parseTaskDate('1997-11-12T09:55:06.200000300Z', true)?.toISOString()).toBe('1997-11-12T09:55:06.200Z');
    for (const bad of ['2021', '2021-12', '2021-12-03T23', '2021-12-03T23:45', '2021-02-30', '2021-12-03T25:00:00Z'])
      expect(parseTaskDate(bad, true), bad).toBeUndefined();
  });

  test('cancel and delete need a filter; a star alone is one', () => {
    expect(codeOf(() => parseTaskFilterQuery({}, 'cancel'))).toBe('missing_task_filters');
    expect(parseTaskFilterQuery({ statuses: '*' }, 'delete').statuses).toHaveLength(5);
    expect(codeOf(() => parseTaskFilterQuery({ from: '1' }, 'delete'))).toBe('bad_request');
    expect(codeOf(() => parseTaskFilterQuery({ canceledBy: 'x' }, 'cancel'))).toBe('invalid_task_canceled_by');
    expect(parseTaskFilterQuery({ beforeStartedAt: '2024-01-01T00:00:00Z' }, 'cancel').beforeStartedAt).toEqual(
      new Date('2024-01-01T00:00:00Z'),
    );
  });
});

describe('request bodies and query strings', () => {
  test('swap-indexes bodies', () => {
    expect(parseSwaps([{ indexes: ['a', 'b'] }])).toEqual([{ indexes: ['a', 'b'], rename: false }]);
    expect(parseSwaps([{ indexes: ['a', 'b'], rename: true }])).toEqual([{ indexes: ['a', 'b'], rename: true }]);
    expect(codeOf(() => parseSwaps([{ indexes: ['a', 'b'], rename: 1 }]))).toBe('invalid_swap_rename');
    expect(codeOf(() => parseSwaps([{ indexes: ['a', 'b', 'c'] }]))).toBe('invalid_swap_indexes');
    expect(codeOf(() => parseSwaps([{ indexes: ['a', 1] }]))).toBe('invalid_index_uid');
    expect(codeOf(() => parseSwaps([{ indexes: ['a', 'b'], extra: 1 }]))).toBe('bad_request');
    expect(codeOf(() => parseSwaps({}))).toBe('bad_request');
  });

  test('GET search parameters become the POST body with their types', () => {
    expect(
      queryToBody({ q: 'alien', limit: '5', attributesToRetrieve: 'title,year', showRankingScore: 'true', hybridSemanticRatio: '0.5', hybridEmbedder: 'default', vector: '0.1,2' }, 'search'),
    ).toEqual({
      q: 'alien',
      limit: 5,
      attributesToRetrieve: ['title', 'year'],
      showRankingScore: true,
      vector: [0.1, 2],
      hybrid: { embedder: 'default', semanticRatio: 0.5 },
    });
    expect(codeOf(() => queryToBody({ hitsPerPage: 'x' }, 'search'))).toBe('invalid_search_hits_per_page');
    expect(codeOf(() => queryToBody({ color: 'red' }, 'search'))).toBe('bad_request');
    expect(codeOf(() => queryToBody({ limit: '-1' }, 'similar'))).toBe('invalid_similar_limit');
  });
});

describe('server plumbing', () => {
  test('http addresses', () => {
    expect(parseHttpAddr('127.0.0.1:7700')).toEqual({ host: '127.0.0.1', port: 7700 });
    expect(parseHttpAddr('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseHttpAddr('localhost:80')).toEqual({ host: 'localhost', port: 80 });
    expect(() => parseHttpAddr('7700')).toThrow(/host:port/);
    expect(() => parseHttpAddr('a:99999')).toThrow();
  });

  test('sizes are printed in the largest binary unit', () => {
    expect(formatBinarySize(10 * 1024 * 1024)).toBe('10 MiB');
    expect(formatBinarySize(512)).toBe('512 B');
  });
});
