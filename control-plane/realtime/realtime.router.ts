import { t } from '../trpc/init.ts';
import { platformProcedure, publicProcedure, tenantProcedure } from '../trpc/procedures.ts';
import {
  AlertsInputSchema,
  AlertsSchema,
  NegotiateInputSchema,
  NegotiationSchema,
  RotatedSigningKeysSchema,
  RotateSigningKeysInputSchema,
  StreamInputSchema,
} from './realtime.schema.ts';
import type { RealtimeService } from './realtime.service.ts';

/** What these procedures call of the realtime service: the API's context holds these functions and no others (app/services.ts). */
export const REALTIME_API = ['alerts', 'negotiate', 'rotateSigningKeys', 'stream'] as const satisfies readonly (keyof RealtimeService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    realtime: Pick<RealtimeService, (typeof REALTIME_API)[number]>;
  }
}

export const realtimeRouter = t.router({
  negotiate: tenantProcedure('resources.read')
    .input(NegotiateInputSchema)
    .output(NegotiationSchema)
    .mutation(({ ctx, input }) => ctx.services.realtime.negotiate(ctx.actor, input)),
  /** Authenticated by the negotiated token it takes, not by the caller's: browsers' EventSource sends no header. */
  stream: publicProcedure.input(StreamInputSchema).subscription(({ ctx, input, signal }) => ctx.services.realtime.stream(input, signal)),
  alerts: tenantProcedure('resources.read')
    .input(AlertsInputSchema)
    .output(AlertsSchema)
    .query(({ ctx }) => ctx.services.realtime.alerts(ctx.actor)),
  rotateSigningKeys: platformProcedure('platform.tenants.manage')
    .input(RotateSigningKeysInputSchema)
    .output(RotatedSigningKeysSchema)
    .mutation(({ ctx, input }) => ctx.services.realtime.rotateSigningKeys(input)),
});
