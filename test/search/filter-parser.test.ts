import { describe, expect, it } from 'vitest';
import { parseFilter, type FilterAst } from '../../src/engine/search/filter/parser.js';
import { SearchError } from '../../src/engine/errors.js';

/** A compact rendering of the AST, so that expectations stay readable. */
function show(ast: FilterAst | null): string {
  if (!ast) return 'null';
  switch (ast.type) {
    case 'and':
      return `(${ast.children.map(show).join(' & ')})`;
    case 'or':
      return `(${ast.children.map(show).join(' | ')})`;
    case 'not':
      return `!${show(ast.child)}`;
    case 'in':
      return `${ast.field.value} in [${ast.values.map((v) => v.value).join(',')}]`;
    case 'condition': {
      const c = ast.condition;
      if (c.op === 'TO') return `${ast.field.value} ${c.from.value}..${c.to.value}`;
      if ('value' in c) return `${ast.field.value} ${c.op} ${c.value.value}`;
      return `${ast.field.value} ${c.op}`;
    }
    case 'geoRadius':
      return `radius(${ast.center.join(',')},${ast.radius})`;
    case 'geoBoundingBox':
      return `bbox(${ast.topRight.join(',')};${ast.bottomLeft.join(',')})`;
    case 'geoPolygon':
      return `polygon(${ast.points.map((p) => p.join(',')).join(';')})`;
  }
}

function errorOf(input: unknown, code?: string): SearchError {
  try {
    parseFilter(input, code);
  } catch (error) {
    expect(error).toBeInstanceOf(SearchError);
    return error as SearchError;
  }
  throw new Error(`expected ${JSON.stringify(input)} to fail`);
}

describe('filter parser', () => {
  it('parses operators, precedence and nesting', () => {
    expect(show(parseFilter('genres = Horror'))).toBe('genres = Horror');
    expect(show(parseFilter('a = 1 OR b = 2 AND c = 3'))).toBe('(a = 1 | (b = 2 & c = 3))');
    expect(show(parseFilter('(a = 1 OR b = 2) AND NOT c != 3'))).toBe('((a = 1 | b = 2) & !c != 3)');
    expect(show(parseFilter('NOT NOT a = 1'))).toBe('a = 1');
    expect(show(parseFilter('year >= 1990 AND year<2000'))).toBe('(year >= 1990 & year < 2000)');
    expect(show(parseFilter('year 1990 TO 2000'))).toBe('year 1990..2000');
    expect(show(parseFilter('genres IN [Horror, "Science Fiction",]'))).toBe('genres in [Horror,Science Fiction]');
    expect(show(parseFilter('genres NOT IN []'))).toBe('!genres in []');
    expect(show(parseFilter('cast EXISTS AND cast NOT EXISTS'))).toBe('(cast EXISTS & !cast EXISTS)');
    expect(show(parseFilter('a IS NULL OR a IS NOT NULL OR a IS EMPTY OR a IS NOT EMPTY'))).toBe(
      '(a IS NULL | !a IS NULL | a IS EMPTY | !a IS EMPTY)',
    );
    expect(show(parseFilter('title CONTAINS "dark" AND title NOT CONTAINS night'))).toBe(
      '(title CONTAINS dark & !title CONTAINS night)',
    );
    expect(show(parseFilter('title STARTS WITH the AND title NOT STARTS WITH "a"'))).toBe(
      '(title STARTS WITH the & !title STARTS WITH a)',
    );
    expect(show(parseFilter('doggos.age > -2.5e1'))).toBe('doggos.age > -2.5e1');
  });

  it('unescapes quoted values and keeps keywords usable inside quotes', () => {
    expect(show(parseFilter(`title = "I'm \\"super\\" tamo"`))).toBe(`title = I'm "super" tamo`);
    expect(show(parseFilter(`title = 'I\\'m here'`))).toBe(`title = I'm here`);
    expect(show(parseFilter(`"AND" = "OR"`))).toBe('AND = OR');
    expect(show(parseFilter(`path = "C:\\dir"`))).toBe('path = C:\\dir');
  });

  it('parses geo rules', () => {
    expect(show(parseFilter('_geoRadius(45.472735, 9.184019, 2000)'))).toBe('radius(45.472735,9.184019,2000)');
    expect(show(parseFilter('_geoBoundingBox([45.49, 9.22], [45.44, 9.14])'))).toBe('bbox(45.49,9.22;45.44,9.14)');
    expect(show(parseFilter('_geoPolygon([1,2], [3, 4], [5,6]) AND NOT a = b'))).toBe('(polygon(1,2;3,4;5,6) & !a = b)');
  });

  it('reads the array form as an AND of ORs', () => {
    expect(show(parseFilter(['a = 1', ['b = 2', ' '], '']))).toBe('(a = 1 & b = 2)');
    expect(show(parseFilter(['a = 1', ['b = 2', 'c = 3']]))).toBe('(a = 1 & (b = 2 | c = 3))');
    expect(parseFilter([])).toBeNull();
    expect(parseFilter('   ')).toBeNull();
    expect(parseFilter(null)).toBeNull();
    expect(errorOf(['a = 1', [['b = 2']]]).message).toBe(
      'Invalid syntax for the filter parameter: `expected String, found: ["b = 2"]`.',
    );
    expect(errorOf(42).message).toBe('Invalid syntax for the filter parameter: `expected String, Array, found: 42`.');
  });

  it('reports errors with the offending position', () => {
    const e1 = errorOf('channel Ponce');
    expect(e1.code).toBe('invalid_search_filter');
    expect(e1.message).toMatch(/^Was expecting an operation `=`, `!=`.* at `channel Ponce`\.\n1:14 channel Ponce$/);
    expect(errorOf('channel = Ponce 12').message).toBe(
      'Found unexpected characters at the end of the filter: `12`. You probably forgot an `OR` or an `AND` rule.\n17:19 channel = Ponce 12',
    );
    expect(errorOf('channel = "Ponce').message).toBe(
      'Expression `\\"Ponce` is missing the following closing delimiter: `"`.\n11:17 channel = "Ponce',
    );
    expect(errorOf('(a = 1 OR b = 2').message).toBe(
      'Expression `(a = 1 OR b = 2` is missing the following closing delimiter: `)`.\n1:16 (a = 1 OR b = 2',
    );
    expect(errorOf('a = AND').message).toBe(
      'Was expecting a value but instead got `AND`, which is a reserved keyword. To use `AND` as a field name or a value, surround it by quotes.\n5:8 a = AND',
    );
    expect(errorOf('a = ').message).toBe('Was expecting a value but instead got nothing.\n5:5 a = ');
    expect(errorOf('a = 1 AND ').message).toMatch(/^Was expecting an operation `=`.* but instead got nothing\.\n11:11 a = 1 AND $/);
    expect(errorOf('AND = 1').message).toMatch(/^Was expecting an operation `=`.* at `AND = 1`\.\n1:8 AND = 1$/);
    expect(errorOf('a IN b').message).toBe('Expected `[` after `IN` keyword.\n6:7 a IN b');
    expect(errorOf('a IN [b, c').message).toBe(
      'Expected matching `]` after the list of field names given to `IN[`\n11:11 a IN [b, c',
    );
    expect(errorOf('_geoRadius(12, 13)').message).toBe(
      'The `_geoRadius` filter expects three arguments: `_geoRadius(latitude, longitude, radius)`.\n1:19 _geoRadius(12, 13)',
    );
    expect(errorOf('_geoRadius(120, 13, 10)').message).toMatch(/^Bad latitude `120`\. Latitude must be contained between -90 and 90 degrees\.\n1:24 /);
    expect(errorOf('_geoBoundingBox([1, 2], [3, 4])').message).toMatch(/^The top latitude `1` is below the bottom latitude `3`\./);
    expect(errorOf('_geoPolygon([1, 2], [3, 4])').message).toMatch(/^The `_geoPolygon` filter expects at least three points/);
    expect(errorOf('_geo = 12').message).toMatch(/^`_geo` is a reserved keyword and thus can't be used as a filter expression\..*\n1:5 _geo = 12$/);
    expect(errorOf('a = _geoRadius(1, 2, 3)').message).toMatch(/^The `_geoRadius` filter is an operation and can't be used as a value\.\n5:/);
    // positions count characters, not UTF-16 units
    expect(errorOf('名前 = 🦀 x').message).toMatch(/^Was expecting a value but instead got `🦀`\.\n6:7 名前 = 🦀 x$/);
    // the caller picks the error code (documents routes)
    expect(errorOf('a =', 'invalid_document_filter').code).toBe('invalid_document_filter');
  });
});
