import type { Db } from '../db/client.ts';
import type { Health } from './health.schema.ts';

export type HealthService = ReturnType<typeof createHealthService>;

/** Liveness of the control plane's dependencies; never throws. */
export function createHealthService(deps: { db: Db }) {
  return {
    async check(): Promise<Health> {
      try {
        await deps.db.sql`select 1`;
        return { status: 'ok', checks: { database: 'ok' } };
      } catch {
        return { status: 'unavailable', checks: { database: 'unreachable' } };
      }
    },
  };
}
