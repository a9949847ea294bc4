import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { authedProcedure, publicProcedure } from '../trpc/procedures.ts';
import { CreateSessionInputSchema, SessionIdInputSchema, SessionTokensSchema } from './sessions.schema.ts';
import type { SessionsService } from './sessions.service.ts';

/** What these procedures call of the sessions service: the API's context holds these functions and no others (app/services.ts). */
export const SESSIONS_API = ['create', 'remove', 'resolve'] as const satisfies readonly (keyof SessionsService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    sessions: Pick<SessionsService, (typeof SESSIONS_API)[number]>;
  }
}

/** Browser sessions; possession of a session id is the credential, as it is for the cookie. */
export const sessionsRouter = t.router({
  create: authedProcedure
    .input(CreateSessionInputSchema)
    .output(z.object({ sessionId: z.string() }))
    .mutation(({ ctx, input }) => ctx.services.sessions.create(ctx.identity, input)),
  resolve: publicProcedure
    .input(SessionIdInputSchema)
    .output(SessionTokensSchema)
    .query(({ ctx, input }) => ctx.services.sessions.resolve(input.sessionId)),
  delete: publicProcedure
    .input(SessionIdInputSchema)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.sessions.remove(input.sessionId)),
});
