import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import { ResourceSearchInputSchema, ResourceSearchResultSchema } from './search.schema.ts';
import type { SearchService } from './search.service.ts';

declare module '../trpc/context.ts' {
  interface ApiServices {
    search: Pick<SearchService, 'searchResources'>;
  }
}

export const searchRouter = t.router({
  /** v4 resource search: the projections of the tenant's resources (their types' `searchFields`). */
  resources: tenantProcedure('resources.read')
    .input(ResourceSearchInputSchema)
    .output(ResourceSearchResultSchema)
    .query(({ ctx, input }) => ctx.services.search.searchResources(ctx.actor, input)),
});
