import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import { ObjectTypeListSchema, ObjectTypeRefSchema, ObjectTypeSchema } from './object-types.schema.ts';

export const objectTypesRouter = t.router({
  list: tenantProcedure('resources.read')
    .output(ObjectTypeListSchema)
    .query(({ ctx }) => ctx.services.objectTypes.list(ctx.actor)),
  get: tenantProcedure('resources.read')
    .input(ObjectTypeRefSchema)
    .output(ObjectTypeSchema)
    .query(({ ctx, input }) => ctx.services.objectTypes.get(ctx.actor, input.name)),
});
