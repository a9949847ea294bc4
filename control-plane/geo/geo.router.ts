import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import {
  CreateDatasetInputSchema,
  DatasetRefSchema,
  DatasetSchema,
  FeaturePageSchema,
  GeoReportInputSchema,
  GeoReportSchema,
  IngestInputSchema,
  IngestOutcomeSchema,
  NearbyPlacesSchema,
  QueryFeaturesInputSchema,
  ResolvedLocationsSchema,
  ResolveLocationInputSchema,
  ReverseInputSchema,
  UpdateDatasetInputSchema,
} from './geo.schema.ts';
import type { GeoService } from './geo.service.ts';

/** What these procedures call of the geo service: the API's context holds these functions and no others (app/services.ts). */
export const GEO_API = ['createDataset', 'deleteDataset', 'getDataset', 'ingest', 'listDatasets', 'queryFeatures', 'report', 'resolveLocation', 'reverse', 'updateDataset'] as const satisfies readonly (keyof GeoService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    geo: Pick<GeoService, (typeof GEO_API)[number]>;
  }
}

/** Place lookups take any member of the tenant; datasets are tenant data under the resources permissions. */
export const geoRouter = t.router({
  resolveLocation: tenantProcedure()
    .input(ResolveLocationInputSchema)
    .output(ResolvedLocationsSchema)
    .query(({ ctx, input }) => ctx.services.geo.resolveLocation(ctx.actor, input)),
  reverse: tenantProcedure()
    .input(ReverseInputSchema)
    .output(NearbyPlacesSchema)
    .query(({ ctx, input }) => ctx.services.geo.reverse(ctx.actor, input)),
  listDatasets: tenantProcedure('resources.read')
    .output(z.object({ data: z.array(DatasetSchema) }))
    .query(({ ctx }) => ctx.services.geo.listDatasets(ctx.actor)),
  createDataset: tenantProcedure('resources.create')
    .input(CreateDatasetInputSchema)
    .output(DatasetSchema)
    .mutation(({ ctx, input }) => ctx.services.geo.createDataset(ctx.actor, input)),
  getDataset: tenantProcedure('resources.read')
    .input(DatasetRefSchema)
    .output(DatasetSchema)
    .query(({ ctx, input }) => ctx.services.geo.getDataset(ctx.actor, input.dataset)),
  updateDataset: tenantProcedure('resources.update')
    .input(UpdateDatasetInputSchema)
    .output(DatasetSchema)
    .mutation(({ ctx, input }) => ctx.services.geo.updateDataset(ctx.actor, input)),
  deleteDataset: tenantProcedure('resources.delete')
    .input(DatasetRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.geo.deleteDataset(ctx.actor, input.dataset)),
  ingest: tenantProcedure('resources.update')
    .input(IngestInputSchema)
    .output(IngestOutcomeSchema)
    .mutation(({ ctx, input }) => ctx.services.geo.ingest(ctx.actor, input)),
  queryFeatures: tenantProcedure('resources.read')
    .input(QueryFeaturesInputSchema)
    .output(FeaturePageSchema)
    .query(({ ctx, input }) => ctx.services.geo.queryFeatures(ctx.actor, input)),
  report: tenantProcedure('resources.read')
    .input(GeoReportInputSchema)
    .output(GeoReportSchema)
    .query(({ ctx, input }) => ctx.services.geo.report(ctx.actor, input)),
});
