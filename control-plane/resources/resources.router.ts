import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import {
  CreateResourceInputSchema,
  DeleteResourceInputSchema,
  ListResourcePageInputSchema,
  ListResourcesInputSchema,
  ReplaceAtVersionInputSchema,
  ResourceListPageSchema,
  ReplaceResourceInputSchema,
  ResourcePageSchema,
  ResourceRefSchema,
  ResourceSchema,
  UpdateResourceInputSchema,
} from './resources.schema.ts';
import { ActionResultSchema, ApplyActionInputSchema } from './resource-actions.schema.ts';
import { AggregateResourcesInputSchema, AggregateResultSchema, QueryResourcesInputSchema, ResourceQueryPageSchema } from './resource-queries.schema.ts';

export const resourcesRouter = t.router({
  list: tenantProcedure('resources.read')
    .input(ListResourcesInputSchema)
    .output(ResourcePageSchema)
    .query(({ ctx, input }) => ctx.services.resources.list(ctx.actor, input)),
  listPage: tenantProcedure('resources.read')
    .input(ListResourcePageInputSchema)
    .output(ResourceListPageSchema)
    .query(({ ctx, input }) => ctx.services.resources.listPage(ctx.actor, input)),
  get: tenantProcedure('resources.read')
    .input(ResourceRefSchema)
    .output(ResourceSchema)
    .query(({ ctx, input }) => ctx.services.resources.get(ctx.actor, input.type, input.id)),
  create: tenantProcedure('resources.create')
    .input(CreateResourceInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.create(ctx.actor, input.type, input.data)),
  replace: tenantProcedure('resources.update')
    .input(ReplaceResourceInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.replace(ctx.actor, input.type, input.id, input.data, input.version)),
  replaceAtVersion: tenantProcedure('resources.update')
    .input(ReplaceAtVersionInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.replaceAtVersion(ctx.actor, input)),
  update: tenantProcedure('resources.update')
    .input(UpdateResourceInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.update(ctx.actor, input.type, input.id, input.patch, input.version)),
  delete: tenantProcedure('resources.delete')
    .input(DeleteResourceInputSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.resources.remove(ctx.actor, input.type, input.id, input.ifMatch)),
  query: tenantProcedure('resources.read')
    .input(QueryResourcesInputSchema)
    .output(ResourceQueryPageSchema)
    .query(({ ctx, input }) => ctx.services.resources.query(ctx.actor, input)),
  aggregate: tenantProcedure('resources.read')
    .input(AggregateResourcesInputSchema)
    .output(AggregateResultSchema)
    .query(({ ctx, input }) => ctx.services.resources.aggregate(ctx.actor, input)),
  applyAction: tenantProcedure('resources.update')
    .input(ApplyActionInputSchema)
    .output(ActionResultSchema)
    .mutation(({ ctx, input }) => ctx.services.resources.applyAction(ctx.actor, input)),
});
