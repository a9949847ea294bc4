import { Elysia } from 'elysia';
import type { ControlPlane } from '../../control-plane/contracts.ts';

/** What `GET /health` and `GET /health/ready` answer with; 503 unless `status` is `ok`. */
async function controlPlaneHealth(controlPlane: ControlPlane) {
  return controlPlane
    .query({ identity: null }, 'health', 'check', {})
    .catch(() => ({ status: 'unavailable' as const, checks: { controlPlane: 'unreachable' } }));
}

/**
 * The edge's probes, outside the API bases (neither authenticated nor rate-limited):
 * - `GET /health` (the gateway's health, as `svc verify` reads it) and `GET /health/ready` (the
 *   readiness probe): 200 when the control plane and its database answer, else 503;
 * - `GET /health/live` (the liveness probe): 200 whenever the process answers at all, whatever
 *   the database does, so that a database outage takes pods out of service without restarting them.
 * A draining edge has stopped listening: probes then find nothing, and it is no longer ready.
 */
export function probeRoutes(controlPlane: ControlPlane) {
  const ready = async ({ set }: { set: { status?: number | string } }) => {
    const health = await controlPlaneHealth(controlPlane);
    if (health.status !== 'ok') set.status = 503;
    return health;
  };
  return new Elysia({ name: 'probes' })
    .get('/health', ready)
    .get('/health/ready', ready)
    .get('/health/live', () => ({ status: 'ok' as const }));
}
