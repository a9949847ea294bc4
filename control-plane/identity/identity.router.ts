import { z } from 'zod';
import { MembershipGrantSchema, TenantMembershipSchema, TenantRefSchema } from '../tenants/tenants.schema.ts';
import { t } from '../trpc/init.ts';
import { userProcedure } from '../trpc/procedures.ts';
import { MeSchema, UpdateProfileInputSchema } from './identity.schema.ts';

export const identityRouter = t.router({
  me: userProcedure
    .input(z.object({}).optional())
    .output(MeSchema)
    .query(({ ctx }) => ctx.services.identity.me(ctx.principal)),
  updateProfile: userProcedure
    .input(UpdateProfileInputSchema)
    .output(MeSchema)
    .mutation(({ ctx, input }) => ctx.services.identity.updateProfile(ctx.principal, input)),
  tenants: userProcedure
    .input(z.object({}).optional())
    .output(z.array(TenantMembershipSchema))
    .query(({ ctx }) => ctx.services.identity.tenants(ctx.principal)),
  /** Self-provisioning; the input keeps the wire name `tenant_id`, so a validation error names it. */
  provision: userProcedure
    .input(z.object({ tenant_id: TenantRefSchema }).strict())
    .output(MembershipGrantSchema)
    .mutation(({ ctx, input }) => ctx.services.tenants.provisionSelf(ctx.principal, input.tenant_id)),
});
