import { z } from 'zod';

export const HealthSchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ database: z.enum(['ok', 'unreachable']) }),
});
export type Health = z.infer<typeof HealthSchema>;
