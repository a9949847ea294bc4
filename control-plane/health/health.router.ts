import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { publicProcedure } from '../trpc/procedures.ts';
import { HealthSchema } from './health.schema.ts';
import type { HealthService } from './health.service.ts';

/** What these procedures call of the health service: the API's context holds these functions and no others (app/services.ts). */
export const HEALTH_API = ['check'] as const satisfies readonly (keyof HealthService)[];

declare module '../trpc/context.ts' {
  interface ApiServices {
    health: Pick<HealthService, (typeof HEALTH_API)[number]>;
  }
}

export const healthRouter = t.router({
  check: publicProcedure
    .input(z.object({}).optional())
    .output(HealthSchema)
    .query(({ ctx }) => ctx.services.health.check()),
});
