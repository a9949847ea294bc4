import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import { AppSchema, CreateAppInputSchema } from './apps.schema.ts';
import type { AppsService } from './apps.service.ts';

declare module '../trpc/context.ts' {
  interface ApiServices {
    apps: Pick<AppsService, 'create'>;
  }
}

/** The company tenant is the one the call names (the path's tenant, through the tenant hint). */
export const appsRouter = t.router({
  create: tenantProcedure('tenants.manage')
    .input(CreateAppInputSchema)
    .output(AppSchema)
    .mutation(({ ctx, input }) => ctx.services.apps.create(ctx.actor, input)),
});
