/**
 * Geometry on GeoJSON coordinates (RFC 7946: WGS 84 longitude and latitude in degrees). Boxes and
 * containment are judged on the plane of longitude and latitude, as RFC 7946 draws lines between
 * positions; distances are great-circle distances on a sphere of the Earth's mean radius.
 */

/** The IUGG mean Earth radius in meters. */
export const EARTH_RADIUS_M = 6_371_008.8;

export type Position = number[];
export type Geometry =
  | { type: 'Point'; coordinates: Position }
  | { type: 'MultiPoint'; coordinates: Position[] }
  | { type: 'LineString'; coordinates: Position[] }
  | { type: 'MultiLineString'; coordinates: Position[][] }
  | { type: 'Polygon'; coordinates: Position[][] }
  | { type: 'MultiPolygon'; coordinates: Position[][][] }
  | { type: 'GeometryCollection'; geometries: Geometry[] };

/** A box that does not cross the antimeridian: west <= east, south <= north. */
export interface Box {
  west: number;
  south: number;
  east: number;
  north: number;
}

const RAD = Math.PI / 180;

/** Great-circle distance in meters between two positions given as latitude and longitude. */
export function haversineMeters(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(Math.min(1, h)));
}

/** Every position of a geometry, depth first. */
function* positionsOf(geometry: Geometry): Generator<Position> {
  switch (geometry.type) {
    case 'Point':
      yield geometry.coordinates;
      return;
    case 'MultiPoint':
    case 'LineString':
      yield* geometry.coordinates;
      return;
    case 'MultiLineString':
    case 'Polygon':
      for (const line of geometry.coordinates) yield* line;
      return;
    case 'MultiPolygon':
      for (const polygon of geometry.coordinates) for (const ring of polygon) yield* ring;
      return;
    case 'GeometryCollection':
      for (const member of geometry.geometries) yield* positionsOf(member);
  }
}

/** How many positions a geometry holds. */
export function positionCount(geometry: Geometry): number {
  let count = 0;
  for (const _ of positionsOf(geometry)) count++;
  return count;
}

/** The smallest box holding every position (RFC 7946 asks that geometries be cut at the antimeridian). */
export function boundsOf(geometry: Geometry): Box {
  const box = { west: Infinity, south: Infinity, east: -Infinity, north: -Infinity };
  for (const [lon, lat] of positionsOf(geometry)) {
    box.west = Math.min(box.west, lon!);
    box.east = Math.max(box.east, lon!);
    box.south = Math.min(box.south, lat!);
    box.north = Math.max(box.north, lat!);
  }
  return box;
}

/**
 * A GeoJSON bbox `[west, south, east, north]` as boxes that do not cross the antimeridian: one,
 * or two when west > east (RFC 7946 section 5.2: the box crosses the antimeridian).
 */
export function boxesOfBbox([west, south, east, north]: readonly [number, number, number, number]): Box[] {
  if (west <= east) return [{ west, south, east, north }];
  return [
    { west, south, east: 180, north },
    { west: -180, south, east, north },
  ];
}

/** Boxes holding every point within `radius` meters of a center: the spherical cap's extent, cut at the antimeridian. */
export function boxesAround(lat: number, lon: number, radius: number): Box[] {
  const angle = radius / EARTH_RADIUS_M;
  const dLat = angle / RAD;
  const south = lat - dLat;
  const north = lat + dLat;
  if (north >= 90 || south <= -90 || angle >= Math.PI / 2) {
    // The cap holds a pole: every longitude.
    return [{ west: -180, south: Math.max(-90, south), east: 180, north: Math.min(90, north) }];
  }
  const dLon = Math.asin(Math.min(1, Math.sin(angle) / Math.cos(lat * RAD))) / RAD;
  const west = lon - dLon;
  const east = lon + dLon;
  if (west < -180) return [{ west: west + 360, south, east: 180, north }, { west: -180, south, east, north }];
  if (east > 180) return [{ west, south, east: 180, north }, { west: -180, south, east: east - 360, north }];
  return [{ west, south, east, north }];
}

const inBox = ([lon, lat]: Position, box: Box) => lon! >= box.west && lon! <= box.east && lat! >= box.south && lat! <= box.north;

export const boxesOverlap = (a: Box, b: Box) => a.west <= b.east && a.east >= b.west && a.south <= b.north && a.north >= b.south;

export const boxWithin = (inner: Box, outer: Box) => inner.west >= outer.west && inner.east <= outer.east && inner.south >= outer.south && inner.north <= outer.north;

/** Whether the segment a-b meets the box (Liang-Barsky clipping). */
function segmentMeetsBox(a: Position, b: Position, box: Box): boolean {
  const [x0, y0] = a as [number, number];
  const dx = b[0]! - x0;
  const dy = b[1]! - y0;
  let t0 = 0;
  let t1 = 1;
  const edges: Array<[number, number]> = [
    [-dx, x0 - box.west],
    [dx, box.east - x0],
    [-dy, y0 - box.south],
    [dy, box.north - y0],
  ];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q < 0) return false;
    } else {
      const t = q / p;
      if (p < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
      if (t0 > t1) return false;
    }
  }
  return true;
}

const lineMeetsBox = (line: Position[], box: Box) => line.some((p, i) => i > 0 && segmentMeetsBox(line[i - 1]!, p, box)) || (line.length === 1 && inBox(line[0]!, box));

/** Even-odd test of a point against one ring. */
function inRing([x, y]: Position, ring: Position[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i] as [number, number];
    const [xj, yj] = ring[j] as [number, number];
    if (yi > y! !== yj > y! && x! < ((xj - xi) * (y! - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Inside the exterior ring and in none of the holes. */
const inPolygon = (point: Position, rings: Position[][]) => inRing(point, rings[0]!) && !rings.slice(1).some((hole) => inRing(point, hole));

function polygonMeetsBox(rings: Position[][], box: Box): boolean {
  if (rings.some((ring) => lineMeetsBox(ring, box))) return true;
  // No edge meets the box: the box lies wholly inside the polygon or wholly outside it.
  return inPolygon([(box.west + box.east) / 2, (box.south + box.north) / 2], rings);
}

/** Whether the geometry meets the box anywhere (its edges included). */
export function meetsBox(geometry: Geometry, box: Box): boolean {
  switch (geometry.type) {
    case 'Point':
      return inBox(geometry.coordinates, box);
    case 'MultiPoint':
      return geometry.coordinates.some((p) => inBox(p, box));
    case 'LineString':
      return lineMeetsBox(geometry.coordinates, box);
    case 'MultiLineString':
      return geometry.coordinates.some((line) => lineMeetsBox(line, box));
    case 'Polygon':
      return polygonMeetsBox(geometry.coordinates, box);
    case 'MultiPolygon':
      return geometry.coordinates.some((polygon) => polygonMeetsBox(polygon, box));
    case 'GeometryCollection':
      return geometry.geometries.some((member) => meetsBox(member, box));
  }
}

type Vector = [number, number, number];

const toVector = ([lon, lat]: Position): Vector => {
  const φ = lat! * RAD;
  const λ = lon! * RAD;
  return [Math.cos(φ) * Math.cos(λ), Math.cos(φ) * Math.sin(λ), Math.sin(φ)];
};
const dot = (a: Vector, b: Vector) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: Vector, b: Vector): Vector => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a: Vector) => Math.sqrt(dot(a, a));
/** The angle between two unit vectors, stable for tiny and near-opposite angles. */
const angleBetween = (a: Vector, b: Vector) => Math.atan2(norm(cross(a, b)), dot(a, b));

/** Angular distance from p to the great-circle arc a-b (the shorter arc). */
function angleToArc(p: Vector, a: Vector, b: Vector): number {
  const n = cross(a, b);
  const length = norm(n);
  const toEnds = Math.min(angleBetween(p, a), angleBetween(p, b));
  if (length < 1e-15) return toEnds;
  const unit: Vector = [n[0] / length, n[1] / length, n[2] / length];
  // p's foot on the great circle lies on the arc when it is between a and b as seen along n.
  const along = dot(p, unit);
  const foot: Vector = [p[0] - along * unit[0], p[1] - along * unit[1], p[2] - along * unit[2]];
  if (dot(cross(a, foot), unit) >= 0 && dot(cross(foot, b), unit) >= 0) return Math.asin(Math.min(1, Math.abs(along)));
  return toEnds;
}

/** The least of fn over items, without spreading them into arguments (a geometry may hold many). */
function leastOf<T>(items: readonly T[], fn: (item: T) => number): number {
  let least = Infinity;
  for (const item of items) least = Math.min(least, fn(item));
  return least;
}

function angleToLine(p: Vector, line: Position[]): number {
  const vectors = line.map(toVector);
  if (vectors.length === 1) return angleBetween(p, vectors[0]!);
  let least = Infinity;
  for (let i = 1; i < vectors.length; i++) least = Math.min(least, angleToArc(p, vectors[i - 1]!, vectors[i]!));
  return least;
}

const angleToPolygon = (point: Position, p: Vector, rings: Position[][]) => (inPolygon(point, rings) ? 0 : leastOf(rings, (ring) => angleToLine(p, ring)));

function angleToGeometry(point: Position, p: Vector, geometry: Geometry): number {
  switch (geometry.type) {
    case 'Point':
      return angleBetween(p, toVector(geometry.coordinates));
    case 'MultiPoint':
      return leastOf(geometry.coordinates, (c) => angleBetween(p, toVector(c)));
    case 'LineString':
      return angleToLine(p, geometry.coordinates);
    case 'MultiLineString':
      return leastOf(geometry.coordinates, (line) => angleToLine(p, line));
    case 'Polygon':
      return angleToPolygon(point, p, geometry.coordinates);
    case 'MultiPolygon':
      return leastOf(geometry.coordinates, (rings) => angleToPolygon(point, p, rings));
    case 'GeometryCollection':
      return leastOf(geometry.geometries, (member) => angleToGeometry(point, p, member));
  }
}

/**
 * Meters from a point to the nearest part of a geometry: 0 inside a polygon (holes excepted);
 * along great circles to points, and to lines and polygon edges.
 */
export function metersToGeometry(lat: number, lon: number, geometry: Geometry): number {
  if (geometry.type === 'Point') return haversineMeters(lat, lon, geometry.coordinates[1]!, geometry.coordinates[0]!);
  return angleToGeometry([lon, lat], toVector([lon, lat]), geometry) * EARTH_RADIUS_M;
}
