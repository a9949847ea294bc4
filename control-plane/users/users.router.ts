import { t } from '../trpc/init.ts';
import { tenantProcedure } from '../trpc/procedures.ts';
import { ListUsersInputSchema, UpdateUserInputSchema, UserPageSchema, UserRefInputSchema, UserSchema } from './users.schema.ts';
import type { UsersService } from './users.service.ts';

/** What these procedures call of the users service: the API's context holds these functions and no others (app/services.ts). */
export const USERS_API = ['get', 'list', 'update'] as const satisfies readonly (keyof UsersService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    users: Pick<UsersService, (typeof USERS_API)[number]>;
  }
}

export const usersRouter = t.router({
  get: tenantProcedure()
    .input(UserRefInputSchema)
    .output(UserSchema)
    .query(({ ctx, input }) => ctx.services.users.get(ctx.actor, input.id)),
  list: tenantProcedure('users.manage')
    .input(ListUsersInputSchema)
    .output(UserPageSchema)
    .query(({ ctx, input }) => ctx.services.users.list(ctx.actor, input)),
  update: tenantProcedure()
    .input(UpdateUserInputSchema)
    .output(UserSchema)
    .mutation(({ ctx, input }) => ctx.services.users.update(ctx.actor, input)),
});
