/**
 * The SIMD kernels against scalar arithmetic on random int8 codes, including the extremes
 * (±127, where the i16 sums of the dot kernel are tightest).
 */
import { describe, expect, it } from 'vitest';
import { CODES_PTR, IDS_PTR, Kernels, OUT_PTR, QUERY_PTR } from '../../src/engine/vector/simd.js';
import { prng as rand } from '../qdrant-server/fixtures.js';


describe('int8 kernels', () => {
  for (const dims of [16, 100, 768]) {
    it(`l2 (with and without stored norms) and dot match scalar arithmetic, ${dims} dimensions`, () => {
      const len = Math.ceil(dims / 16) * 16;
      const stride = len + 16;
      const k = new Kernels(stride, 32);
      k.resize(64);
      const r = rand(dims);
      const codes: number[][] = [];
      const write = (ptr: number, code: number[]) => {
        for (let i = 0; i < len; i++) k.bytes[ptr + i] = (code[i] ?? 0) & 0xff;
        k.i32[(ptr + len) >> 2] = code.reduce((s, x) => s + x * x, 0);
      };
      for (let s = 0; s < 40; s++) {
        const extreme = s < 4;
        const code = Array.from({ length: dims }, () => (extreme ? (r() < 0.5 ? -127 : 127) : Math.round(r() * 254 - 127)));
        codes.push(code);
        write(k.codePtr(s), code);
      }
      const q = codes[1]!;
      write(QUERY_PTR, q);
      for (let s = 0; s < 40; s++) k.ids[s] = s;
      const scalarL2 = codes.map((c) => c.reduce((t, x, i) => t + (x - q[i]!) ** 2, 0));
      const scalarDot = codes.map((c) => c.reduce((t, x, i) => t + x * q[i]!, 0));
      k.l2i8n(QUERY_PTR, CODES_PTR, stride, IDS_PTR, 40, OUT_PTR, len);
      expect(Array.from(k.out.subarray(0, 40))).toEqual(scalarL2);
      k.l2i8(QUERY_PTR, CODES_PTR, stride, IDS_PTR, 40, OUT_PTR, len);
      expect(Array.from(k.out.subarray(0, 40))).toEqual(scalarL2);
      k.doti8(QUERY_PTR, CODES_PTR, stride, IDS_PTR, 40, OUT_PTR, len);
      expect(Array.from(k.out.subarray(0, 40))).toEqual(scalarDot);
    });
  }
});
