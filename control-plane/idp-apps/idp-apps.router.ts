import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { publicProcedure, userProcedure } from '../trpc/procedures.ts';
import {
  ClientRefSchema,
  EnsuredIdpAppSchema,
  EnsureIdpAppInputSchema,
  ProviderClientSchema,
  RotatedSecretSchema,
  RotateSecretInputSchema,
  VerifySecretInputSchema,
} from './idp-apps.schema.ts';
import type { IdpAppsService } from './idp-apps.service.ts';

/** What these procedures call of the identity-provider apps service: the API's context holds these functions and no others (app/services.ts). */
export const IDP_APPS_API = ['ensure', 'providerClient', 'rotateSecret', 'verifySecret'] as const satisfies readonly (keyof IdpAppsService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    idpApps: Pick<IdpAppsService, (typeof IDP_APPS_API)[number]>;
  }
}

/**
 * Apps' OAuth clients. `ensure` and `rotateSecret` check who may (a tenant administrator of the
 * app's tenant, or a platform administrator) in the service, since a platform administrator need
 * not be a member. `providerClient` and `verifySecret` serve the built-in identity provider, which
 * asks before anyone is signed in: they reveal no secret.
 */
export const idpAppsRouter = t.router({
  ensure: userProcedure
    .input(EnsureIdpAppInputSchema)
    .output(EnsuredIdpAppSchema)
    .mutation(({ ctx, input }) => ctx.services.idpApps.ensure(ctx.principal, input)),
  rotateSecret: userProcedure
    .input(RotateSecretInputSchema)
    .output(RotatedSecretSchema)
    .mutation(({ ctx, input }) => ctx.services.idpApps.rotateSecret(ctx.principal, input.clientId, { revokePrevious: input.revokePrevious })),
  providerClient: publicProcedure
    .input(ClientRefSchema)
    .output(ProviderClientSchema.nullable())
    .query(({ ctx, input }) => ctx.services.idpApps.providerClient(input.clientId)),
  verifySecret: publicProcedure
    .input(VerifySecretInputSchema)
    .output(z.boolean())
    .query(({ ctx, input }) => ctx.services.idpApps.verifySecret(input.clientId, input.secret)),
});
