import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import { AppSchema, CreateAppInputSchema } from './apps.schema.ts';
import type { AppsService } from './apps.service.ts';

/** What these procedures call of the apps service: the API's context holds these functions and no others (app/services.ts). */
export const APPS_API = ['create'] as const satisfies readonly (keyof AppsService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    apps: Pick<AppsService, (typeof APPS_API)[number]>;
  }
}

/** The company tenant is the one the call names (the path's tenant, through the tenant hint). */
export const appsRouter = t.router({
  create: tenantProcedure('tenants.manage')
    .input(CreateAppInputSchema)
    .output(AppSchema)
    .mutation(({ ctx, input }) => ctx.services.apps.create(ctx.actor, input)),
});
