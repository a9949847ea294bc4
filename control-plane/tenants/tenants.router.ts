import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { platformProcedure, tenantProcedure, userProcedure } from '../trpc/procedures.ts';
import {
  CreateChildTenantInputSchema,
  CreateRootTenantInputSchema,
  FindUserByEmailInputSchema,
  MembershipGrantSchema,
  PlatformUserSchema,
  ProvisionSelfInputSchema,
  TenantMembershipSchema,
  TenantRefSchema,
  TenantSchema,
  UserRefSchema,
} from './tenants.schema.ts';
import type { TenantsService } from './tenants.service.ts';

/** What these procedures call of the tenants service: the API's context holds these functions and no others (app/services.ts). */
export const TENANTS_API = ['bootstrapAdmin', 'createChild', 'createRoot', 'declineInvitation', 'delete', 'findUserByEmail', 'membershipsOf', 'mine', 'provisionSelf', 'provisionUser', 'removeUser', 'watchStatus'] as const satisfies readonly (keyof TenantsService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    tenants: Pick<TenantsService, (typeof TENANTS_API)[number]>;
  }
}

/** Procedures naming a tenant in the path (parent, tenant) resolve it as the actor's tenant through the call's tenant hint. */
export const tenantsRouter = t.router({
  createRoot: platformProcedure('platform.tenants.create-root')
    .input(CreateRootTenantInputSchema)
    .output(TenantSchema)
    .mutation(({ ctx, input }) => ctx.services.tenants.createRoot(ctx.principal, input)),
  createChild: tenantProcedure('tenants.manage')
    .input(CreateChildTenantInputSchema)
    .output(TenantSchema)
    .mutation(({ ctx, input }) => ctx.services.tenants.createChild(ctx.actor, input)),
  bootstrapAdmin: tenantProcedure('tenants.manage')
    .input(z.object({ childId: TenantRefSchema }))
    .output(MembershipGrantSchema)
    .mutation(({ ctx, input }) => ctx.services.tenants.bootstrapAdmin(ctx.actor, input.childId)),
  delete: userProcedure
    .input(z.object({ tenantId: TenantRefSchema }))
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.tenants.delete(ctx.principal, input.tenantId)),
  findUserByEmail: userProcedure
    .input(FindUserByEmailInputSchema)
    .output(PlatformUserSchema)
    .query(({ ctx, input }) => ctx.services.tenants.findUserByEmail(ctx.principal, input.email)),
  memberships: userProcedure
    .input(z.object({ userId: UserRefSchema }))
    .output(z.array(TenantMembershipSchema))
    .query(({ ctx, input }) => ctx.services.tenants.membershipsOf(ctx.principal, input.userId)),
  watchStatus: userProcedure
    .input(z.object({ tenantId: TenantRefSchema }))
    .subscription(({ ctx, input, signal }) => ctx.services.tenants.watchStatus(ctx.principal, input.tenantId, signal)),
  provisionUser: tenantProcedure('tenants.manage')
    .input(z.object({ userId: UserRefSchema }))
    .output(MembershipGrantSchema)
    .mutation(({ ctx, input }) => ctx.services.tenants.provisionUser(ctx.actor, input.userId)),
  removeUser: tenantProcedure('tenants.manage')
    .input(z.object({ userId: UserRefSchema }))
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.tenants.removeUser(ctx.actor, input.userId)),
});

/**
 * The caller's tenants, served in the `identity` namespace (v4 `GET /identity/tenants`,
 * `POST /identity/me/provision`, `POST /identity/me/decline`): the root router merges them into the identity router.
 */
export const callerTenantsRouter = t.router({
  tenants: userProcedure
    .input(z.object({}).optional())
    .output(z.array(TenantMembershipSchema))
    .query(({ ctx }) => ctx.services.tenants.mine(ctx.principal)),
  provision: userProcedure
    .input(ProvisionSelfInputSchema)
    .output(MembershipGrantSchema)
    .mutation(({ ctx, input }) => ctx.services.tenants.provisionSelf(ctx.principal, input.tenant_id)),
  decline: userProcedure
    .input(ProvisionSelfInputSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.tenants.declineInvitation(ctx.principal, input.tenant_id)),
});
