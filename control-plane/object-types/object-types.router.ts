import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import {
  CreateObjectTypeInputSchema,
  ObjectTypeListSchema,
  ObjectTypeRefSchema,
  ObjectTypeSchema,
  UpdateObjectTypeInputSchema,
} from './object-types.schema.ts';
import type { ObjectTypesService } from './object-types.service.ts';

/** What these procedures call of the object types service: the API's context holds these functions and no others (app/services.ts). */
export const OBJECT_TYPES_API = ['create', 'get', 'list', 'published', 'update'] as const satisfies readonly (keyof ObjectTypesService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    objectTypes: Pick<ObjectTypesService, (typeof OBJECT_TYPES_API)[number]>;
  }
}

export const objectTypesRouter = t.router({
  list: tenantProcedure('resources.read')
    .output(ObjectTypeListSchema)
    .query(({ ctx }) => ctx.services.objectTypes.list(ctx.actor)),
  published: tenantProcedure('resources.read')
    .output(ObjectTypeListSchema)
    .query(({ ctx }) => ctx.services.objectTypes.published(ctx.actor)),
  get: tenantProcedure('resources.read')
    .input(ObjectTypeRefSchema)
    .output(ObjectTypeSchema)
    .query(({ ctx, input }) => ctx.services.objectTypes.get(ctx.actor, input.name)),
  create: tenantProcedure('tenants.manage')
    .input(CreateObjectTypeInputSchema)
    .output(ObjectTypeSchema)
    .mutation(({ ctx, input }) => ctx.services.objectTypes.create(ctx.actor, input)),
  update: tenantProcedure('tenants.manage')
    .input(UpdateObjectTypeInputSchema)
    .output(ObjectTypeSchema)
    .mutation(({ ctx, input }) => ctx.services.objectTypes.update(ctx.actor, input)),
});
