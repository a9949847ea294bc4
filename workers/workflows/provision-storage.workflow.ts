import { ApplicationFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import { STORAGE_BACKENDS, type ProvisionStorageRequest, type ProvisionStorageResult, type StorageBackend, type StorageChange } from '../../control-plane/storage/storage.schema.ts';
import type { Activities } from '../activities/index.ts';

const { beginStorageProvisioning, ensureStorageBackend, planStorageBackend, failStorageProvisioning } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 3, initialInterval: '1 second', nonRetryableErrorTypes: ['NotFoundError', 'ValidationError', 'StorageUnavailableError'] },
});

const messageOf = (error: unknown) => (error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error));

/**
 * Provisions a tenant's storage backends (`postgresql`, `documentdb`, `blob`, `search`, or `all`)
 * in that order, each by one idempotent activity that records the backend `ready`. A dry run only
 * lists what would change. Runs with workflow id `tenant-<tenantId>-storage`, started by the storage
 * routes or as a child of the tenant's provisioning workflow; it fails (non-retryable) when a
 * backend cannot be provisioned, after recording the reason on the backends not yet ready.
 */
export async function provisionStorage(request: ProvisionStorageRequest): Promise<ProvisionStorageResult> {
  const { tenantId, rebuildSearch } = request;
  const backends: StorageBackend[] = request.backend === 'all' ? [...STORAGE_BACKENDS] : [request.backend];
  const changes: StorageChange[] = [];
  if (request.dryRun) {
    for (const backend of backends) changes.push(...(await planStorageBackend({ tenantId, backend, rebuildSearch })));
    return { tenantId, backends, dryRun: true, changes };
  }
  let reached = 0;
  let begun = false;
  try {
    await beginStorageProvisioning({ tenantId, backends });
    begun = true;
    for (; reached < backends.length; reached++) {
      changes.push(...(await ensureStorageBackend({ tenantId, backend: backends[reached]!, rebuildSearch })));
    }
  } catch (error) {
    const failed = begun ? backends[reached] : undefined;
    const message = isCancellation(error) ? 'provisioning was cancelled' : messageOf(error);
    await CancellationScope.nonCancellable(() => failStorageProvisioning({ tenantId, backend: failed, pending: backends.slice(reached), error: message }));
    if (isCancellation(error)) throw error;
    throw ApplicationFailure.nonRetryable(`${failed ?? 'storage'} provisioning failed: ${message}`, 'StorageProvisioningFailed');
  }
  return { tenantId, backends, dryRun: false, changes };
}
