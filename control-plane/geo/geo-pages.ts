/**
 * The pages of a dataset's features that feature queries and reports read: by box (southern edge,
 * then id) and by radius (nearest first), each with its cursor.
 */
import type { Tx } from '../db/client.ts';
import { NotFoundError } from '../errors.ts';
import { decodeCursor, encodeCursor, queryFingerprint } from '../query/cursor.ts';
import { boxesAround, boxWithin, meetsBox, metersToGeometry, type Box } from './geometry.ts';
import { featuresInArea, findDataset, pointsNear, shapesInArea, type Area, type DatasetRow, type StoredFeature } from './geo.repo.ts';
import type { Feature, FeaturePage, QueryFeaturesInput } from './geo.schema.ts';

export const WHOLE_WORLD: Box = { west: -180, south: -90, east: 180, north: 90 };

/** Boxes that share their latitudes (a box cut at the antimeridian) as the area a query scans. */
const areaOf = (boxes: readonly Box[], span: number): Area => ({
  south: boxes[0]!.south,
  north: boxes[0]!.north,
  lonRanges: boxes.map(({ west, east }) => ({ west, east })),
  span,
});

const toFeature = (row: StoredFeature, distance?: number): Feature => ({
  type: 'Feature',
  id: row.fidIsNumber ? Number(row.fid) : row.fid,
  geometry: row.geometry as Feature['geometry'],
  properties: row.properties,
  ...(distance === undefined ? {} : { distanceMeters: Math.round(distance * 10) / 10 }),
});

/** Orders by distance, then id (PostgreSQL orders uuids as their lower-case text). */
const nearestFirst = (a: { distance: number; id: string }, b: { distance: number; id: string }) => a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The dataset of that key as the tenant sees it; 404 when it has none. */
export async function datasetOf(tx: Tx, key: string, lock = false): Promise<DatasetRow> {
  const dataset = await findDataset(tx, key, lock);
  if (!dataset) throw new NotFoundError(`dataset "${key}"`);
  return dataset;
}

export /** A page of the features whose geometry meets the boxes, by southern edge then id. */
async function pageInBoxes(tx: Tx, dataset: DatasetRow, boxes: readonly Box[], input: QueryFeaturesInput): Promise<FeaturePage> {
  const fingerprint = queryFingerprint({ dataset: dataset.id, bbox: input.bbox ?? null });
  const key = input.cursor ? decodeCursor(input.cursor, fingerprint, 2) : undefined;
  let after = key ? { minLat: Number(key[0]), id: String(key[1]) } : null;
  const area = areaOf(boxes, dataset.maxLatSpan);
  const batch = Math.max(2 * (input.limit + 1), 200);
  const found: Array<StoredFeature & { minLat: number }> = [];
  // A box is a candidate filter: a line or polygon whose box meets the area may still miss it.
  for (;;) {
    const rows = await featuresInArea(tx, dataset.id, area, after, batch);
    for (const row of rows) {
      if (row.geometry.type === 'Point' || boxes.some((box) => boxWithin(row.bounds, box)) || boxes.some((box) => meetsBox(row.geometry, box))) found.push(row);
      if (found.length > input.limit) break;
    }
    if (found.length > input.limit || rows.length < batch) break;
    after = { minLat: rows.at(-1)!.minLat, id: rows.at(-1)!.id };
  }
  const page = found.slice(0, input.limit);
  const last = page.at(-1);
  return {
    type: 'FeatureCollection',
    features: page.map((row) => toFeature(row)),
    nextCursor: found.length > input.limit && last ? encodeCursor(fingerprint, [String(last.minLat), last.id]) : null,
  };
}

export /** A page of the features within the radius, nearest first: points measured in SQL, other shapes here. */
async function pageNear(tx: Tx, dataset: DatasetRow, input: QueryFeaturesInput & { lat: number; lon: number; radius: number }): Promise<FeaturePage> {
  const { lat, lon, radius, limit } = input;
  const fingerprint = queryFingerprint({ dataset: dataset.id, lat, lon, radius });
  const key = input.cursor ? decodeCursor(input.cursor, fingerprint, 2) : undefined;
  const after = key ? { distance: Number(key[0]), id: String(key[1]) } : null;
  const area = areaOf(boxesAround(lat, lon, radius), dataset.maxLatSpan);
  const points = await pointsNear(tx, dataset.id, { lat, lon, radius, area }, after, limit + 1);
  const shapes = (await shapesInArea(tx, dataset.id, area))
    .map((row) => ({ ...row, distance: metersToGeometry(lat, lon, row.geometry) }))
    .filter((row) => row.distance <= radius && (!after || nearestFirst(row, after) > 0));
  const found = [...points, ...shapes].sort(nearestFirst).slice(0, limit + 1);
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return {
    type: 'FeatureCollection',
    features: page.map((row) => toFeature(row, row.distance)),
    nextCursor: found.length > limit && last ? encodeCursor(fingerprint, [String(last.distance), last.id]) : null,
  };
}
