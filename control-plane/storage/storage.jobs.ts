import type { Db } from '../db/client.ts';
import type { StorageBackends } from './storage-backends.ts';
import { findTenant, markProvisioning, recordFailed } from './storage.repo.ts';
import type { StorageBackend, StorageLocation } from './storage.schema.ts';

export type StorageJobs = ReturnType<typeof createStorageJobs>;

/** The steps of workflow `tenant-<id>-storage`, for its activities (workers/activities/storage.activities.ts). */
export function createStorageJobs(deps: { db: Db; backends: StorageBackends }) {
  const { db } = deps;
  const { drivers, requireTenant, rowsByBackend, reconcile } = deps.backends;

  return {
    /** Activity: marks the backends `provisioning` (those already `ready` stay so). */
    async beginProvisioning(request: { tenantId: string; backends: StorageBackend[] }): Promise<void> {
      await requireTenant(request.tenantId);
      const locations: Array<{ backend: StorageBackend; location: StorageLocation }> = [];
      for (const backend of request.backends) locations.push({ backend, location: await drivers[backend].location(request.tenantId) });
      await db.inTenant(request.tenantId, async (tx) => {
        for (const { backend, location } of locations) await markProvisioning(tx, backend, location);
      });
    },

    /**
     * Activity: ensures one backend for the tenant and records it `ready`; returns what changed.
     * Safe to retry. `signal` (the activity's cancellation) stops its statements in PostgreSQL.
     */
    ensureBackend: (request: { tenantId: string; backend: StorageBackend; rebuildSearch: boolean }, signal?: AbortSignal) =>
      reconcile(request.tenantId, request.backend, true, request.rebuildSearch, signal),

    /** Activity: what `ensureBackend` would change, changing nothing. */
    planBackend: (request: { tenantId: string; backend: StorageBackend; rebuildSearch: boolean }, signal?: AbortSignal) =>
      reconcile(request.tenantId, request.backend, false, request.rebuildSearch, signal),

    /**
     * Activity: records why provisioning stopped: `backend` failed with `error`, and the backends in
     * `pending` (never reached) are marked failed unless they were already `ready`.
     */
    async failProvisioning(request: { tenantId: string; backend?: StorageBackend; pending: StorageBackend[]; error: string }): Promise<void> {
      const tenant = await db.system((tx) => findTenant(tx, request.tenantId)).catch(() => undefined);
      if (!tenant) return;
      const rows = await rowsByBackend(request.tenantId);
      const failures: Array<[StorageBackend, string]> = request.backend ? [[request.backend, request.error]] : [];
      for (const backend of request.pending) {
        if (backend !== request.backend && rows.get(backend)?.status !== 'ready') failures.push([backend, `not provisioned: ${request.backend ? `${request.backend} failed first` : request.error}`]);
      }
      for (const [backend, error] of failures) {
        const location = await drivers[backend].location(request.tenantId);
        await db.inTenant(request.tenantId, (tx) => recordFailed(tx, backend, location, error));
      }
    },
  };
}
