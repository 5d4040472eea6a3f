/**
 * Geo reads: radius, bounding box and polygon filters, `_geoPoint` sort and `_geoDistance`.
 *
 * Filters first gather the grid cells overlapping the area (range scans over `[latCell, lngCell]`
 * keys), then check each candidate's exact point.
 */
import { RoaringBitmap32, type Bitmap, type IndexStore } from '../../index/store.js';
import { orDocids } from '../facets/databases.js';
import { haversine, inBoundingBox, inPolygon, lngSpan, radiusBounds, type LatLng } from './distance.js';
import { geoDbs } from './extension.js';
import type { SortCriterion } from '../sort/parse.js';

/** Union of the cells whose latitude row is in [latMin, latMax] and longitude in the ranges. */
function cellsDocids(store: IndexStore, latMin: number, latMax: number, lngRanges: Array<[number, number]>): Bitmap {
  const { cells } = geoDbs(store);
  const out = new RoaringBitmap32();
  const rowFrom = Math.max(-90, Math.floor(latMin));
  const rowTo = Math.min(89, Math.floor(latMax));
  for (let row = rowFrom; row <= rowTo; row++) {
    for (const [from, to] of lngRanges) {
      const colFrom = Math.max(-180, Math.floor(from));
      const colTo = Math.min(179, Math.floor(to));
      for (const { key, value } of cells.getRange({ start: [row, colFrom], end: [row, colTo + 1] })) {
        if (key[0] !== row) break;
        orDocids(out, value);
      }
    }
  }
  return out;
}

function keepPoints(store: IndexStore, candidates: Bitmap, keep: (p: LatLng) => boolean): Bitmap {
  const { points } = geoDbs(store);
  const out = new RoaringBitmap32();
  for (const docid of candidates) {
    const p = points.get(docid);
    if (p && keep(p)) out.add(docid);
  }
  return out;
}

export function geoRadiusDocids(store: IndexStore, center: LatLng, radius: number): Bitmap {
  const { latMin, latMax, lngRanges } = radiusBounds(center, Math.max(0, radius));
  const candidates = cellsDocids(store, latMin, latMax, lngRanges);
  return keepPoints(store, candidates, (p) => haversine(center, p) <= radius);
}

export function geoBoundingBoxDocids(store: IndexStore, topRight: LatLng, bottomLeft: LatLng): Bitmap {
  const left = bottomLeft[1];
  const right = topRight[1];
  const ranges: Array<[number, number]> = left <= right ? [[left, right]] : lngSpan(left, right + 360);
  const candidates = cellsDocids(store, bottomLeft[0], topRight[0], ranges);
  return keepPoints(store, candidates, (p) => inBoundingBox(p, topRight, bottomLeft));
}

export function geoPolygonDocids(store: IndexStore, polygon: readonly LatLng[]): Bitmap {
  const lats = polygon.map((p) => p[0]);
  const lngs = polygon.map((p) => p[1]);
  const candidates = cellsDocids(store, Math.min(...lats), Math.max(...lats), [[Math.min(...lngs), Math.max(...lngs)]]);
  return keepPoints(store, candidates, (p) => inPolygon(p, polygon));
}

/** All documents with a point. */
export function geoDocids(store: IndexStore): Bitmap {
  return cellsDocids(store, -90, 90, [[-180, 180]]);
}

export function geoPoint(store: IndexStore, docid: number): LatLng | undefined {
  return geoDbs(store).points.get(docid);
}

/** `_geoDistance` of a hit: rounded meters from `origin`, or undefined without a point. */
export function geoDistance(store: IndexStore, docid: number, origin: LatLng): number | undefined {
  const p = geoPoint(store, docid);
  return p ? Math.round(haversine(origin, p)) : undefined;
}

/**
 * Candidates ordered by distance to `origin`: one bitmap per distinct distance, nearest first
 * (or farthest first), then the documents without a point.
 */
export function* geoSortBuckets(store: IndexStore, candidates: Bitmap, origin: LatLng, order: 'asc' | 'desc'): Generator<Bitmap> {
  const { points } = geoDbs(store);
  const ids: number[] = [];
  const distances: number[] = [];
  const missing = new RoaringBitmap32();
  for (const docid of candidates) {
    const p = points.get(docid);
    if (p) {
      ids.push(docid);
      distances.push(haversine(origin, p));
    } else missing.add(docid);
  }
  const index = ids.map((_, i) => i);
  index.sort((a, b) => (order === 'asc' ? distances[a]! - distances[b]! : distances[b]! - distances[a]!) || ids[a]! - ids[b]!);
  let i = 0;
  while (i < index.length) {
    const bucket = new RoaringBitmap32();
    const d = distances[index[i]!]!;
    while (i < index.length && distances[index[i]!] === d) bucket.add(ids[index[i++]!]!);
    yield bucket;
  }
  if (!missing.isEmpty) yield missing;
}

/**
 * `_geoDistance` to add to a hit: the distance to the point of the first `_geoPoint` sort
 * criterion, or undefined when the search does not sort by distance or the hit has no point.
 */
export function hitGeoDistance(
  store: IndexStore,
  docid: number,
  criteria: readonly SortCriterion[] | null | undefined,
): number | undefined {
  const geo = criteria?.find((c) => c.kind === 'geo');
  return geo?.kind === 'geo' ? geoDistance(store, docid, geo.point) : undefined;
}
