import { z } from 'zod';
import { ResourceListPageSchema, ResourceSchema } from '../resources/resources.schema.ts';
import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import {
  CreateVerticalResourceInputSchema,
  DeleteVerticalResourceInputSchema,
  ListVerticalResourcesInputSchema,
  ReplaceVerticalResourceInputSchema,
  UpdateVerticalResourceInputSchema,
  VerticalRefSchema,
  VerticalResourceRefSchema,
  VerticalSchema,
} from './verticals.schema.ts';
import type { VerticalsService } from './verticals.service.ts';

/** What these procedures call of the verticals service: the API's context holds these functions and no others (app/services.ts). */
export const VERTICALS_API = ['createResource', 'get', 'getResource', 'listResources', 'removeResource', 'replaceResource', 'updateResource'] as const satisfies readonly (keyof VerticalsService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    verticals: Pick<VerticalsService, (typeof VERTICALS_API)[number]>;
  }
}

/**
 * The tenant the call names (`tenant_id`, else the token's) is the company tenant or the app's
 * child tenant; the permission is checked in that membership, as on the data API.
 */
export const verticalsRouter = t.router({
  get: tenantProcedure('resources.read')
    .input(VerticalRefSchema)
    .output(VerticalSchema)
    .query(({ ctx, input }) => ctx.services.verticals.get(ctx.actor, input.key)),
  listResources: tenantProcedure('resources.read')
    .input(ListVerticalResourcesInputSchema)
    .output(ResourceListPageSchema)
    .query(({ ctx, input: { key, ...list } }) => ctx.services.verticals.listResources(ctx.actor, key, list)),
  getResource: tenantProcedure('resources.read')
    .input(VerticalResourceRefSchema)
    .output(ResourceSchema)
    .query(({ ctx, input }) => ctx.services.verticals.getResource(ctx.actor, input.key, input.type, input.id)),
  createResource: tenantProcedure('resources.create')
    .input(CreateVerticalResourceInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input }) => ctx.services.verticals.createResource(ctx.actor, input.key, input.type, input.data, input.idempotencyKey)),
  replaceResource: tenantProcedure('resources.update')
    .input(ReplaceVerticalResourceInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input: { key, ...replace } }) => ctx.services.verticals.replaceResource(ctx.actor, key, replace)),
  updateResource: tenantProcedure('resources.update')
    .input(UpdateVerticalResourceInputSchema)
    .output(ResourceSchema)
    .mutation(({ ctx, input: { key, ...update } }) => ctx.services.verticals.updateResource(ctx.actor, key, update)),
  deleteResource: tenantProcedure('resources.delete')
    .input(DeleteVerticalResourceInputSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.verticals.removeResource(ctx.actor, input.key, input.type, input.id, input.ifMatch)),
});
