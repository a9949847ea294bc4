import { z } from 'zod';
import { LimitSchema, limitDefaulting } from '../query/paging.ts';

/** The most features one ingest takes (the 1 MiB body limit usually comes first). */
export const MAX_FEATURES_PER_INGEST = 10_000;
/** The most features a dataset holds unless the tenant's `geo` capability sets `maxFeaturesPerDataset`. */
export const MAX_FEATURES_PER_DATASET = 100_000;
/** The most datasets a tenant holds unless its `geo` capability sets `maxDatasets`. */
export const MAX_DATASETS_PER_TENANT = 100;
/** The largest radius of a dataset query: a wider area is a box query's. */
export const MAX_QUERY_RADIUS_M = 1_000_000;
/** Half the Earth's circumference: a reverse lookup within it reaches every place. */
export const MAX_REVERSE_RADIUS_M = 20_037_509;

const LATITUDE = 'must be a latitude in degrees, from -90 to 90';
const LONGITUDE = 'must be a longitude in degrees, from -180 to 180';
export const LatitudeSchema = z.number({ error: LATITUDE }).min(-90, LATITUDE).max(90, LATITUDE);
export const LongitudeSchema = z.number({ error: LONGITUDE }).min(-180, LONGITUDE).max(180, LONGITUDE);

/** A decimal number as a query string writes it (`-33.86`, `1e3`), or the number itself. */
const decimal = (value: unknown) => (typeof value === 'string' ? (/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value) ? Number(value) : Number.NaN) : value);
const fromQuery = <T extends z.ZodType>(schema: T) => z.preprocess(decimal, schema);

export const CountryCodeSchema = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code, such as FR')
  .transform((code) => code.toUpperCase());

/** A place of the gazetteer (GeoNames). */
export const PlaceSchema = z.object({
  geonameId: z.number().int(),
  name: z.string(),
  countryCode: z.string(),
  countryName: z.string(),
  admin1Code: z.string(),
  featureCode: z.string(),
  population: z.number().int(),
  lat: z.number(),
  lon: z.number(),
});

export const ResolveLocationInputSchema = z
  .object({
    /** A place name, optionally followed by a country or first-level division: `Paris`, `Springfield, IL`, `London, Canada`. */
    query: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200).regex(/[\p{L}\p{N}]/u, 'must name a place: it holds no letter or digit'),
    limit: limitDefaulting(10),
    country: CountryCodeSchema.optional(),
  })
  .strict();
export type ResolveLocationInput = z.infer<typeof ResolveLocationInputSchema>;

export const ResolvedLocationsSchema = z.object({
  interpreted: z.object({ name: z.string(), country: z.string().nullable(), admin1: z.string().nullable() }),
  data: z.array(PlaceSchema.extend({ match: z.enum(['exact', 'prefix', 'word', 'fuzzy']), score: z.number() })),
  attribution: z.string(),
});

export const ReverseInputSchema = z
  .object({
    lat: LatitudeSchema,
    lon: LongitudeSchema,
    limit: limitDefaulting(5),
    /** Only places within this many meters. */
    radius: z.number().positive('must be greater than 0').max(MAX_REVERSE_RADIUS_M, `must be at most ${MAX_REVERSE_RADIUS_M} meters`).optional(),
    country: CountryCodeSchema.optional(),
  })
  .strict();
export type ReverseInput = z.infer<typeof ReverseInputSchema>;

export const NearbyPlacesSchema = z.object({
  data: z.array(PlaceSchema.extend({ distanceMeters: z.number() })),
  attribution: z.string(),
});

export const DatasetKeySchema = z
  .string({ error: 'is required' })
  .min(1, 'is required')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be kebab-case: lower-case letters and digits in words joined by single hyphens, such as city-parks');

/** A box as GeoJSON writes it: `[west, south, east, north]`. */
export const BboxSchema = z.tuple([LongitudeSchema, LatitudeSchema, LongitudeSchema, LatitudeSchema]);

export const DatasetSchema = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  featureCount: z.number().int(),
  /** The extent of its features, `[west, south, east, north]`; null while it has none. */
  bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Dataset = z.infer<typeof DatasetSchema>;

export const CreateDatasetInputSchema = z
  .object({
    key: DatasetKeySchema,
    name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
    description: z.string().max(2000).optional(),
  })
  .strict();
export type CreateDatasetInput = z.infer<typeof CreateDatasetInputSchema>;

export const DatasetRefSchema = z.object({ dataset: DatasetKeySchema }).strict();

const datasetFields = {
  name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
};
const changesSomething = (fields: { name?: string; description?: string | null }) => fields.name !== undefined || fields.description !== undefined;
const NOTHING_CHANGED = { message: 'must change name or description', path: ['(body)'] };

/** A dataset's name and description, changed as a merge patch: a field left out stays, a null description clears it. */
export const UpdateDatasetFieldsSchema = z.object(datasetFields).strict().refine(changesSomething, NOTHING_CHANGED);
export const UpdateDatasetInputSchema = z
  .object({ dataset: DatasetKeySchema, ...datasetFields })
  .strict()
  .refine(changesSomething, NOTHING_CHANGED);
export type UpdateDatasetInput = z.infer<typeof UpdateDatasetInputSchema>;

/** `[longitude, latitude]` or `[longitude, latitude, altitude]`, in WGS 84 degrees (RFC 7946). */
export const PositionSchema = z
  .array(z.number({ error: 'must be a number' }), { error: 'must be a position: [longitude, latitude]' })
  .min(2, 'must be a position: [longitude, latitude] or [longitude, latitude, altitude]')
  .max(3, 'must be a position: [longitude, latitude] or [longitude, latitude, altitude]')
  .superRefine((position, ctx) => {
    if (Math.abs(position[0]!) > 180) ctx.addIssue({ code: 'custom', path: [0], message: LONGITUDE });
    if (Math.abs(position[1]!) > 90) ctx.addIssue({ code: 'custom', path: [1], message: LATITUDE });
  });

const LineSchema = z.array(PositionSchema).min(2, 'must hold at least 2 positions');
const samePosition = (a: number[], b: number[]) => a.length === b.length && a.every((v, i) => v === b[i]);
const RingSchema = z
  .array(PositionSchema)
  .min(4, 'must be a closed ring of at least 4 positions')
  .refine((ring) => samePosition(ring[0]!, ring[ring.length - 1]!), 'must be closed: its last position must equal its first');
const PolygonCoordinatesSchema = z.array(RingSchema).min(1, 'must hold an exterior ring');

const simpleGeometries = [
  z.object({ type: z.literal('Point'), coordinates: PositionSchema }),
  z.object({ type: z.literal('MultiPoint'), coordinates: z.array(PositionSchema) }),
  z.object({ type: z.literal('LineString'), coordinates: LineSchema }),
  z.object({ type: z.literal('MultiLineString'), coordinates: z.array(LineSchema) }),
  z.object({ type: z.literal('Polygon'), coordinates: PolygonCoordinatesSchema }),
  z.object({ type: z.literal('MultiPolygon'), coordinates: z.array(PolygonCoordinatesSchema) }),
] as const;
const GEOMETRY_TYPES = 'Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon or GeometryCollection';
const SimpleGeometrySchema = z.discriminatedUnion('type', simpleGeometries, { error: `must be a geometry of type ${GEOMETRY_TYPES.replace(' or GeometryCollection', '')}` });

/** A GeoJSON geometry (RFC 7946 section 3.1); a collection holds no collection. Foreign members are dropped. */
export const GeometrySchema = z.discriminatedUnion(
  'type',
  [...simpleGeometries, z.object({ type: z.literal('GeometryCollection'), geometries: z.array(SimpleGeometrySchema).min(1, 'must hold a geometry') })],
  { error: `must be a GeoJSON geometry: type ${GEOMETRY_TYPES}` },
);
export type GeometryInput = z.infer<typeof GeometrySchema>;

const FeatureIdSchema = z.union([z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters'), z.number().int('must be a whole number or a string')], {
  error: 'must be a string or a whole number',
});

export const FeatureInputSchema = z.object({
  type: z.literal('Feature', { error: 'must be "Feature"' }),
  id: FeatureIdSchema.optional(),
  geometry: GeometrySchema.nullable().refine((geometry) => geometry !== null, 'is required: a feature without a location cannot be found by place'),
  properties: z.record(z.string(), z.unknown(), { error: 'must be an object or null' }).nullable().optional(),
});

/** A `crs` member (GeoJSON 2008) naming anything but WGS 84 longitude and latitude is refused: the coordinates would be misread. */
const WGS84_NAMES = new Set(['urn:ogc:def:crs:OGC:1.3:CRS84', 'urn:ogc:def:crs:OGC::CRS84', 'EPSG:4326', 'urn:ogc:def:crs:EPSG::4326']);
const CrsSchema = z.unknown().refine((crs) => {
  const name = (crs as { properties?: { name?: unknown } } | null)?.properties?.name;
  return typeof name === 'string' && WGS84_NAMES.has(name);
}, 'must name WGS 84 (urn:ogc:def:crs:OGC:1.3:CRS84): coordinates are longitude and latitude in degrees');

/** A GeoJSON FeatureCollection (RFC 7946): up to MAX_FEATURES_PER_INGEST features, each with a geometry. Foreign members are ignored. */
export const FeatureCollectionInputSchema = z.object({
  type: z.literal('FeatureCollection', { error: 'must be "FeatureCollection"' }),
  features: z.array(FeatureInputSchema, { error: 'must be an array of features' }).max(MAX_FEATURES_PER_INGEST, `must hold at most ${MAX_FEATURES_PER_INGEST} features per request`),
  crs: CrsSchema.optional(),
});

/** A FeatureCollection for a dataset; ids, when given, unique within it. */
export const IngestInputSchema = FeatureCollectionInputSchema.extend({
  dataset: DatasetKeySchema,
  /** True: the collection replaces every feature of the dataset (PUT); false: it adds to them, replacing those of the same id (POST). */
  replace: z.boolean().default(false),
}).superRefine((input, ctx) => {
  const seen = new Set<string>();
  input.features.forEach((feature, i) => {
    if (feature.id === undefined) return;
    const id = String(feature.id);
    if (seen.has(id)) ctx.addIssue({ code: 'custom', path: ['features', i, 'id'], message: `is given to another feature of the collection too (${id})` });
    seen.add(id);
  });
});
export type IngestInput = z.infer<typeof IngestInputSchema>;

export const IngestOutcomeSchema = z.object({
  dataset: DatasetSchema,
  /** Features new to the dataset. */
  created: z.number().int(),
  /** Features that replaced one of the same id. */
  updated: z.number().int(),
  /** Features removed because the collection replaced the dataset (PUT). */
  removed: z.number().int(),
});

const BBOX_ISSUE = 'must be west,south,east,north in degrees, such as 2.25,48.8,2.42,48.9';
/** `bbox` as the query string writes it (`west,south,east,north`), or its four numbers. */
const BboxQuerySchema = z.preprocess((value) => (typeof value === 'string' ? value.split(',').map(decimal) : value), z.array(z.number({ error: BBOX_ISSUE }), { error: BBOX_ISSUE }).length(4, BBOX_ISSUE)).pipe(
  BboxSchema.refine(([, south, , north]) => south <= north, { message: 'must have its south edge at or below its north edge (west,south,east,north); west may exceed east for a box across the antimeridian' }),
);

/**
 * A dataset's features: all of them, those meeting a box (`bbox`), or those within `radius`
 * meters of `lat`,`lon` (nearest first). Pages of `limit`, the next one by `cursor`.
 */
export const QueryFeaturesInputSchema = z
  .object({
    dataset: DatasetKeySchema,
    bbox: BboxQuerySchema.optional(),
    lat: fromQuery(LatitudeSchema).optional(),
    lon: fromQuery(LongitudeSchema).optional(),
    radius: fromQuery(
      z
        .number({ error: 'must be a number of meters' })
        .positive('must be greater than 0')
        .max(MAX_QUERY_RADIUS_M, `must be at most ${MAX_QUERY_RADIUS_M} meters: query a wider area by bbox`),
    ).optional(),
    limit: LimitSchema,
    cursor: z.string().min(1).max(1000).optional(),
  })
  .strict()
  .superRefine((input, ctx) => {
    const near = [input.lat, input.lon, input.radius].filter((v) => v !== undefined).length;
    if (near > 0 && near < 3) {
      for (const field of ['lat', 'lon', 'radius'] as const) {
        if (input[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'is required with lat, lon and radius: a radius query names all three' });
      }
    }
    if (near > 0 && input.bbox) ctx.addIssue({ code: 'custom', path: ['bbox'], message: 'cannot be combined with lat, lon and radius: query by one or the other' });
  });
export type QueryFeaturesInput = z.infer<typeof QueryFeaturesInputSchema>;

export const FeatureSchema = z.object({
  type: z.literal('Feature'),
  id: z.union([z.string(), z.number()]),
  geometry: GeometrySchema,
  properties: z.record(z.string(), z.unknown()).nullable(),
  /** Radius queries: meters from the center to the nearest part of the feature. */
  distanceMeters: z.number().optional(),
});
export type Feature = z.infer<typeof FeatureSchema>;

/** A GeoJSON FeatureCollection with the cursor of the next page (null on the last). */
export const FeaturePageSchema = z.object({
  type: z.literal('FeatureCollection'),
  features: z.array(FeatureSchema),
  nextCursor: z.string().nullable(),
});
export type FeaturePage = z.infer<typeof FeaturePageSchema>;

/** The most groups a report lists; the rest are counted together under `otherCount`. */
export const MAX_REPORT_GROUPS = 100;

/**
 * A report of a dataset's features in an area (a box, or `lat`, `lon` and `radius`; neither: the
 * whole dataset): how many there are, grouped by the values of one property (`group_by`) when named.
 */
export const GeoReportInputSchema = z
  .object({
    dataset: DatasetKeySchema,
    bbox: BboxSchema.refine(([, south, , north]) => south <= north, { message: 'must have its south edge at or below its north edge; west may exceed east for a box across the antimeridian' }).optional(),
    lat: LatitudeSchema.optional(),
    lon: LongitudeSchema.optional(),
    radius: z.number({ error: 'must be a number of meters' }).positive('must be greater than 0').max(MAX_QUERY_RADIUS_M, `must be at most ${MAX_QUERY_RADIUS_M} meters: report on a wider area by bbox`).optional(),
    group_by: z.string().min(1, 'must name a property').max(200).optional(),
  })
  .strict()
  .superRefine((input, ctx) => {
    const near = [input.lat, input.lon, input.radius].filter((v) => v !== undefined).length;
    if (near > 0 && near < 3) {
      for (const field of ['lat', 'lon', 'radius'] as const) {
        if (input[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'is required with lat, lon and radius: a radius report names all three' });
      }
    }
    if (near > 0 && input.bbox) ctx.addIssue({ code: 'custom', path: ['bbox'], message: 'cannot be combined with lat, lon and radius: report on one or the other' });
  });
export type GeoReportInput = z.infer<typeof GeoReportInputSchema>;

export const GeoReportSchema = z.object({
  dataset: z.string(),
  /** The area reported on, as asked; `{}` for the whole dataset. */
  area: z.object({ bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]).optional(), lat: z.number().optional(), lon: z.number().optional(), radius: z.number().optional() }),
  featureCount: z.number().int(),
  /** The extent of the features counted, `[west, south, east, north]`; null when none. */
  bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]).nullable(),
  /** With `group_by`: each value of the property (JSON text; `null` for features without it) and its count, most first, at most 100. */
  groups: z.array(z.object({ value: z.string(), count: z.number().int() })).optional(),
  /** With `group_by`: features counted in no listed group. */
  otherCount: z.number().int().optional(),
  generatedAt: z.string(),
});
export type GeoReport = z.infer<typeof GeoReportSchema>;
