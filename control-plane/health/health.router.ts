import { z } from 'zod';
import { t } from '../trpc/init.ts';
import { publicProcedure } from '../trpc/procedures.ts';
import { HealthSchema } from './health.schema.ts';
import type { HealthService } from './health.service.ts';

declare module '../trpc/context.ts' {
  interface ApiServices {
    health: Pick<HealthService, 'check'>;
  }
}

export const healthRouter = t.router({
  check: publicProcedure
    .input(z.object({}).optional())
    .output(HealthSchema)
    .query(({ ctx }) => ctx.services.health.check()),
});
