import type { Tx } from '../db/client.ts';
import { isoTimestamp, NOW_MS } from '../db/sql-fragments.ts';
import { EARTH_RADIUS_M, type Box, type Geometry } from './geometry.ts';
import type { CreateDatasetInput, Dataset } from './geo.schema.ts';

const DATASET_COLUMNS = `id::text as id, key, name, description, feature_count as "featureCount",
  case when min_lon is null then null else json_build_array(min_lon, min_lat, max_lon, max_lat) end as bbox,
  ${isoTimestamp('created_at')} as "createdAt", ${isoTimestamp('updated_at')} as "updatedAt"`;

/** A dataset with what its queries need beyond the record. */
export interface DatasetRow extends Dataset {
  /** The largest latitude extent of one of its features. */
  maxLatSpan: number;
}

export function listDatasets(tx: Tx) {
  return tx.unsafe<Dataset[]>(`select ${DATASET_COLUMNS} from geo_datasets order by key`, [], { prepare: true });
}

export async function countDatasets(tx: Tx): Promise<number> {
  const [row] = await tx<[{ count: number }]>`select count(*)::int as count from geo_datasets`;
  return row.count;
}

/** The dataset of this key; `lock` holds it until commit, so ingests into it run one at a time. */
export async function findDataset(tx: Tx, key: string, lock = false): Promise<DatasetRow | undefined> {
  const rows = await tx.unsafe<DatasetRow[]>(
    `select ${DATASET_COLUMNS}, max_lat_span as "maxLatSpan" from geo_datasets where key = $1 ${lock ? 'for update' : ''}`,
    [key],
    { prepare: true },
  );
  return rows[0];
}

/** Inserts a dataset; PostgreSQL's unique violation (23505) when the key is taken. */
export async function insertDataset(tx: Tx, input: CreateDatasetInput, createdBy: string): Promise<Dataset> {
  const rows = await tx.unsafe<Dataset[]>(
    `insert into geo_datasets (tenant_id, key, name, description, created_by, created_at, updated_at)
     values (current_tenant_id(), $1, $2, $3, $4::uuid, ${NOW_MS}, ${NOW_MS})
     returning ${DATASET_COLUMNS}`,
    [input.key, input.name ?? input.key, input.description ?? null, createdBy],
  );
  return rows[0]!;
}

/** Sets the dataset's name and description where given; undefined when there is none of that key. */
export async function updateDataset(tx: Tx, key: string, fields: { name?: string; description?: string | null }): Promise<Dataset | undefined> {
  const rows = await tx.unsafe<Dataset[]>(
    `update geo_datasets set name = coalesce($2, name), description = case when $3::boolean then $4 else description end, updated_at = ${NOW_MS}
     where key = $1 returning ${DATASET_COLUMNS}`,
    [key, fields.name ?? null, fields.description !== undefined, fields.description ?? null],
  );
  return rows[0];
}

/** Deletes a dataset and its features; false when there was none of that key. */
export async function deleteDataset(tx: Tx, key: string): Promise<boolean> {
  return (await tx`delete from geo_datasets where key = ${key} returning 1`).length > 0;
}

/** Deletes the dataset's features whose ids are not among `kept`; how many went. */
export async function deleteFeaturesExcept(tx: Tx, datasetId: string, kept: readonly string[]): Promise<number> {
  return (await tx`delete from geo_features where dataset_id = ${datasetId}::uuid
    and not fid = any(array(select jsonb_array_elements_text(${JSON.stringify(kept)}::text::jsonb)))`).count;
}

/** A feature as stored: its GeoJSON id as text (whether it was a number), geometry, properties and box. */
export interface FeatureRow {
  fid: string;
  fidIsNumber: boolean;
  geometry: Geometry;
  properties: Record<string, unknown> | null;
  bounds: Box;
}

/** Inserts the features, each replacing the dataset's feature of its id; counts those that were new. */
export async function upsertFeatures(tx: Tx, datasetId: string, features: readonly FeatureRow[]): Promise<{ created: number; updated: number }> {
  if (features.length === 0) return { created: 0, updated: 0 };
  const rows = await tx.unsafe<{ created: boolean }[]>(
    `insert into geo_features (tenant_id, dataset_id, fid, fid_is_number, geometry_type, geometry, properties, min_lon, min_lat, max_lon, max_lat)
     select current_tenant_id(), $1::uuid, f.fid, f.is_number, f.geometry ->> 'type', f.geometry, f.properties, f.west, f.south, f.east, f.north
     from jsonb_to_recordset($2::text::jsonb)
       as f (fid text, is_number boolean, geometry jsonb, properties jsonb, west float8, south float8, east float8, north float8)
     on conflict (dataset_id, fid) do update set fid_is_number = excluded.fid_is_number, geometry_type = excluded.geometry_type,
       geometry = excluded.geometry, properties = excluded.properties,
       min_lon = excluded.min_lon, min_lat = excluded.min_lat, max_lon = excluded.max_lon, max_lat = excluded.max_lat
     returning (xmax = 0) as created`,
    [
      datasetId,
      JSON.stringify(
        features.map((f) => ({ fid: f.fid, is_number: f.fidIsNumber, geometry: f.geometry, properties: f.properties, west: f.bounds.west, south: f.bounds.south, east: f.bounds.east, north: f.bounds.north })),
      ),
    ],
  );
  const created = rows.filter((r) => r.created).length;
  return { created, updated: rows.length - created };
}

/** Recounts the dataset's features and their extent after a change; the record as it now stands. */
export async function refreshDataset(tx: Tx, datasetId: string): Promise<Dataset> {
  await tx.unsafe(
    `update geo_datasets d set feature_count = s.count, min_lon = s.west, min_lat = s.south, max_lon = s.east, max_lat = s.north,
       max_lat_span = coalesce(s.span, 0), updated_at = ${NOW_MS}
     from (select count(*)::int as count, min(min_lon) as west, min(min_lat) as south, max(max_lon) as east, max(max_lat) as north,
             max(max_lat - min_lat) as span
           from geo_features where dataset_id = $1::uuid) s
     where d.id = $1::uuid`,
    [datasetId],
  );
  const rows = await tx.unsafe<Dataset[]>(`select ${DATASET_COLUMNS} from geo_datasets where id = $1::uuid`, [datasetId]);
  return rows[0]!;
}

export interface StoredFeature extends FeatureRow {
  id: string;
}

const FEATURE_COLUMNS = `id::text as id, fid, fid_is_number as "fidIsNumber", geometry, properties,
  json_build_object('west', min_lon, 'south', min_lat, 'east', max_lon, 'north', max_lat) as bounds`;

/**
 * Where a query looks: latitudes from `south` to `north` and longitude ranges (several when an
 * area crosses the antimeridian). A feature qualifies when its box meets the area. The dataset's
 * `span` bounds how far south of the area such a feature can start, so that the btree on
 * (dataset, southern edge) scans only a band of the dataset.
 */
export interface Area {
  south: number;
  north: number;
  lonRanges: ReadonlyArray<{ west: number; east: number }>;
  span: number;
}

function areaCondition(area: Area, params: unknown[]): string {
  const at = (value: unknown) => `$${params.push(value)}`;
  const lon = area.lonRanges.map((range) => `(min_lon <= ${at(range.east)} and max_lon >= ${at(range.west)})`).join(' or ');
  return `min_lat >= ${at(area.south - area.span)} and min_lat <= ${at(area.north)} and max_lat >= ${at(area.south)} and (${lon})`;
}

/** Up to `limit` features whose box meets the area, by southern edge then id, after the `after` key. */
export function featuresInArea(tx: Tx, datasetId: string, area: Area, after: { minLat: number; id: string } | null, limit: number) {
  const params: unknown[] = [datasetId];
  const where = areaCondition(area, params);
  const keyset = after ? `and (min_lat, id) > ($${params.push(after.minLat)}, $${params.push(after.id)}::uuid)` : '';
  return tx.unsafe<Array<StoredFeature & { minLat: number }>>(
    `select ${FEATURE_COLUMNS}, min_lat as "minLat" from geo_features
     where dataset_id = $1::uuid and ${where} ${keyset}
     order by geo_features.min_lat, geo_features.id limit $${params.push(limit)}`,
    params as never[],
  );
}

/** Great-circle meters from ($lat, $lon) to a point feature's position, in SQL. */
const POINT_DISTANCE = (lat: string, lon: string) =>
  `2 * ${EARTH_RADIUS_M} * asin(sqrt(least(1, sin(radians(min_lat - ${lat}) / 2) ^ 2 + cos(radians(${lat})) * cos(radians(min_lat)) * sin(radians(min_lon - ${lon}) / 2) ^ 2)))`;

/** Up to `limit` point features within `radius` meters, nearest first, after the `after` key. */
export function pointsNear(
  tx: Tx,
  datasetId: string,
  near: { lat: number; lon: number; radius: number; area: Area },
  after: { distance: number; id: string } | null,
  limit: number,
) {
  const params: unknown[] = [datasetId, near.lat, near.lon, near.radius];
  const where = areaCondition({ ...near.area, span: 0 }, params);
  const keyset = after ? `and (distance, id::uuid) > ($${params.push(after.distance)}::float8, $${params.push(after.id)}::uuid)` : '';
  return tx.unsafe<Array<StoredFeature & { distance: number }>>(
    `select * from (
       select ${FEATURE_COLUMNS}, ${POINT_DISTANCE('$2::float8', '$3::float8')} as distance from geo_features
       where dataset_id = $1::uuid and geometry_type = 'Point' and ${where}
     ) near
     where distance <= $4::float8 ${keyset}
     order by distance, id::uuid limit $${params.push(limit)}`,
    params as never[],
  );
}

/** Every feature other than a point whose box meets the area (their distances are measured in TypeScript). */
export function shapesInArea(tx: Tx, datasetId: string, area: Area) {
  const params: unknown[] = [datasetId];
  const where = areaCondition(area, params);
  return tx.unsafe<StoredFeature[]>(`select ${FEATURE_COLUMNS} from geo_features where dataset_id = $1::uuid and geometry_type <> 'Point' and ${where}`, params as never[]);
}
