import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { selfProcedure } from '../trpc/procedures.ts';
import { MeSchema, UpdateProfileInputSchema } from './identity.schema.ts';
import type { IdentityService } from './identity.service.ts';

/** What these procedures call of the identity service: the API's context holds these functions and no others (app/services.ts). */
export const IDENTITY_API = ['me', 'updateProfile'] as const satisfies readonly (keyof IdentityService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    identity: Pick<IdentityService, (typeof IDENTITY_API)[number]>;
  }
}

/**
 * The caller's own record, which an app's token reaches too: the app acts as its user. The `identity` namespace also serves the caller's tenants (`tenants`,
 * `provision`): tenants' procedures, in tenants.router.ts (`callerTenantsRouter`), merged in by the root router.
 */
export const identityRouter = t.router({
  me: selfProcedure
    .input(z.object({}).optional())
    .output(MeSchema)
    .query(({ ctx }) => ctx.services.identity.me(ctx.principal)),
  updateProfile: selfProcedure
    .input(UpdateProfileInputSchema)
    .output(MeSchema)
    .mutation(({ ctx, input }) => ctx.services.identity.updateProfile(ctx.principal, input)),
});
