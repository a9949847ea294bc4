import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import {
  ReadinessInputSchema,
  ReadinessSchema,
  RuntimeRequestInputSchema,
  RuntimeRequestOutcomeSchema,
  WorkflowStatusInputSchema,
  WorkflowStatusSchema,
} from './runtime.schema.ts';
import type { RuntimeService } from './runtime.service.ts';

/** What these procedures call of the runtime service: the API's context holds these functions and no others (app/services.ts). */
export const RUNTIME_API = ['readiness', 'request', 'status'] as const satisfies readonly (keyof RuntimeService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    runtime: Pick<RuntimeService, (typeof RUNTIME_API)[number]>;
  }
}

/** v4 workflow runtime: status per workflow, binding requests for an operator, builder readiness. Any member of the tenant. */
export const runtimeRouter = t.router({
  status: tenantProcedure()
    .input(WorkflowStatusInputSchema)
    .output(WorkflowStatusSchema)
    .query(({ ctx, input }) => ctx.services.runtime.status(ctx.actor, input.workflowKey)),
  request: tenantProcedure()
    .input(RuntimeRequestInputSchema)
    .output(RuntimeRequestOutcomeSchema)
    .mutation(({ ctx, input }) => ctx.services.runtime.request(ctx.actor, input)),
  readiness: tenantProcedure()
    .input(ReadinessInputSchema)
    .output(ReadinessSchema)
    .query(({ ctx, input }) => ctx.services.runtime.readiness(ctx.actor, input.workflow_keys)),
});
