import { ForbiddenError, UnauthorizedError, ValidationError } from '../errors.ts';
import type { Permission, PlatformPermission } from '../identity/permissions.ts';
import { unstorableInput } from '../json/unstorable-input.ts';
import { t } from './init.ts';

/** Inputs under which the edge passes a whole request body (resources' `data` and `patch`, users' `changes`). */
const BODY_INPUTS = new Set(['changes', 'data', 'patch']);

/**
 * Refuses input holding text that PostgreSQL cannot store as sent (docs/decisions.md), before the
 * procedure changes anything. Fields of a body passed whole are named as the client sent them.
 */
async function assertStorableInput(getRawInput: () => Promise<unknown>): Promise<void> {
  const found = unstorableInput(await getRawInput());
  if (!found) return;
  const path = found.path.length > 1 && BODY_INPUTS.has(found.path[0]!) ? found.path.slice(1) : found.path;
  throw ValidationError.field(path.join('.') || '(body)', found.issue);
}

/** The only base procedures: authentication and tenant scoping cannot be forgotten on a new route. */
export const publicProcedure = t.procedure;

export const authedProcedure = t.procedure.use(async ({ ctx, next, getRawInput }) => {
  if (!ctx.identity) throw new UnauthorizedError();
  await assertStorableInput(getRawInput);
  return next({ ctx: { identity: ctx.identity } });
});

/**
 * Authenticates and resolves the caller's tenant membership; `permission` must be granted there
 * unless omitted. One middleware rather than one on top of `authedProcedure`: every tRPC middleware
 * layer costs microseconds on each call.
 */
export const tenantProcedure = (permission?: Permission) =>
  t.procedure.use(async ({ ctx, next, getRawInput }) => {
    if (!ctx.identity) throw new UnauthorizedError();
    const actor = await ctx.services.identity.resolveActor(ctx.identity, ctx.tenantHint);
    if (permission && !actor.permissions.has(permission)) throw new ForbiddenError(`missing permission ${permission}`);
    await assertStorableInput(getRawInput);
    return next({ ctx: { identity: ctx.identity, actor } });
  });

/** Resolves the calling user (provisioned just in time) without choosing a tenant: identity and platform routes. */
export const userProcedure = authedProcedure.use(async ({ ctx, next }) => {
  const principal = await ctx.services.identity.resolveUser(ctx.identity);
  return next({ ctx: { principal } });
});

/** A user holding the platform-level `permission`, which comes from platform roles on the user, never from a tenant. */
export const platformProcedure = (permission: PlatformPermission) =>
  userProcedure.use(({ ctx, next }) => {
    if (!ctx.principal.platformPermissions.has(permission)) throw new ForbiddenError(`missing platform permission ${permission}`);
    return next();
  });
