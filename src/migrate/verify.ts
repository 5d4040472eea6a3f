/**
 * Verification after a migration: the exact point count must equal the document count, and a
 * sample of points, read again from Qdrant and mapped again, must equal the stored documents
 * field by field and vector by vector.
 */
import type { MappingPlan } from './qdrant/mapping.js';
import type { TargetDocument } from './target.js';

export interface Mismatch {
  id: string;
  field: string;
  expected: unknown;
  actual: unknown;
}

export interface VerificationResult {
  passed: boolean;
  qdrantCount: number;
  documentCount: number;
  sampled: number;
  mismatches: Mismatch[];
}

/** Keeps a uniform sample of ids of bounded size, plus the first and the last (Algorithm R). */
export class IdSample {
  private readonly ids: string[] = [];
  private seen = 0;
  private first: string | null = null;
  private last: string | null = null;
  private state: number;

  constructor(
    private readonly size: number,
    seed = 0x5eed,
  ) {
    this.state = seed >>> 0;
  }

  add(id: string): void {
    this.first ??= id;
    this.last = id;
    this.seen++;
    if (this.ids.length < this.size) this.ids.push(id);
    else {
      const j = Math.floor(this.random() * this.seen);
      if (j < this.size) this.ids[j] = id;
    }
  }

  values(): string[] {
    if (this.size === 0) return [];
    const all = new Set(this.ids);
    if (this.first !== null) all.add(this.first);
    if (this.last !== null) all.add(this.last);
    return [...all];
  }

  private random(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/** Embeddings as a list of vectors, whatever shape the document or server used. */
export function embeddingsOf(v: unknown): number[][] | null {
  if (v === null || v === undefined) return null;
  const e = typeof v === 'object' && !Array.isArray(v) && 'embeddings' in (v as object) ? (v as { embeddings: unknown }).embeddings : v;
  if (!Array.isArray(e)) return null;
  if (e.length === 0) return [];
  return Array.isArray(e[0]) ? (e as number[][]) : [e as number[]];
}

function closeEnough(a: number, b: number): boolean {
  // float32 storage: allow the rounding of one float32 conversion
  return Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
}

export function compareDocument(id: string, expected: TargetDocument, actual: TargetDocument, plan: MappingPlan): Mismatch[] {
  const out: Mismatch[] = [];
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  keys.delete('_vectors');
  for (const k of keys) {
    if (!deepEqual(expected[k], actual[k])) out.push({ id, field: k, expected: expected[k], actual: actual[k] });
  }
  const ev = (expected._vectors ?? {}) as Record<string, unknown>;
  const av = (actual._vectors ?? {}) as Record<string, unknown>;
  for (const r of plan.vectorRoutes) {
    const e = embeddingsOf(ev[r.embedder]);
    const a = embeddingsOf(av[r.embedder]);
    const field = `_vectors.${r.embedder}`;
    if (e === null || e.length === 0) {
      if (a !== null && a.length > 0) out.push({ id, field, expected: null, actual: `${a.length} embedding(s)` });
      continue;
    }
    if (a === null || a.length !== e.length) {
      out.push({ id, field, expected: `${e.length} embedding(s)`, actual: a === null ? null : `${a.length} embedding(s)` });
      continue;
    }
    for (let i = 0; i < e.length; i++) {
      const x = e[i]!;
      const y = a[i]!;
      const bad = x.length !== y.length ? -1 : x.findIndex((xv, j) => !closeEnough(xv, y[j]!));
      if (bad !== -1 || x.length !== y.length) {
        out.push({ id, field: `${field}[${i}]${bad >= 0 ? `[${bad}]` : ''}`, expected: bad >= 0 ? x[bad] : `${x.length}-d`, actual: bad >= 0 ? y[bad] : `${y.length}-d` });
        break;
      }
    }
  }
  return out;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && deepEqual(ao[k], bo[k]));
}
