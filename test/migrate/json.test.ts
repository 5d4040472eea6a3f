import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseLossless, stringifyLossless } from '../../src/migrate/qdrant/json.js';

describe('lossless JSON', () => {
  it('keeps integers beyond 2^53 exact as bigint and leaves the rest to JSON.parse', () => {
    const text = '{"id":18446744073709551615,"next":9007199254740993,"small":42,"f":0.12345678901234567,"e":1e300,"s":"18446744073709551615","arr":[-9223372036854775808, 1.5]}';
    const v = parseLossless(text) as Record<string, unknown>;
    expect(v.id).toBe(18446744073709551615n);
    expect(v.next).toBe(9007199254740993n);
    expect(v.small).toBe(42);
    expect(v.f).toBe(0.12345678901234567);
    expect(v.e).toBe(1e300);
    expect(v.s).toBe('18446744073709551615');
    expect(v.arr).toEqual([-9223372036854775808n, 1.5]);
  });

  it('finds big integers in pretty-printed JSON too', () => {
    const v = parseLossless('{\n  "id": 18446744073709551615,\n  "v": [ 0.1234567890123456789 ]\n}') as Record<string, unknown>;
    expect(v.id).toBe(18446744073709551615n);
    expect(v.v).toEqual([0.1234567890123456789]);
  });

  it('ignores digits inside strings, including escaped quotes', () => {
    const v = parseLossless('{"a":"x\\",12345678901234567890,","b":[1,12345678901234567890]}') as Record<string, unknown>;
    expect(v.a).toBe('x",12345678901234567890,');
    expect(v.b).toEqual([1, 12345678901234567890n]);
  });

  it('round-trips any uint64 id and any JSON value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.jsonValue(), (id, other) => {
        const text = stringifyLossless({ id, other });
        const back = parseLossless(text) as { id: bigint | number; other: unknown };
        expect(BigInt(back.id)).toBe(id);
        // values outside the safe range come back as bigint; as numbers they equal what JSON.parse gives
        expect(JSON.parse(JSON.stringify(back.other, (_k, x) => (typeof x === 'bigint' ? Number(x) : x)))).toEqual(JSON.parse(JSON.stringify(other)));
      }),
      { numRuns: 300 },
    );
  });
});
