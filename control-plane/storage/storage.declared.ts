import type { StorageBackends } from './storage-backends.ts';
import type { StorageBackend, StorageReadiness } from './storage.schema.ts';

export type StorageDeclared = ReturnType<typeof createStorageDeclared>;

/**
 * The storage of tenants that Kubernetes objects declare, for the operator: each backend's state,
 * and provisioning started without waiting (the operator follows the state instead).
 */
export function createStorageDeclared(deps: { backends: Pick<StorageBackends, 'readiness' | 'startStorageRun'> }) {
  const { readiness, startStorageRun } = deps.backends;

  return {
    /** Each backend's state, without the workflow run: the operator looks often, and Temporal need not answer each time. */
    readiness: (tenantId: string): Promise<StorageReadiness> => readiness(tenantId),

    /** Starts workflow `tenant-<id>-storage` for `backends` without waiting for it (a run under way is joined). */
    async startProvisioning(tenantId: string, backends: StorageBackend[]): Promise<void> {
      await startStorageRun({ tenantId, backend: 'all', backends, dryRun: false, rebuildSearch: false });
    },
  };
}
