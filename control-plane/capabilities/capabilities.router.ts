import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { platformProcedure, tenantProcedure, userProcedure } from '../trpc/procedures.ts';
import {
  CatalogSchema,
  EvaluateInputSchema,
  EvaluationSchema,
  OverrideInputSchema,
  OverrideRefSchema,
  OverrideSchema,
  SetPlanInputSchema,
  TenantPlanSchema,
} from './capabilities.schema.ts';
import type { CapabilitiesService } from './capabilities.service.ts';

/** What these procedures call of the capabilities service: the API's context holds these functions and no others (app/services.ts). */
export const CAPABILITIES_API = ['catalog', 'evaluate', 'removeOverride', 'setOverride', 'setPlan'] as const satisfies readonly (keyof CapabilitiesService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    capabilities: Pick<CapabilitiesService, (typeof CAPABILITIES_API)[number]>;
  }
}

export const capabilitiesRouter = t.router({
  catalog: userProcedure.output(CatalogSchema).query(({ ctx }) => ctx.services.capabilities.catalog()),
  evaluate: tenantProcedure()
    .input(EvaluateInputSchema)
    .output(EvaluationSchema)
    .query(({ ctx, input }) => ctx.services.capabilities.evaluate(ctx.actor, input)),
  setOverride: platformProcedure('platform.tenants.manage')
    .input(OverrideInputSchema)
    .output(OverrideSchema)
    .mutation(({ ctx, input }) => ctx.services.capabilities.setOverride(ctx.principal, input)),
  removeOverride: platformProcedure('platform.tenants.manage')
    .input(OverrideRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.capabilities.removeOverride(input.tenantId, input.capability)),
  setPlan: platformProcedure('platform.tenants.manage')
    .input(SetPlanInputSchema)
    .output(TenantPlanSchema)
    .mutation(({ ctx, input }) => ctx.services.capabilities.setPlan(input.tenantId, input.plan)),
});
