import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import {
  ExecuteInputSchema,
  ExecuteResultSchema,
  ExecutionPageSchema,
  ExecutionRefSchema,
  ExecutionSchema,
  ListExecutionsInputSchema,
  WorkflowDefinitionSchema,
} from './orchestrate.schema.ts';
import type { OrchestrateService } from './orchestrate.service.ts';

/** What these procedures call of the orchestrate service: the API's context holds these functions and no others (app/services.ts). */
export const ORCHESTRATE_API = ['cancel', 'execute', 'get', 'list', 'listWorkflows'] as const satisfies readonly (keyof OrchestrateService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    orchestrate: Pick<OrchestrateService, (typeof ORCHESTRATE_API)[number]>;
  }
}

export const orchestrateRouter = t.router({
  listWorkflows: tenantProcedure('orchestrate.read')
    .input(z.object({}).optional())
    .output(z.array(WorkflowDefinitionSchema))
    .query(({ ctx }) => ctx.services.orchestrate.listWorkflows(ctx.actor)),
  execute: tenantProcedure('orchestrate.execute')
    .input(ExecuteInputSchema)
    .output(ExecuteResultSchema)
    .mutation(({ ctx, input }) => ctx.services.orchestrate.execute(ctx.actor, input)),
  get: tenantProcedure('orchestrate.read')
    .input(ExecutionRefSchema)
    .output(ExecutionSchema)
    .query(({ ctx, input }) => ctx.services.orchestrate.get(ctx.actor, input.id)),
  list: tenantProcedure('orchestrate.read')
    .input(ListExecutionsInputSchema)
    .output(ExecutionPageSchema)
    .query(({ ctx, input }) => ctx.services.orchestrate.list(ctx.actor, input)),
  cancel: tenantProcedure('orchestrate.execute')
    .input(ExecutionRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.orchestrate.cancel(ctx.actor, input.id)),
});
