import { TRPCError } from '@trpc/server';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';
import type { Permission, PlatformPermission } from '../identity/permissions.ts';
import { unstorableInputError } from '../json/unstorable-input.ts';
import { t } from './init.ts';
import { UploadMetaSchema } from './upload-body.ts';

/** Refuses input that PostgreSQL cannot store as sent (docs/decisions.md), before the procedure changes anything. */
async function assertStorableInput(getRawInput: () => Promise<unknown>): Promise<void> {
  const error = unstorableInputError(await getRawInput());
  if (error) throw error;
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

/**
 * For procedures that take a streamed body (`ControlPlane.upload`): validates what describes it
 * like an input, so a bad one is a 400 naming the field, before a byte is read.
 */
export const withUploadMeta = t.middleware(({ ctx, next }) => {
  const parsed = UploadMetaSchema.safeParse(ctx.uploadMeta);
  if (!parsed.success) throw new TRPCError({ code: 'BAD_REQUEST', cause: parsed.error });
  return next({ ctx: { uploadMeta: parsed.data } });
});
