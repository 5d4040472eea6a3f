/** Geometry on `[lat, lng]` points in degrees: great-circle distance, boxes and polygons. */

export type LatLng = [lat: number, lng: number];

/** Mean Earth radius, in meters. */
export const EARTH_RADIUS = 6_371_008.8;

const RAD = Math.PI / 180;

/** Haversine great-circle distance in meters. */
export function haversine(a: LatLng, b: LatLng): number {
  const dLat = (b[0] - a[0]) * RAD;
  const dLng = (b[1] - a[1]) * RAD;
  const s =
    Math.sin(dLat / 2) ** 2 + Math.cos(a[0] * RAD) * Math.cos(b[0] * RAD) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS * Math.asin(Math.min(1, Math.sqrt(s)));
}

/**
 * Whether `p` is inside the box given by its top-right and bottom-left corners. When the right
 * longitude is west of the left one, the box crosses the antimeridian.
 */
export function inBoundingBox(p: LatLng, topRight: LatLng, bottomLeft: LatLng): boolean {
  if (p[0] > topRight[0] || p[0] < bottomLeft[0]) return false;
  const left = bottomLeft[1];
  const right = topRight[1];
  return left <= right ? p[1] >= left && p[1] <= right : p[1] >= left || p[1] <= right;
}

/** Point in polygon (even-odd rule) in the lat/lng plane; points on an edge count as inside. */
export function inPolygon(p: LatLng, polygon: readonly LatLng[]): boolean {
  const [y, x] = p;
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [yi, xi] = polygon[i]!;
    const [yj, xj] = polygon[j]!;
    if (onSegment(x, y, xi, yi, xj, yj)) return true;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function onSegment(x: number, y: number, x1: number, y1: number, x2: number, y2: number): boolean {
  const cross = (x - x1) * (y2 - y1) - (y - y1) * (x2 - x1);
  if (Math.abs(cross) > 1e-12) return false;
  return x >= Math.min(x1, x2) && x <= Math.max(x1, x2) && y >= Math.min(y1, y2) && y <= Math.max(y1, y2);
}

/** Latitude/longitude extent that contains every point within `radius` meters of `center`. */
export function radiusBounds(center: LatLng, radius: number): { latMin: number; latMax: number; lngRanges: Array<[number, number]> } {
  const angular = radius / EARTH_RADIUS; // radians
  const dLat = angular / RAD;
  const latMin = center[0] - dLat;
  const latMax = center[0] + dLat;
  if (latMin <= -90 || latMax >= 90 || angular >= Math.PI / 2) {
    return { latMin: Math.max(-90, latMin), latMax: Math.min(90, latMax), lngRanges: [[-180, 180]] };
  }
  const dLng = Math.asin(Math.min(1, Math.sin(angular) / Math.cos(center[0] * RAD))) / RAD;
  return { latMin, latMax, lngRanges: lngSpan(center[1] - dLng, center[1] + dLng) };
}

/** Split a longitude interval that may cross the antimeridian into plain intervals. */
export function lngSpan(from: number, to: number): Array<[number, number]> {
  if (to - from >= 360) return [[-180, 180]];
  if (from < -180) return [[from + 360, 180], [-180, to]];
  if (to > 180) return [[from, 180], [-180, to - 360]];
  return [[from, to]];
}
