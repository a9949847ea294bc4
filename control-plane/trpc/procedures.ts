import type { z } from 'zod';
import { TRPCError } from '@trpc/server';
import { DomainError, ForbiddenError, UnauthorizedError } from '../errors.ts';
import { APP_TOKEN_ELSEWHERE } from '../auth/caller.ts';
import type { Permission, PlatformPermission } from '../auth/permissions.ts';
import { unstorableInputError } from '../json/unstorable-input.ts';
import { observeProcedure } from '../telemetry/metrics.ts';
import { withTrace } from '../telemetry/trace-context.ts';
import type { Context } from './context.ts';
import { t } from './init.ts';
import { UploadMetaSchema } from './upload-body.ts';

/** Refuses input that PostgreSQL cannot store as sent (docs/decisions/0046-storable-input.md), before the procedure changes anything. */
async function assertStorableInput(getRawInput: () => Promise<unknown>): Promise<void> {
  const error = unstorableInputError(await getRawInput());
  if (error) throw error;
}

/** A failed call's outcome label: the domain error's code, else tRPC's (BAD_REQUEST for invalid input). */
function outcomeOf(error: unknown): string {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof DomainError) return cause.code;
  return error instanceof TRPCError ? error.code : 'INTERNAL_SERVER_ERROR';
}

/**
 * Runs a base procedure's first middleware (and so everything after it) in the caller's trace
 * context and times the call by procedure and outcome (`svc_trpc_procedure_duration_seconds`).
 * It wraps the middleware each base procedure has anyway: no tRPC layer of its own.
 */
async function observed<O extends { ctx: Context; path: string }, R>(opts: O, middleware: (opts: O) => Promise<R>): Promise<R> {
  const started = performance.now();
  let outcome = 'ok';
  try {
    const { requestId, traceparent } = opts.ctx;
    const result = await (requestId || traceparent ? withTrace({ requestId, traceparent }, () => middleware(opts)) : middleware(opts));
    const failed = result as { ok?: boolean; error?: unknown };
    if (failed.ok === false) outcome = outcomeOf(failed.error);
    return result;
  } catch (error) {
    outcome = outcomeOf(error);
    throw error;
  } finally {
    observeProcedure(opts.path, outcome, (performance.now() - started) / 1000);
  }
}

/** The only base procedures: authentication and tenant scoping cannot be forgotten on a new route. */
export const publicProcedure = t.procedure.use((opts) => observed(opts, ({ next }) => next()));

export const authedProcedure = t.procedure.use((opts) =>
  observed(opts, async ({ ctx, next, getRawInput }) => {
    if (!ctx.identity) throw new UnauthorizedError();
    await assertStorableInput(getRawInput);
    return next({ ctx: { identity: ctx.identity } });
  }),
);

/**
 * Authenticates and resolves the caller's tenant membership; `permission` must be granted there
 * unless omitted. One middleware rather than one on top of `authedProcedure`: every tRPC middleware
 * layer costs microseconds on each call.
 */
export const tenantProcedure = (permission?: Permission) =>
  t.procedure.use((opts) =>
    observed(opts, async ({ ctx, next, getRawInput }) => {
      if (!ctx.identity) throw new UnauthorizedError();
      const actor = await ctx.services.callers.resolveActor(ctx.identity, ctx.tenantHint);
      if (permission && !actor.permissions.has(permission)) throw new ForbiddenError(`missing permission ${permission}`);
      await assertStorableInput(getRawInput);
      return next({ ctx: { identity: ctx.identity, actor } });
    }),
  );

/** Resolves the calling user (provisioned just in time) without choosing a tenant: the caller's own profile. */
export const selfProcedure = authedProcedure.use(async ({ ctx, next }) => {
  const principal = await ctx.services.callers.resolveUser(ctx.identity);
  return next({ ctx: { principal } });
});

/**
 * `selfProcedure` for identity and platform routes, which reach beyond one tenant: a token issued
 * to an app that a tenant registered is refused there, as it acts only in that tenant.
 */
export const userProcedure = selfProcedure.use(({ ctx, next }) => {
  if (ctx.principal.appTenantId) throw new ForbiddenError(APP_TOKEN_ELSEWHERE);
  return next();
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
export const withUploadMeta = uploadMetaOf(UploadMetaSchema);

/** `withUploadMeta` for a procedure whose body is described by more than a file name and type. */
export function uploadMetaOf<T>(schema: z.ZodType<T>) {
  return t.middleware(({ ctx, next }) => {
    const parsed = schema.safeParse(ctx.uploadMeta);
    if (!parsed.success) throw new TRPCError({ code: 'BAD_REQUEST', cause: parsed.error });
    return next({ ctx: { uploadMeta: parsed.data } });
  });
}
