import { z } from 'zod';
import { LimitSchema, OffsetSchema } from '../query/paging.ts';
import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import { EXECUTION_STATES, ExecutionSchema, WorkflowDefinitionSchema } from './orchestrate.schema.ts';

const ExecutionRefSchema = z.object({ id: z.string().min(1) });
const page = { limit: LimitSchema, offset: OffsetSchema.default(0) };

export const orchestrateRouter = t.router({
  listWorkflows: tenantProcedure('orchestrate.read')
    .input(z.object({}).optional())
    .output(z.array(WorkflowDefinitionSchema))
    .query(({ ctx }) => ctx.services.orchestrate.listWorkflows(ctx.actor)),
  execute: tenantProcedure('orchestrate.execute')
    .input(
      z.object({
        workflowId: z.string().min(1).max(100),
        input: z.record(z.string(), z.unknown()).default({}),
        metadata: z.record(z.string(), z.unknown()).default({}),
        async: z.boolean().default(false),
      }).strict(),
    )
    .output(z.object({ execution: ExecutionSchema, settled: z.boolean() }))
    .mutation(({ ctx, input }) => ctx.services.orchestrate.execute(ctx.actor, input)),
  get: tenantProcedure('orchestrate.read')
    .input(ExecutionRefSchema)
    .output(ExecutionSchema)
    .query(({ ctx, input }) => ctx.services.orchestrate.get(ctx.actor, input.id)),
  list: tenantProcedure('orchestrate.read')
    .input(z.object({ workflowId: z.string().max(100).optional(), state: z.enum(EXECUTION_STATES).optional(), ...page }))
    .output(z.object({ items: z.array(ExecutionSchema), total: z.number().int() }))
    .query(({ ctx, input }) => ctx.services.orchestrate.list(ctx.actor, input)),
  cancel: tenantProcedure('orchestrate.execute')
    .input(ExecutionRefSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.orchestrate.cancel(ctx.actor, input.id)),
});
