/**
 * The geo `IndexExtension`: documents' `_geo: {lat, lng}` points, kept when `_geo` is filterable
 * or sortable.
 *
 *   geo-points  u32 docid          -> [lat, lng]
 *   geo-cells   [latCell, lngCell] -> roaring     one-degree grid cells, so that radius, box and
 *                                                 polygon filters only check points near the area
 */
import type { Database } from 'lmdb';
import type { ApplyContext, DocumentChange, IndexExtension } from '../../index/extension.js';
import type { IndexStore } from '../../index/store.js';
import { SearchError } from '../../errors.js';
import type { Settings } from '../../settings/types.js';
import type { Document } from '../../types.js';
import { geoEnabled } from '../facets/attributes.js';
import { encodeDocids, readBitmap } from '../facets/databases.js';
import type { LatLng } from './distance.js';

export interface GeoDbs {
  points: Database<LatLng, number>;
  cells: Database<Buffer, [number, number]>;
}

const opened = new WeakMap<IndexStore, GeoDbs>();

export function geoDbs(store: IndexStore): GeoDbs {
  let dbs = opened.get(store);
  if (!dbs) {
    dbs = {
      points: store.openDB('geo-points', { keyEncoding: 'uint32', encoding: 'msgpack' }) as any,
      cells: store.openDB('geo-cells', { keyEncoding: 'ordered-binary', encoding: 'binary' }) as any,
    };
    opened.set(store, dbs);
  }
  return dbs;
}

/** The one-degree grid cell of a point. */
export function cellOf([lat, lng]: LatLng): [number, number] {
  return [Math.min(89, Math.floor(lat)), Math.min(179, Math.floor(lng))];
}

function display(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

function coordinate(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) return Number(value);
  return null;
}

/**
 * The point of a document, or null when it has none. Throws `invalid_document_geo_field` with
 * the reference messages when `_geo` is malformed; `id` is the document's primary key value.
 */
export function extractGeoPoint(doc: Document, id: unknown): LatLng | null {
  if (!('_geo' in doc)) return null;
  const geo = doc._geo;
  if (geo === null || geo === undefined) return null;
  const who = `the document with the id: \`${display(id)}\``;
  const fail = (message: string) => new SearchError('invalid_document_geo_field', message);
  if (typeof geo !== 'object' || Array.isArray(geo)) {
    throw fail(
      `The \`_geo\` field in ${who} is not an object. Was expecting an object with the \`_geo.lat\` and \`_geo.lng\` fields but instead got \`${display(geo)}\`.`,
    );
  }
  const g = geo as Record<string, unknown>;
  const extra = Object.keys(g).filter((k) => k !== 'lat' && k !== 'lng');
  if (extra.length) {
    throw fail(`The \`_geo\` field in ${who} contains the following unexpected fields: \`{${extra.map((k) => `"${k}":${display(g[k])}`).join(',')}}\`.`);
  }
  const hasLat = 'lat' in g;
  const hasLng = 'lng' in g;
  if (!hasLat && !hasLng) {
    throw fail(`Could not find latitude nor longitude in ${who}. Was expecting \`_geo.lat\` and \`_geo.lng\` fields.`);
  }
  if (!hasLat) throw fail(`Could not find latitude in ${who}. Was expecting a \`_geo.lat\` field.`);
  if (!hasLng) throw fail(`Could not find longitude in ${who}. Was expecting a \`_geo.lng\` field.`);
  const lat = coordinate(g.lat);
  const lng = coordinate(g.lng);
  if (lat === null && lng === null) {
    throw fail(
      `Could not parse latitude nor longitude in ${who}. Was expecting finite numbers but instead got \`${display(g.lat)}\` and \`${display(g.lng)}\`.`,
    );
  }
  if (lat === null) throw fail(`Could not parse latitude in ${who}. Was expecting a finite number but instead got \`${display(g.lat)}\`.`);
  if (lng === null) throw fail(`Could not parse longitude in ${who}. Was expecting a finite number but instead got \`${display(g.lng)}\`.`);
  return [lat, lng];
}

/** The document's id for messages; before the first batch sets the primary key, the field it would infer. */
function idOf(doc: Document, primaryKey: string | null, docid: number): unknown {
  const key = primaryKey ?? Object.keys(doc).find((k) => /id$/i.test(k));
  return key !== undefined && doc[key] !== undefined ? doc[key] : docid;
}

/** Points of the changed documents, keyed by docid with the document they were read from. */
type PreparedPoints = Map<number, { doc: Document; point: LatLng | null }>;

function validate(changes: readonly DocumentChange[], store: IndexStore): PreparedPoints {
  const primaryKey = store.primaryKey;
  const out: PreparedPoints = new Map();
  for (const c of changes) if (c.after) out.set(c.docid, { doc: c.after, point: extractGeoPoint(c.after, idOf(c.after, primaryKey, c.docid)) });
  return out;
}

export function applyGeoChanges(store: IndexStore, settings: Settings, changes: readonly DocumentChange[], prepared?: PreparedPoints): void {
  if (!geoEnabled(settings)) return;
  const dbs = geoDbs(store);
  const primaryKey = store.primaryKey;
  // Reuse what `prepare` read when it saw the very same document; read it again otherwise.
  const pointOf = (change: DocumentChange): LatLng | null => {
    if (!change.after) return null;
    const known = prepared?.get(change.docid);
    return known && known.doc === change.after ? known.point : extractGeoPoint(change.after, idOf(change.after, primaryKey, change.docid));
  };
  const deltas = new Map<string, { cell: [number, number]; add: number[]; remove: number[] }>();
  const delta = (cell: [number, number]) => {
    const key = cell.join(',');
    let d = deltas.get(key);
    if (!d) deltas.set(key, (d = { cell, add: [], remove: [] }));
    return d;
  };
  for (const change of changes) {
    const old = dbs.points.get(change.docid) ?? null;
    const now = pointOf(change);
    if (old && now && old[0] === now[0] && old[1] === now[1]) continue;
    if (old) {
      delta(cellOf(old)).remove.push(change.docid);
      dbs.points.removeSync(change.docid);
    }
    if (now) {
      delta(cellOf(now)).add.push(change.docid);
      dbs.points.putSync(change.docid, now);
    }
  }
  for (const d of deltas.values()) {
    const bitmap = readBitmap(dbs.cells.get(d.cell));
    bitmap.removeMany(d.remove);
    bitmap.addMany(d.add);
    if (bitmap.isEmpty) dbs.cells.removeSync(d.cell);
    else dbs.cells.putSync(d.cell, encodeDocids(bitmap));
  }
}

export const geoExtension: IndexExtension = {
  name: 'geo',
  open(store: IndexStore): void {
    geoDbs(store);
  },
  async prepare(changes, settings, store) {
    // Fail the batch before anything is written when a `_geo` field is malformed.
    return geoEnabled(settings) ? validate(changes, store) : null;
  },
  apply(changes: readonly DocumentChange[], ctx: ApplyContext): void {
    applyGeoChanges(ctx.store, ctx.settings, changes, ctx.prepared instanceof Map ? (ctx.prepared as PreparedPoints) : undefined);
  },
  clear(store: IndexStore): void {
    const dbs = geoDbs(store);
    dbs.points.clearSync();
    dbs.cells.clearSync();
  },
  needsReindex(before: Settings, after: Settings): boolean {
    return geoEnabled(before) !== geoEnabled(after);
  },
};
