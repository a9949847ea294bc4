import { z } from 'zod';
import {
  CreateDatasetInputSchema,
  DatasetRefSchema,
  DatasetSchema,
  FeatureCollectionInputSchema,
  FeaturePageSchema,
  GeoReportInputSchema,
  GeoReportSchema,
  IngestOutcomeSchema,
  NearbyPlacesSchema,
  QueryFeaturesInputSchema,
  ResolvedLocationsSchema,
  ResolveLocationInputSchema,
  ReverseInputSchema,
  UpdateDatasetFieldsSchema,
} from '../../../control-plane/contracts.ts';
import { listOf, param, tenantField, tenantPath, tenantQuery } from '../params.ts';
import { bodyAndQueryOptions, bodyWithPath, jsonObjectBody, tenantOption } from '../request-input.ts';
import { defineRoute } from '../route.ts';

const datasetPath = { ...tenantPath, dataset: DatasetRefSchema.shape.dataset };

/**
 * v4 geo: place lookup by name and by coordinates (the tenant is `tenant_id` in the body or query
 * string, else the caller's), and a tenant's datasets of GeoJSON features by the tenant in the
 * path. POST on a dataset's features adds a FeatureCollection, PUT replaces them with it, GET
 * pages through them (all, by `bbox`, or by `lat`, `lon` and `radius`) as a FeatureCollection.
 * PATCH on a dataset changes its name or description; a report counts a dataset's features in an
 * area, grouped by a property when asked.
 */
export const v4GeoRoutes = [
  defineRoute({
    method: 'POST',
    path: '/geo/resolve-location',
    procedure: 'geo.resolveLocation',
    tenant: 'query',
    input: { query: tenantQuery, body: { schema: ResolveLocationInputSchema.extend(tenantField) } },
    output: { 200: { description: 'How the query was read, and the places found', schema: ResolvedLocationsSchema } },
    docs: {
      operationId: 'resolveLocation',
      summary: 'Find places by name',
      tag: 'Geo',
      description: 'Places of the GeoNames gazetteer (places of at least 1000 inhabitants; GeoNames, CC BY 4.0) whose name matches `query`, best first: exact, then prefix, word and misspelt matches, each by population. A country or first-level division after a comma narrows it (`Springfield, IL`, `London, Canada`). Needs the `geo` capability; the tenant is `tenant_id` in the body or query string, else the caller\'s.',
    },
    sample: { body: { query: 'Paris' } },
    handler: ({ request, body, call, procedure }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      return procedure.query(call(tenantId), jsonObjectBody(rest));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/geo/reverse',
    procedure: 'geo.reverse',
    tenant: 'query',
    input: { query: tenantQuery, body: { schema: ReverseInputSchema.extend(tenantField) } },
    output: { 200: { description: 'The nearest places with their distance in meters', schema: NearbyPlacesSchema } },
    docs: {
      operationId: 'reverseGeocode',
      summary: 'Find the places nearest to coordinates',
      tag: 'Geo',
      description: "The gazetteer's places nearest to `lat`,`lon`, nearest first, within `radius` meters when given. Needs the `geo` capability.",
    },
    sample: { body: { lat: 48.85, lon: 2.35 } },
    handler: ({ request, body, call, procedure }) => {
      const { tenantId, body: rest } = tenantOption(request, body);
      return procedure.query(call(tenantId), jsonObjectBody(rest));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/geo/datasets/:tenantId',
    procedure: 'geo.listDatasets',
    tenant: 'path',
    input: { path: tenantPath },
    output: { 200: { description: 'Every dataset of the tenant, by key', schema: listOf(DatasetSchema) } },
    docs: { operationId: 'listGeoDatasets', summary: "A tenant's geo datasets", tag: 'Geo' },
    sample: {},
    handler: ({ params, call, procedure }) => procedure.query(call(params.tenantId), undefined),
  }),
  defineRoute({
    method: 'POST',
    path: '/geo/datasets/:tenantId',
    procedure: 'geo.createDataset',
    tenant: 'path',
    input: { path: tenantPath, body: { schema: CreateDatasetInputSchema } },
    output: { 201: { description: 'The dataset', schema: DatasetSchema } },
    docs: {
      operationId: 'createGeoDataset',
      summary: 'Create an empty geo dataset',
      tag: 'Geo',
      description: 'A tenant holds up to 100 datasets unless its `geo` capability sets `maxDatasets`.',
      errors: [409],
    },
    sample: { body: { key: 'route-case' } },
    handler: async ({ params, body, set, call, procedure }) => {
      const created = await procedure.mutation(call(params.tenantId), jsonObjectBody(body));
      set.status = 201;
      return created;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/geo/datasets/:tenantId/:dataset',
    procedure: 'geo.getDataset',
    tenant: 'path',
    input: { path: datasetPath },
    output: { 200: { description: 'The dataset', schema: DatasetSchema } },
    docs: { operationId: 'getGeoDataset', summary: 'A geo dataset, with its feature count and extent', tag: 'Geo' },
    sample: { params: { dataset: 'route-case' } },
    handler: ({ params, call, procedure }) => procedure.query(call(params.tenantId), { dataset: params.dataset }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/geo/datasets/:tenantId/:dataset',
    procedure: 'geo.updateDataset',
    tenant: 'path',
    input: { path: datasetPath, body: { schema: UpdateDatasetFieldsSchema } },
    output: { 200: { description: 'The dataset', schema: DatasetSchema } },
    docs: {
      operationId: 'updateGeoDataset',
      summary: "Change a geo dataset's name or description",
      tag: 'Geo',
      description: 'A merge patch: a field left out stays as it is; `description: null` clears it. The features stay as they are.',
    },
    sample: { params: { dataset: 'route-case' }, body: { name: 'Route case' } },
    handler: ({ params, body, call, procedure }) => procedure.mutation(call(params.tenantId), bodyWithPath(body, { dataset: params.dataset })),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/geo/datasets/:tenantId/:dataset',
    procedure: 'geo.deleteDataset',
    tenant: 'path',
    input: { path: datasetPath },
    output: { 204: { description: 'Deleted' } },
    docs: { operationId: 'deleteGeoDataset', summary: 'Delete a geo dataset and its features', tag: 'Geo' },
    sample: { params: { dataset: 'route-case' } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(params.tenantId), { dataset: params.dataset });
      set.status = 204;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/geo/datasets/:tenantId/:dataset/features',
    procedure: 'geo.ingest',
    tenant: 'path',
    input: { path: datasetPath, body: { schema: FeatureCollectionInputSchema } },
    output: { 200: { description: 'The dataset, and how many features were created and updated', schema: IngestOutcomeSchema } },
    docs: {
      operationId: 'addGeoFeatures',
      summary: 'Add a GeoJSON FeatureCollection to a dataset',
      tag: 'Geo',
      description: 'RFC 7946 GeoJSON: WGS 84 longitude and latitude. Each feature replaces the feature of its `id`; one without an `id` gets a new one. All or nothing; up to 10000 features and 1 MiB per request, 100000 features per dataset unless the `geo` capability sets `maxFeaturesPerDataset`.',
    },
    sample: { params: { dataset: 'route-case' }, body: { type: 'FeatureCollection', features: [] } },
    handler: ({ params, body, call, procedure }) =>
      procedure.mutation(call(params.tenantId), bodyWithPath(body, { dataset: params.dataset, replace: false })),
  }),
  defineRoute({
    method: 'PUT',
    path: '/geo/datasets/:tenantId/:dataset/features',
    procedure: 'geo.ingest',
    tenant: 'path',
    input: { path: datasetPath, body: { schema: FeatureCollectionInputSchema } },
    output: { 200: { description: 'The dataset, and how many features were created, updated and removed', schema: IngestOutcomeSchema } },
    docs: {
      operationId: 'replaceGeoFeatures',
      summary: "Replace a dataset's features with a GeoJSON FeatureCollection",
      tag: 'Geo',
      description: 'As POST, and the features the collection does not name (by `id`) are removed.',
    },
    sample: { params: { dataset: 'route-case' }, body: { type: 'FeatureCollection', features: [] } },
    handler: ({ params, body, call, procedure }) =>
      procedure.mutation(call(params.tenantId), bodyWithPath(body, { dataset: params.dataset, replace: true })),
  }),
  defineRoute({
    method: 'GET',
    path: '/geo/datasets/:tenantId/:dataset/features',
    procedure: 'geo.queryFeatures',
    tenant: 'path',
    input: {
      path: datasetPath,
      query: {
        bbox: param(z.string(), { required: false, description: '`west,south,east,north` in degrees; west may exceed east for a box across the antimeridian' }),
        lat: param(z.number().min(-90).max(90), { required: false, description: "The radius query's center latitude" }),
        lon: param(z.number().min(-180).max(180), { required: false, description: "The radius query's center longitude" }),
        radius: param(z.number().positive().max(1_000_000), { required: false, description: 'Meters, at most 1000000' }),
        limit: QueryFeaturesInputSchema.shape.limit,
        cursor: param(QueryFeaturesInputSchema.shape.cursor, { description: "The previous page's `nextCursor`" }),
      },
    },
    output: { 200: { description: 'A page of features', schema: FeaturePageSchema } },
    docs: {
      operationId: 'queryGeoFeatures',
      summary: "Page through a dataset's features: all, in a box, or within a radius",
      tag: 'Geo',
      description: 'A GeoJSON FeatureCollection. `bbox` gives the features whose geometry meets the box, by southern edge; `lat`, `lon` and `radius` those within the radius (nearest first, with `distanceMeters`); neither, every feature. `nextCursor` fetches the next page.',
    },
    sample: { params: { dataset: 'route-case' }, query: 'bbox=-1,-1,1,1' },
    handler: ({ request, params, call, procedure }) =>
      procedure.query(call(params.tenantId), bodyWithPath(bodyAndQueryOptions(request, undefined), { dataset: params.dataset })),
  }),
  defineRoute({
    method: 'POST',
    path: '/geo/reports/:tenantId',
    procedure: 'geo.report',
    tenant: 'path',
    input: { path: tenantPath, body: { schema: GeoReportInputSchema } },
    output: { 200: { description: 'The features of the area counted, with their extent, and grouped when asked', schema: GeoReportSchema } },
    docs: {
      operationId: 'reportGeoDataset',
      summary: "Report on a dataset's features in an area",
      tag: 'Geo',
      description:
        'Counts the features of `dataset` that meet `bbox`, or lie within `radius` meters of `lat`,`lon` (neither: the whole dataset), as the feature query finds them, with their extent. With `group_by`, counts them by the value of that property (JSON text, `null` where a feature has none), most first, at most 100 groups, the rest in `otherCount`.',
    },
    sample: { body: { dataset: 'route-case', group_by: 'kind' } },
    handler: ({ params, body, call, procedure }) => procedure.query(call(params.tenantId), jsonObjectBody(body)),
  }),
];
