/**
 * The facet `IndexExtension`: keeps the facet databases (see ./databases.ts) exact under
 * additions, updates and deletions.
 *
 * A batch is applied as a diff: each changed document's facets before and after are compared,
 * the docid additions/removals are grouped per facet key, and every touched bitmap is read and
 * written once per batch, however many documents share it.
 */
import type { ApplyContext, DocumentChange, IndexExtension } from '../../index/extension.js';
import type { IndexStore } from '../../index/store.js';
import type { Settings } from '../../settings/types.js';
import { facetConfigKey, facetedFieldPredicate } from './attributes.js';
import { encodeDocids, facetDbs, FLAG_KEYS, readBitmap, type FlagKind } from './databases.js';
import { docValues, extractFacets, type DocumentFacets, type FieldFacets } from './extract.js';

interface Delta {
  add: number[];
  remove: number[];
}

interface StringDelta extends Delta {
  field: string;
  value: string;
  /** The spelling of the first document adding this value in the batch. */
  original?: string;
}

class BatchDeltas {
  strings = new Map<string, StringDelta>();
  numbers = new Map<string, Delta & { field: string; value: number }>();
  flags = new Map<string, Delta & { kind: string; field: string }>();

  string(field: string, value: string, original?: string): StringDelta {
    const key = `${field}\u0000${value}`;
    let d = this.strings.get(key);
    if (!d) this.strings.set(key, (d = { field, value, original, add: [], remove: [] }));
    else d.original ??= original;
    return d;
  }

  number(field: string, value: number): Delta {
    const key = `${field}\u0000${value}`;
    let d = this.numbers.get(key);
    if (!d) this.numbers.set(key, (d = { field, value, add: [], remove: [] }));
    return d;
  }

  flag(kind: FlagKind, field: string): Delta {
    const key = `${kind}\u0000${field}`;
    let d = this.flags.get(key);
    if (!d) this.flags.set(key, (d = { kind: FLAG_KEYS[kind], field, add: [], remove: [] }));
    return d;
  }
}

const EMPTY: FieldFacets = { numbers: new Set(), strings: new Map(), exists: false, isNull: false, isEmpty: false };

function sameValues(a: FieldFacets, b: FieldFacets): boolean {
  if (a.numbers.size !== b.numbers.size || a.strings.size !== b.strings.size) return false;
  for (const n of a.numbers) if (!b.numbers.has(n)) return false;
  for (const s of a.strings.keys()) if (!b.strings.has(s)) return false;
  return true;
}

function diffField(deltas: BatchDeltas, docid: number, field: string, before: FieldFacets, after: FieldFacets): boolean {
  for (const n of before.numbers) if (!after.numbers.has(n)) deltas.number(field, n).remove.push(docid);
  for (const n of after.numbers) if (!before.numbers.has(n)) deltas.number(field, n).add.push(docid);
  for (const s of before.strings.keys()) if (!after.strings.has(s)) deltas.string(field, s).remove.push(docid);
  for (const [s, original] of after.strings) if (!before.strings.has(s)) deltas.string(field, s, original).add.push(docid);
  const flags: Array<[FlagKind, boolean, boolean]> = [
    ['exists', before.exists, after.exists],
    ['null', before.isNull, after.isNull],
    ['empty', before.isEmpty, after.isEmpty],
  ];
  for (const [kind, was, is] of flags) {
    if (was && !is) deltas.flag(kind, field).remove.push(docid);
    if (is && !was) deltas.flag(kind, field).add.push(docid);
  }
  return !sameValues(before, after);
}

function applyDelta(bitmapBuffer: Uint8Array | undefined, delta: Delta) {
  const bitmap = readBitmap(bitmapBuffer);
  if (delta.remove.length) bitmap.removeMany(delta.remove);
  if (delta.add.length) bitmap.addMany(delta.add);
  return bitmap;
}

export function applyFacetChanges(store: IndexStore, settings: Settings, changes: readonly DocumentChange[]): void {
  const faceted = facetedFieldPredicate(settings);
  const dbs = facetDbs(store);
  const deltas = new BatchDeltas();

  for (const change of changes) {
    const before: DocumentFacets = change.before ? extractFacets(change.before, faceted) : new Map();
    const after: DocumentFacets = change.after ? extractFacets(change.after, faceted) : new Map();
    const fields = new Set([...before.keys(), ...after.keys()]);
    let changed = false;
    for (const field of fields) {
      changed = diffField(deltas, change.docid, field, before.get(field) ?? EMPTY, after.get(field) ?? EMPTY) || changed;
    }
    // one entry per document holding every faceted field's values: one write per changed document
    if (changed) {
      const values: Record<string, Array<number | string>> = {};
      let any = false;
      for (const [field, f] of after) {
        const v = docValues(f);
        if (v.length) {
          values[field] = v;
          any = true;
        }
      }
      if (any) dbs.docs.putSync(change.docid, values);
      else dbs.docs.removeSync(change.docid);
    }
  }

  // distinct values created (+1) or emptied (-1) per field, for the `facet-counts` db
  const created = new Map<string, number>();
  const bump = (field: string, by: number) => created.set(field, (created.get(field) ?? 0) + by);

  for (const d of deltas.strings.values()) {
    const key: [string, string] = [d.field, d.value];
    const current = dbs.strings.get(key);
    const bitmap = applyDelta(current, d);
    if (bitmap.isEmpty) {
      if (current) {
        dbs.strings.removeSync(key);
        dbs.originals.removeSync(key);
        bump(d.field, -1);
      }
    } else {
      dbs.strings.putSync(key, encodeDocids(bitmap));
      if (!current) {
        dbs.originals.putSync(key, d.original ?? d.value);
        bump(d.field, 1);
      }
    }
  }
  for (const d of deltas.numbers.values()) {
    const key: [string, number] = [d.field, d.value];
    const current = dbs.numbers.get(key);
    const bitmap = applyDelta(current, d);
    if (bitmap.isEmpty) {
      if (current) {
        dbs.numbers.removeSync(key);
        bump(d.field, -1);
      }
    } else {
      dbs.numbers.putSync(key, encodeDocids(bitmap));
      if (!current) bump(d.field, 1);
    }
  }
  for (const d of deltas.flags.values()) {
    const key: [string, string] = [d.kind, d.field];
    const bitmap = applyDelta(dbs.flags.get(key), d);
    if (bitmap.isEmpty) dbs.flags.removeSync(key);
    else dbs.flags.putSync(key, encodeDocids(bitmap));
  }
  for (const [field, by] of created) {
    if (by === 0) continue;
    const next = (dbs.counts.get(field) ?? 0) + by;
    if (next > 0) dbs.counts.putSync(field, next);
    else dbs.counts.removeSync(field);
  }
}

export function clearFacets(store: IndexStore): void {
  const dbs = facetDbs(store);
  for (const db of [dbs.strings, dbs.originals, dbs.numbers, dbs.flags, dbs.docs, dbs.counts]) db.clearSync();
}

export const facetExtension: IndexExtension = {
  name: 'facets',
  open(store: IndexStore): void {
    facetDbs(store);
  },
  apply(changes: readonly DocumentChange[], ctx: ApplyContext): void {
    applyFacetChanges(ctx.store, ctx.settings, changes);
  },
  clear(store: IndexStore): void {
    clearFacets(store);
  },
  needsReindex(before: Settings, after: Settings): boolean {
    return facetConfigKey(before) !== facetConfigKey(after);
  },
};

