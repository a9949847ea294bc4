import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import { ResourceSearchInputSchema, ResourceSearchResultSchema } from './search.schema.ts';
import type { SearchService } from './search.service.ts';

/** What these procedures call of the search service: the API's context holds these functions and no others (app/services.ts). */
export const SEARCH_API = ['searchResources'] as const satisfies readonly (keyof SearchService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    search: Pick<SearchService, (typeof SEARCH_API)[number]>;
  }
}

export const searchRouter = t.router({
  /** v4 resource search: the projections of the tenant's resources (their types' `searchFields`). */
  resources: tenantProcedure('resources.read')
    .input(ResourceSearchInputSchema)
    .output(ResourceSearchResultSchema)
    .query(({ ctx, input }) => ctx.services.search.searchResources(ctx.actor, input)),
});
